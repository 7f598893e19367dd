"""Root URL configuration."""

from django.conf import settings
from django.contrib import admin
from django.contrib.staticfiles.urls import staticfiles_urlpatterns
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from croupier.views import ShoeCardView
from tablehub.views import front_door, health, javascript_catalog

urlpatterns = [
    path("", front_door, name="front-door"),
    path("admin/", admin.site.urls),
    path("health/", health, name="health"),
    path("jsi18n/<str:language>/", javascript_catalog, name="javascript-catalog"),
    path("", include("django_prometheus.urls")),  # /metrics (docs/operations.md, "Metrics")
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="api-redoc"),
    path("api/tables/<int:table_id>/shoe/cards/", ShoeCardView.as_view(), name="shoe-cards"),
    path("api/", include("tablehub.api.urls")),
    path("croupier/", include("croupier.urls")),
    path("", include("stations.urls")),
]

handler404 = "tablehub.views.not_found"

if settings.DEBUG:
    # Daphne serves no static files; in development let Django serve admin CSS/JS.
    urlpatterns += staticfiles_urlpatterns()
