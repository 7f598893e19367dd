"""Admin for the croupier app: the supervisor alerts of card conservation, read only
(croupier/conservation.py)."""

from __future__ import annotations

from django.contrib import admin

from croupier.models import CardAlert


@admin.register(CardAlert)
class CardAlertAdmin(admin.ModelAdmin):
    list_display = ("pk", "table", "shoe", "round", "reader_seq", "code", "created_at")
    list_filter = ("table", "code")
    fields = ("table", "shoe", "round", "reader_seq", "code", "message", "created_at")
    readonly_fields = fields

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
