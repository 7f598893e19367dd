"""App config for the payouts app."""

from django.apps import AppConfig


class PayoutsConfig(AppConfig):
    """Django app config for the payouts app."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "payouts"
    verbose_name = "Payouts"
