"""The reference player station page."""

from django.urls import path

from stations import views

urlpatterns = [
    path(
        "tables/<int:table_id>/stations/<slug:station_name>/",
        views.station_page,
        name="station-page",
    ),
]
