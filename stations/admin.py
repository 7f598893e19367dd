"""Admin for player stations (with their audit history), player sessions and protection
events (read only), and the seats of seat-mode tables (freed by a floor manager)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from simple_history.admin import SimpleHistoryAdmin

from payouts import ledger
from rounds.engine import EngineError
from stations import seats
from stations.models import PlayerSession, ProtectionEvent, Station, TableSeat
from tablehub.read_only_admin import ReadOnlyAdmin


class StationForm(forms.ModelForm):
    new_credential = forms.CharField(
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="set the station device's credential (stored hashed, never shown again)",
    )

    class Meta:
        model = Station
        fields = ("table", "stadium", "name", "is_active", "language")

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data  # what ModelForm.clean returns
        if self.instance.pk is None and not cleaned.get("new_credential"):
            self.add_error("new_credential", "a new station needs a credential")
        return cleaned

    def save(self, commit=True):
        station = super().save(commit=False)
        if self.cleaned_data.get("new_credential"):
            station.set_credential(self.cleaned_data["new_credential"])
        if commit:
            station.save()
        return station


@admin.register(Station)
class StationAdmin(SimpleHistoryAdmin):
    form = StationForm
    list_display = ("name", "table", "stadium", "is_active", "language", "credits", "rounds")
    list_filter = ("table", "stadium", "is_active")
    search_fields = ("name",)
    readonly_fields = ("credits", "rounds")

    @admin.display(description="credits")
    def credits(self, obj: Station) -> str:
        return f"{ledger.balance(obj):.2f}" if obj.pk else "-"

    @admin.display(description="history")
    def rounds(self, obj: Station):
        if obj.pk is None:
            return "-"
        url = reverse("api-station-rounds", args=[obj.pk])
        return format_html('<a href="{}">rounds</a>', url)


class LockedFilter(admin.SimpleListFilter):
    """The open sessions whose betting is locked for inactivity (credits kept)."""

    title = "locked for inactivity"
    parameter_name = "locked"

    def lookups(self, request, model_admin):
        return [("yes", "locked now")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(closed_at__isnull=True, locked_at__isnull=False)
        return queryset


@admin.register(PlayerSession)
class PlayerSessionAdmin(ReadOnlyAdmin):
    list_display = (
        "station",
        "opened_at",
        "closed_at",
        "locked_at",
        "loss_limit",
        "stake_limit",
        "time_limit_minutes",
    )
    list_filter = (LockedFilter, "station__table")


@admin.register(ProtectionEvent)
class ProtectionEventAdmin(ReadOnlyAdmin):
    """The player-protection log (stations/protection.py), for the audit: read only."""

    list_display = ("at", "station", "kind", "detail")
    list_filter = ("kind", "station__table")
    date_hierarchy = "at"


@admin.register(TableSeat)
class TableSeatAdmin(ReadOnlyAdmin):
    """Who sits where at the seat-mode tables. A floor manager frees a seat whose player went
    away (``Free the selected seats``): between rounds at once; in the middle of a round the
    table answers for the seat from then on (stations/seats.py, ``leave_seat``)."""

    list_display = ("table", "box", "station", "taken_at")
    list_filter = ("table",)
    actions = ["free_seats"]

    @admin.action(description="Free the selected seats", permissions=["free"])
    def free_seats(self, request: HttpRequest, queryset: QuerySet[TableSeat]) -> None:
        for seat in queryset.select_related("station", "table"):
            try:
                seats.leave_seat(seat.station)
            except EngineError as refusal:
                self.message_user(request, f"{seat}: {refusal.reason}", messages.ERROR)
            else:
                self.message_user(request, f"{seat}: freed", messages.SUCCESS)

    def has_free_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("stations.delete_tableseat")
