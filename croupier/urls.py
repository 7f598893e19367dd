"""The croupier tablet's pages (login, tables, the tablet itself)."""

urlpatterns: list = []
