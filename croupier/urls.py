"""The croupier tablet's pages (login, tables, the tablet itself); included at /croupier/."""

from django.urls import path

from croupier import views

app_name = "croupier"

urlpatterns = [
    path("login/", views.TabletLoginView.as_view(), name="login"),
    path("logout/", views.TabletLogoutView.as_view(), name="logout"),
    path("", views.tables, name="tables"),
    path("tables/<int:table_id>/", views.tablet, name="tablet"),
]
