"""Admin for the croupier app: the supervisor alerts of card conservation, read only
(croupier/conservation.py)."""

from __future__ import annotations

from django.contrib import admin

from croupier.models import CardAlert
from tablehub.read_only_admin import ReadOnlyAdmin


@admin.register(CardAlert)
class CardAlertAdmin(ReadOnlyAdmin):
    list_display = ("pk", "table", "shoe", "round", "reader_seq", "code", "created_at")
    list_filter = ("table", "code")
    fields = ("table", "shoe", "round", "reader_seq", "code", "message", "created_at")
    readonly_fields = fields
