"""Admin for the croupier app, read only: the supervisor alerts of card conservation
(croupier/conservation.py) and the log of dealer changes (croupier/dealers.py)."""

from __future__ import annotations

from django.contrib import admin

from croupier.models import CardAlert, DealerChange
from tablehub.read_only_admin import ReadOnlyAdmin


@admin.register(CardAlert)
class CardAlertAdmin(ReadOnlyAdmin):
    list_display = ("pk", "table", "shoe", "round", "reader_seq", "code", "created_at")
    list_filter = ("table", "code")
    fields = ("table", "shoe", "round", "reader_seq", "code", "message", "created_at")
    readonly_fields = fields


@admin.register(DealerChange)
class DealerChangeAdmin(ReadOnlyAdmin):
    list_display = (
        "pk",
        "table",
        "at",
        "previous_name",
        "dealer_name",
        "how",
        "command",
        "mid_shoe",
    )
    list_filter = ("table", "mid_shoe", "how", "dealer")
    list_select_related = ("table",)
    fields = (
        "table",
        "shoe",
        "round",
        "previous",
        "previous_name",
        "dealer",
        "dealer_name",
        "how",
        "command",
        "mid_shoe",
        "at",
    )
    readonly_fields = fields
