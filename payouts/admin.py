"""Admin for paytables (with their par sheets), the ledger and the soft meters (read only)."""

from __future__ import annotations

from django.contrib import admin
from django.utils.html import format_html, format_html_join
from simple_history.admin import SimpleHistoryAdmin

from payouts import meters
from payouts.models import LedgerEntry, Meters, Paytable, StationMeter, TableMeter
from payouts.rtp import special_sheet
from rounds.engine import RuleSet
from tablehub.read_only_admin import ReadOnlyAdmin

PARSHEET_DECKS = (6, 8)


@admin.register(Paytable)
class PaytableAdmin(SimpleHistoryAdmin):
    list_display = ("bet_code", "name", "is_default", "rtp_8_decks")
    list_filter = ("bet_code", "is_default")
    search_fields = ("name", "bet_code")
    readonly_fields = ("parsheet",)

    def has_delete_permission(self, request, obj=None) -> bool:
        return request.user.is_superuser

    def _sheet(self, obj: Paytable, decks: int):
        return special_sheet(obj.bet_code, obj.pays, RuleSet(decks=decks))

    @admin.display(description="RTP (8 decks)")
    def rtp_8_decks(self, obj: Paytable) -> str:
        try:
            return f"{self._sheet(obj, 8)['rtp']:.4%}"
        except Exception as exc:  # a paytable the engine refuses: say why
            return f"invalid: {exc}"

    @admin.display(description="par sheet")
    def parsheet(self, obj: Paytable):
        if obj.pk is None:
            return "saved paytables show their par sheet here"
        parts = []
        for decks in PARSHEET_DECKS:
            try:
                sheet = self._sheet(obj, decks)
            except Exception as exc:
                return f"invalid: {exc}"
            rows = format_html_join(
                "",
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                (
                    (c["code"], c["pays"], f"{c['probability']:.8f}", f"{c['return']:.6f}")
                    for c in sheet["combinations"]
                ),
            )
            parts.append(
                format_html(
                    "<p>{} decks: RTP {}, hit frequency {}</p><table><thead><tr><th>combination"
                    "</th><th>pays</th><th>probability</th><th>return</th></tr></thead>"
                    "<tbody>{}</tbody></table>",
                    decks,
                    f"{sheet['rtp']:.4%}",
                    f"{sheet['hit_frequency']:.4%}",
                    rows,
                )
            )
        return format_html_join("", "{}", ((p,) for p in parts))


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    list_display = ("pk", "station", "round", "kind", "amount", "key", "created_at")
    list_filter = ("kind",)
    list_select_related = ("station__table",)
    search_fields = ("key", "=round__id")
    raw_id_fields = ("station", "round")
    show_full_result_count = False


def _meter_column(name: str):
    """A list column of one meter: money with two places, games as counts."""

    @admin.display(description=name.replace("_", " "))
    def column(self, obj: Meters):
        return meters.shown(obj)[name]

    column.__name__ = name
    return column


class MetersAdmin(ReadOnlyAdmin):
    """The meters, as payouts/meters.py keeps them with the ledger: read, never changed here
    (floor managers and auditors: tablehub/migrations/0022_read_meters)."""

    meter_columns = (*meters.MONEY, *meters.GAMES)
    exclude = tuple(meters.COLUMNS)
    readonly_fields = meter_columns
    show_full_result_count = False


for _name in MetersAdmin.meter_columns:
    setattr(MetersAdmin, _name, _meter_column(_name))


@admin.register(StationMeter)
class StationMeterAdmin(MetersAdmin):
    list_display = ("station", "table", *MetersAdmin.meter_columns)
    list_filter = ("table",)
    list_select_related = ("station", "table")
    search_fields = ("station__name",)


@admin.register(TableMeter)
class TableMeterAdmin(MetersAdmin):
    list_display = ("table", *MetersAdmin.meter_columns)
    list_select_related = ("table",)
