"""The Django project and the table itself.

Holds the settings, ASGI/WSGI entry points, URL and websocket routing and the
Celery app, plus the table's own models (Jurisdiction, Table, TableConfig,
Shoe). The Celery app is loaded here so that ``@shared_task`` uses it.
"""

from .celery import app as celery_app

__all__ = ("celery_app",)
