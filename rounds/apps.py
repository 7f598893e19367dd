"""App config for the rounds app."""

from django.apps import AppConfig


class RoundsConfig(AppConfig):
    """Django app config for the rounds app."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "rounds"
    verbose_name = "Rounds"

    def ready(self) -> None:
        # Local: these import models, which the app registry loads before ready().
        from croupier import video
        from rounds import tasks, timers, writer
        from tablehub import fanout

        timers.register("expire", writer.expire, tasks.expire_step)
        timers.register("video_card", video.deal_video_card, tasks.deal_video_card)
        # Every server process with sockets at the table gets a round's engine ready when
        # its bets close, wherever they closed (a Celery worker's timer in production).
        fanout.on_round_ready(writer.load_engine)
