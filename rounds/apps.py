"""App config for the rounds app."""

from django.apps import AppConfig


class RoundsConfig(AppConfig):
    """Django app config for the rounds app."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "rounds"
    verbose_name = "Rounds"
