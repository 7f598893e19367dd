"""The reference player station page."""

urlpatterns: list = []
