"""App config for the croupier app."""

from django.apps import AppConfig


class CroupierConfig(AppConfig):
    """Django app config for the croupier app."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "croupier"
    verbose_name = "Croupier"

    def ready(self) -> None:
        # Local: it imports models, which the app registry loads before ready().
        from django.db.models.signals import post_save

        from croupier import conservation, video
        from rounds.models import Round

        post_save.connect(video.round_opened, sender=Round, dispatch_uid="video_round_opened")
        # A closed table's last round ended: its shoe reconciled (card conservation).
        post_save.connect(
            conservation.round_ended, sender=Round, dispatch_uid="conservation_round_ended"
        )
