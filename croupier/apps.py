"""App config for the croupier app."""

from django.apps import AppConfig


class CroupierConfig(AppConfig):
    """Django app config for the croupier app."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "croupier"
    verbose_name = "Croupier"

    def ready(self) -> None:
        # Local: the video dealer imports models, which the app registry loads first.
        from croupier import video
        from rounds import timers

        timers.register("video_card", video.deal_video_card)
