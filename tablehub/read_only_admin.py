"""The admin page of a record nobody edits there (the event log, the ledger, the shoes, the
protection log, card alerts, install checks): it lists and shows, and nobody, superuser
included, adds, changes or deletes (issue 21, retention)."""

from django.contrib import admin


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
