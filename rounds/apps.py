"""App config for the rounds app."""

from django.apps import AppConfig


class RoundsConfig(AppConfig):
    """Django app config for the rounds app."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "rounds"
    verbose_name = "Rounds"

    def ready(self) -> None:
        # Local: the writer imports models, which the app registry loads first.
        from rounds import timers, writer

        timers.register("expire", writer.expire)
