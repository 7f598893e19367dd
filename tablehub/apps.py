"""App config for the table itself (Jurisdiction, Table, TableConfig, Shoe)."""

from django.apps import AppConfig

from tablehub import lookups


class TablehubConfig(AppConfig):
    """The table: jurisdictions, tables, their versioned configuration and shoes."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "tablehub"
    verbose_name = "Table"

    def ready(self) -> None:
        lookups.register()  # ``__among`` (tablehub/lookups.py)
        # The signal handlers: closing a socket whose session ended; a lockout of the API's
        # logins answered 429; a round's end revealing its virtual shuffle.
        from tablehub import auth, fair_shoe, session_guard  # noqa: F401
