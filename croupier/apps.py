"""App config for the croupier app."""

from django.apps import AppConfig


class CroupierConfig(AppConfig):
    """Django app config for the croupier app."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "croupier"
    verbose_name = "Croupier"
