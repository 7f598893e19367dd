"""Admin for jurisdictions, tables and their configuration versions.

A table's configuration is a form of its rules, limits, timers, chips and special bets
(each with a paytable). It is checked by tablehub/configuration.py, the same check the
API uses, and saving it never edits a version: it stores the next version, which the
table's next round takes up. Every change is in the audit history (django-simple-history).
"""

from __future__ import annotations

from dataclasses import fields as dataclass_fields
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from simple_history.admin import SimpleHistoryAdmin

from croupier.services import drawn_shown
from payouts.models import Paytable
from payouts.reports import reports_csv, table_report
from payouts.rtp import main_sheet, special_sheet, warm_main_sheet
from payouts.specials import BETS
from payouts.specials.defaults import default_paytable_rows as default_paytables
from rounds.engine import RuleSet
from rounds.engine.rules import AUTO_STAND, BLACKJACK_PAYS, DOUBLE_ON, TIMEOUT_ACTIONS
from tablehub.configuration import check_config, check_tables_under, save_version
from tablehub.models import (
    DealerReport,
    InstallCheck,
    Jurisdiction,
    Play,
    Report,
    Shoe,
    Stadium,
    Table,
    TableConfig,
)
from tablehub.program import check_lines
from tablehub.read_only_admin import ReadOnlyAdmin

# --- jurisdictions ------------------------------------------------------------------------


class JurisdictionForm(forms.ModelForm):
    approved_special_bets = forms.MultipleChoiceField(
        choices=[(code, code) for code in BETS],
        widget=forms.CheckboxSelectMultiple,
        required=False,
    )
    blackjack_pays = forms.MultipleChoiceField(
        choices=[(p, p) for p in BLACKJACK_PAYS], widget=forms.CheckboxSelectMultiple
    )
    special_bets_behind = forms.MultipleChoiceField(
        choices=[(code, code) for code in BETS],
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text="seat mode: the special bets a station may bet behind a seat",
    )

    class Meta:
        model = Jurisdiction
        fields = [
            "code",
            "name",
            "source",
            "approved_special_bets",
            "special_bets_behind",
            "blackjack_pays",
            "max_splits",
            "required_rules",
            "min_rtp",
            "let_it_play_cap",
            "max_decision_seconds",
            "hit_on_timeout_allowed",
            "disputes_allowed",
            "dispute_window_seconds",
            "stale_game_hours",
        ]

    def _post_clean(self) -> None:
        """The jurisdiction's own checks (``Jurisdiction.clean``, in ``full_clean``), then,
        once they pass, the configuration service's: no table's current configuration may
        break under the change (``check_tables_under``). (``_post_clean`` is Django's, but
        private: django-stubs leaves it out.)"""
        super()._post_clean()  # type: ignore[misc]
        try:
            self.instance.clean()  # passed? (its errors, if any, are on the form already)
        except ValidationError:
            return
        try:
            check_tables_under(self.instance)
        except ValidationError as exc:
            self.add_error(None, exc)


@admin.register(Jurisdiction)
class JurisdictionAdmin(SimpleHistoryAdmin):
    """Only superusers, or users given ``tablehub.change_jurisdiction`` on their own, may
    change a jurisdiction; floor managers and auditors read it."""

    form = JurisdictionForm
    list_display = (
        "code",
        "name",
        "max_splits",
        "max_decision_seconds",
        "min_rtp",
        "disputes_allowed",
    )
    search_fields = ("code", "name")
    fieldsets = (
        (None, {"fields": ("code", "name", "source")}),
        (
            "Game",
            {
                "fields": (
                    "approved_special_bets",
                    "special_bets_behind",
                    "blackjack_pays",
                    "max_splits",
                    "required_rules",
                    "min_rtp",
                    "let_it_play_cap",
                )
            },
        ),
        (
            "Timers and disputes",
            {
                "fields": (
                    "max_decision_seconds",
                    "hit_on_timeout_allowed",
                    "disputes_allowed",
                    "dispute_window_seconds",
                    "stale_game_hours",
                )
            },
        ),
        (
            "Player protection",
            {
                "fields": (
                    "max_stake_per_round",
                    "max_session_minutes",
                    "reality_check_minutes",
                    "idle_minutes",
                    "abandoned_hands",
                    "recall_games",
                )
            },
        ),
        ("Statistics per dealer", {"fields": ("dealer_z_threshold", "dealer_p_threshold")}),
    )


# --- tables -------------------------------------------------------------------------------


class ConfigInline(admin.TabularInline):
    model = TableConfig
    fields = ("version", "created_at", "created_by", "special_bet_codes")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True
    ordering = ("-version",)

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="special bets")
    def special_bet_codes(self, obj: TableConfig) -> str:
        return ", ".join(obj.special_bets) or "-"


# --- stadiums -------------------------------------------------------------------------------


class StadiumTableInline(admin.TabularInline):
    """The stadium's tables (a table joins a stadium on its own page, field "stadium")."""

    model = Table
    fields = ("name", "mode", "is_open")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Stadium)
class StadiumAdmin(admin.ModelAdmin):
    """Floor managers create stadiums; a table is put in one on the table's page, and a
    station on the station's (docs/operations.md, "Stadium")."""

    list_display = ("name", "table_count", "station_count")
    search_fields = ("name",)
    inlines = [StadiumTableInline]

    @admin.display(description="tables")
    def table_count(self, obj: Stadium) -> int:
        return obj.tables.count()

    @admin.display(description="stations")
    def station_count(self, obj: Stadium) -> int:
        return obj.stations.count()


@admin.register(Table)
class TableAdmin(SimpleHistoryAdmin):
    list_display = (
        "name",
        "jurisdiction",
        "mode",
        "is_open",
        "is_replay",
        "stadium",
        "config_version",
        "configure",
    )
    list_filter = ("jurisdiction", "mode", "is_open", "is_replay", "stadium")
    search_fields = ("name",)
    filter_horizontal = ("staff",)
    exclude = ("reader_key",)
    inlines = [ConfigInline]
    actions = ["report_last_day"]

    def get_readonly_fields(self, request, obj=None):
        # A replay table (play_scenario --live) is marked by the replay, never by hand.
        # Moving a table to another jurisdiction changes what it may be configured with.
        if obj is not None and not request.user.has_perm("tablehub.change_jurisdiction"):
            return ("jurisdiction", "is_replay")
        return ("is_replay",)

    @admin.display(description="configuration")
    def config_version(self, obj: Table) -> str:
        config = obj.current_config()
        return f"v{config.version}" if config else "-"

    @admin.display(description="")
    def configure(self, obj: Table):
        config = obj.current_config()
        if config is not None:
            url = reverse("admin:tablehub_tableconfig_change", args=[config.pk])
        else:
            url = reverse("admin:tablehub_tableconfig_add") + f"?table={obj.pk}"
        return format_html('<a href="{}">configure</a>', url)

    def has_view_reports_permission(self, request) -> bool:
        return request.user.has_perm("tablehub.view_reports")

    @admin.action(description="Report of the last 24 hours (CSV)", permissions=["view_reports"])
    def report_last_day(self, request, queryset):
        end = timezone.now()
        start = end - timedelta(hours=24)
        reports = [table_report(table, start, end) for table in queryset.order_by("name")]
        response = HttpResponse(reports_csv(reports), content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="report-{end:%Y%m%dT%H%M}.csv"'
        return response


# --- table configuration ------------------------------------------------------------------

RULE_CHOICES = {
    "blackjack_pays": list(BLACKJACK_PAYS),
    "double_on": list(DOUBLE_ON),
    "auto_stand": list(AUTO_STAND),
    "timeout_action": list(TIMEOUT_ACTIONS),
}
SPECIAL_WITHOUT_MAIN = [
    (0, "0: a special bet needs a main bet on its box"),
    (1, "1: allowed without a main bet"),
    (2, "2: allowed, stake at most the box's main stake"),
]
RULE_NAMES = [f.name for f in dataclass_fields(RuleSet)]
TIMER_NAMES = ("betting", "insurance", "decision", "bonus", "video_card")
LIMIT_FIELDS = (
    ("main", "main_min", "main_max"),
    ("special", "special_min", "special_max"),
    ("let_it_play", "let_it_play_min", "let_it_play_max"),
)
# A special bet's own limits (empty: the special limits apply to it).
BET_LIMIT_FIELDS = tuple((code, f"limit_{code}_min", f"limit_{code}_max") for code in BETS)


def _rule_field(f) -> forms.Field:
    name, kind = f.name, str(f.type)
    if kind == "bool":
        return forms.BooleanField(required=False, label=name)
    if name in RULE_CHOICES:
        return forms.ChoiceField(choices=[(c, c) for c in RULE_CHOICES[name]], label=name)
    if name == "special_without_main":
        return forms.TypedChoiceField(choices=SPECIAL_WITHOUT_MAIN, coerce=int, label=name)
    if name == "charlie":
        return forms.IntegerField(required=False, label=name, help_text="empty: no charlie")
    return forms.IntegerField(label=name)


def _declared_fields() -> dict[str, forms.Field]:
    out: dict[str, forms.Field] = {}
    for f in dataclass_fields(RuleSet):
        out[f"rule_{f.name}"] = _rule_field(f)
    for kind, low, high in LIMIT_FIELDS + BET_LIMIT_FIELDS:
        required = kind == "main"
        out[low] = forms.DecimalField(required=required, decimal_places=2, label=f"{kind} min")
        out[high] = forms.DecimalField(required=required, decimal_places=2, label=f"{kind} max")
    for name in TIMER_NAMES:
        out[f"timer_{name}"] = forms.DecimalField(
            required=False, decimal_places=1, label=f"{name} (s)"
        )
    out["chips_list"] = forms.CharField(
        label="chips", help_text="denominations, comma-separated (at most 8)"
    )
    out["win_nice"] = forms.DecimalField(label="nice win", help_text="return / stakes")
    out["win_big"] = forms.DecimalField(label="big win", help_text="return / stakes")
    for code in BETS:
        out[f"special_{code}"] = forms.ChoiceField(required=False, label=code)
    out["play"] = forms.ChoiceField(
        choices=Play.choices,
        label="play",
        help_text="seat mode: 1 to 7 seats (the table's boxes), each with one seated player",
    )
    out["behind_cap"] = forms.DecimalField(
        required=False,
        decimal_places=2,
        label="cap behind a seat",
        help_text="seat mode: the most staked behind one seat, all stations together",
    )
    return out


def paytable_options(code: str, current: Any = None) -> list[tuple[str, str, Any]]:
    """(key, label, pays) of every paytable a floor manager may pick for ``code``: the
    stored Paytable rows, the shipped default, and the one configured now."""
    options: list[tuple[str, str, Any]] = []
    for row in Paytable.objects.filter(bet_code=code).order_by("name"):
        options.append((f"db:{row.pk}", row.name, row.pays))
    default = default_paytables().get(code)
    if default is not None and all(default["pays"] != pays for *_, pays in options):
        options.append(("default", f"{default['name']} (default)", default["pays"]))
    if current is not None and all(current != pays for *_, pays in options):
        options.append(("current", "as configured now", current))
    return options


def _pays_text(pays: Any) -> str:
    return ", ".join(f"{combo} {value}" for combo, value in pays.items())


class BaseConfigForm(forms.ModelForm):
    class Meta:
        model = TableConfig
        fields = ["table"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        base = self._base_config()
        data = base.as_data() if base is not None else None
        rules = RuleSet.from_dict((data or {}).get("rules") or {}).to_dict()
        for name in RULE_NAMES:
            self.fields[f"rule_{name}"].initial = rules[name]
        limits = (data or {}).get("limits") or {"main": ["1", "100"]}
        for kind, low, high in LIMIT_FIELDS + BET_LIMIT_FIELDS:
            if kind in limits:
                self.fields[low].initial, self.fields[high].initial = limits[kind]
        timers = (data or {}).get("timers") or {"betting": 15, "decision": 15}
        for name in TIMER_NAMES:
            self.fields[f"timer_{name}"].initial = timers.get(name)
        chips = (data or {}).get("chips") or ["1", "5", "25", "100", "500"]
        self.fields["chips_list"].initial = ", ".join(str(c) for c in chips)
        thresholds = (data or {}).get("win_thresholds") or {"nice": "3", "big": "10"}
        self.fields["win_nice"].initial = thresholds.get("nice")
        self.fields["win_big"].initial = thresholds.get("big")
        if "play" in self.fields:  # not when an auditor reads the stored fields instead
            self.fields["play"].initial = (data or {}).get("play") or Play.COMMON_DRAW
            self.fields["behind_cap"].initial = (data or {}).get("behind_cap")
        specials = (data or {}).get("special_bets") or {}
        self.options: dict[str, dict[str, Any]] = {}
        for code in BETS:
            options = paytable_options(code, specials.get(code))
            self.options[code] = {key: pays for key, _, pays in options}
            field = self.fields[f"special_{code}"]
            assert isinstance(field, forms.ChoiceField)  # made by _declared_fields
            field.choices = [("", "not offered")] + [
                (key, f"{label}: {_pays_text(pays)}") for key, label, pays in options
            ]
            if code in specials:
                field.initial = next(k for k, _, p in options if p == specials[code])

    def _base_config(self) -> TableConfig | None:
        """The version this form starts from: the one being changed, or the table's current."""
        if self.instance.pk is not None:
            return self.instance
        table_id = str(self.initial.get("table") or self.data.get("table"))
        digits = table_id.isascii() and table_id.isdigit()
        table = Table.objects.filter(pk=int(table_id)).first() if digits else None
        return table.current_config() if table is not None else None

    def configuration(self) -> dict[str, Any]:
        """The form's values as a configuration (check_config's shape)."""
        data = self.cleaned_data
        rules = {name: data.get(f"rule_{name}") for name in RULE_NAMES}
        limits = {}
        for kind, low, high in LIMIT_FIELDS + BET_LIMIT_FIELDS:
            if data.get(low) is not None or data.get(high) is not None:
                limits[kind] = [_text(data.get(low)), _text(data.get(high))]
        timers = {}
        for name in TIMER_NAMES:
            value = data.get(f"timer_{name}")
            if value is not None:
                timers[name] = int(value) if value == int(value) else float(value)
        chips = [c.strip() for c in (data.get("chips_list") or "").split(",") if c.strip()]
        specials = {}
        for code in BETS:
            key = data.get(f"special_{code}")
            if key:
                specials[code] = self.options[code][key]
        return {
            "rules": rules,
            "limits": limits,
            "timers": timers,
            "special_bets": specials,
            "chips": chips,
            "win_thresholds": {
                "nice": _text(data.get("win_nice")),
                "big": _text(data.get("win_big")),
            },
            "play": data.get("play") or Play.COMMON_DRAW,
            "behind_cap": _text(data.get("behind_cap")),
        }

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data  # what ModelForm.clean returns
        if self.errors:
            return cleaned
        table = cleaned.get("table") or (self.instance.table if self.instance.pk else None)
        if table is None:
            return cleaned
        try:
            self.checked = check_config(table, self.configuration())
        except ValidationError as exc:
            for part, problems in exc.message_dict.items():
                for problem in problems:
                    self.add_error(None, f"{part.replace('_', ' ')}: {problem}")
        return cleaned

    def _post_clean(self) -> None:
        # The configuration was checked in clean() by check_config, the check the API's
        # save_version runs too; the version is given by save_version.
        pass


def config_changes(config: TableConfig) -> list[tuple[str, str, str]] | None:
    """(setting, before, after) for each setting that differs from the previous version;
    None for a table's first version."""
    previous = config.table.configs.filter(version__lt=config.version).order_by("-version")
    before = previous.first()
    if before is None:
        return None
    rows = []
    old, new = before.as_data(), config.as_data()
    old["rules"] = RuleSet.from_dict(old["rules"] or {}).to_dict()
    new["rules"] = RuleSet.from_dict(new["rules"] or {}).to_dict()
    for part in old:
        a, b = old[part] or {}, new[part] or {}
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b)):
                if a.get(key) != b.get(key):
                    rows.append((f"{part}.{key}", _show(a.get(key)), _show(b.get(key))))
        elif a != b:
            rows.append((part, _show(a), _show(b)))
    return rows


def _show(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, dict):
        return _pays_text(value)
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _text(value: Decimal | None) -> str | None:
    return None if value is None else format(value.normalize(), "f")


TableConfigForm = type("TableConfigForm", (BaseConfigForm,), _declared_fields())


def _fieldsets(add: bool) -> list:
    head = ["table"] if add else ["table", "version", "created_at", "created_by"]
    sets = [
        (None, {"fields": head}),
        ("Play", {"fields": ["play", "behind_cap"]}),
        ("Rules", {"fields": [f"rule_{name}" for name in RULE_NAMES]}),
        ("Limits", {"fields": [name for _, *names in LIMIT_FIELDS for name in names]}),
        (
            "Limits of one special bet (empty: the special limits)",
            {
                "fields": [name for _, *names in BET_LIMIT_FIELDS for name in names],
                "classes": ["collapse"],
            },
        ),
        ("Timers (seconds)", {"fields": [f"timer_{name}" for name in TIMER_NAMES]}),
        ("Chips and wins", {"fields": ["chips_list", "win_nice", "win_big"]}),
        ("Special bets and their paytables", {"fields": [f"special_{code}" for code in BETS]}),
    ]
    if not add:
        sets.insert(1, ("Return to player", {"fields": ["paytables_rtp", "main_game_rtp"]}))
        sets.insert(1, ("Changed from the previous version", {"fields": ["changes"]}))
    return sets


READ_ONLY_FIELDSETS = [
    (None, {"fields": ["table", "version", "created_at", "created_by", "rounds_played"]}),
    ("Changed from the previous version", {"fields": ["changes"]}),
    ("Return to player", {"fields": ["paytables_rtp", "main_game_rtp"]}),
    (
        "Configuration",
        {
            "fields": [
                "play",
                "behind_cap",
                "rules",
                "limits",
                "timers",
                "chips",
                "win_thresholds",
                "special_bets",
            ]
        },
    ),
]


@admin.register(TableConfig)
class TableConfigAdmin(SimpleHistoryAdmin):
    """Saving a change stores a new version (the next round takes it up); a version a round
    used is never edited."""

    form = TableConfigForm
    list_display = ("__str__", "table", "version", "created_at", "created_by", "current")
    list_filter = ("table",)
    ordering = ("table", "-version")

    def get_fieldsets(self, request, obj=None):
        if obj is not None and not self.has_change_permission(request, obj):
            return READ_ONLY_FIELDSETS
        return _fieldsets(add=obj is None)

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ()
        if not self.has_change_permission(request, obj):
            return [f for _, opts in READ_ONLY_FIELDSETS for f in opts["fields"]]
        return (
            "table",
            "version",
            "created_at",
            "created_by",
            "changes",
            "paytables_rtp",
            "main_game_rtp",
        )

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # rounds keep the version they were played under

    @admin.display(boolean=True)
    def current(self, obj: TableConfig) -> bool:
        current = obj.table.current_config()
        assert current is not None  # obj is one of the table's configurations
        return current.pk == obj.pk

    @admin.display(description="rounds played")
    def rounds_played(self, obj: TableConfig) -> int:
        return obj.round_set.count()

    @admin.display(description="before → after")
    def changes(self, obj: TableConfig):
        rows = config_changes(obj)
        if rows is None:
            return "the first version"
        if not rows:
            return "nothing"
        body = format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td></tr>", rows)
        return format_html(
            "<table><thead><tr><th>setting</th><th>before (v{})</th><th>after</th></tr>"
            "</thead><tbody>{}</tbody></table>",
            obj.version - 1,
            body,
        )

    @admin.display(description="special bets: return to player (par sheet)")
    def paytables_rtp(self, obj: TableConfig):
        if not obj.special_bets:
            return "no special bets"
        rules = obj.ruleset()
        rows = []
        for code, pays in obj.special_bets.items():
            try:
                sheet = special_sheet(code, pays, rules)
            except Exception as exc:  # a stored paytable the engine refuses: say so
                rows.append((code, _pays_text(pays), f"invalid: {exc}", ""))
                continue
            rows.append(
                (
                    code,
                    _pays_text(pays),
                    f"{sheet['rtp']:.4%}",
                    f"{sheet['hit_frequency']:.4%}",
                )
            )
        body = format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", rows)
        return format_html(
            "<table><thead><tr><th>bet</th><th>paytable (N to 1)</th><th>RTP</th>"
            "<th>hit frequency</th></tr></thead><tbody>{}</tbody></table>",
            body,
        )

    @admin.display(description="main game: return to player (basic strategy)")
    def main_game_rtp(self, obj: TableConfig):
        rules = obj.ruleset()
        sheet = main_sheet(rules, compute=False)
        if sheet is None:
            warm_main_sheet(rules)
            return "being computed (a few seconds for a new rule set): reload the page"
        return f"{sheet['rtp']:.4%} (house edge {sheet['house_edge']:.4%})"

    def save_model(self, request, obj, form, change) -> None:
        table = obj.table if change else form.cleaned_data["table"]
        config, created = save_version(table, form.checked, request.user)
        request._config_created = created
        obj.pk, obj.version, obj.table = config.pk, config.version, config.table
        obj.created_at, obj.created_by = config.created_at, config.created_by

    def save_related(self, request, form, formsets, change) -> None:
        pass  # the version stored by save_model has no related rows to save

    def log_change(self, request, obj, message):
        if getattr(request, "_config_created", True):
            return super().log_change(request, obj, message)
        return None

    def response_change(self, request, obj):
        return self._saved(request, obj) or super().response_change(request, obj)

    def response_add(self, request, obj, post_url_continue=None):
        return self._saved(request, obj) or super().response_add(request, obj, post_url_continue)

    def _saved(self, request, obj):
        if getattr(request, "_config_created", False):
            text = (
                f"Saved {obj.table} configuration version {obj.version}: "
                "it applies from the next round."
            )
            level = messages.SUCCESS
        else:
            text = f"Nothing changed: {obj.table} keeps version {obj.version}."
            level = messages.INFO
        self.message_user(request, text, level)
        return HttpResponseRedirect(reverse("admin:tablehub_tableconfig_change", args=[obj.pk]))


@admin.register(Shoe)
class ShoeAdmin(ReadOnlyAdmin):
    list_display = ("__str__", "table", "decks", "started_at", "closed_at", "cards_drawn")
    list_filter = ("table",)
    # The virtual shoe's order is never shown, and the counts of the cards drawn leave out
    # the hole card while it is face down (croupier.services.drawn_shown).
    fields = (
        "table",
        "decks",
        "started_at",
        "closed_at",
        "cards_drawn",
        "reader_seq",
        "counts",
        "reconciled",
        "virtual_shuffles",
    )
    readonly_fields = fields

    def lookup_allowed(self, lookup, value, request=None) -> bool:
        # ?drawn__7C=1 or ?virtual_order__cards__0=7C would find a card not yet seen, and
        # ?shuffles__server_seed__startswith=a a seed not yet revealed
        hidden = ("drawn", "virtual_order", "shuffles")
        return lookup.split("__")[0] not in hidden and super().lookup_allowed(
            lookup, value, request
        )

    @admin.display(description="virtual shuffles")
    def virtual_shuffles(self, obj: Shoe) -> str:
        # The provably fair virtual shoe (tablehub/fair_shoe.py): each commitment; the server
        # seed only once revealed (the order, from the API's game recall or verify_shoe).
        rows = [
            (
                shuffle.pk,
                shuffle.commitment,
                len(shuffle.dealt),
                f"revealed {shuffle.revealed_at:%Y-%m-%d %H:%M:%S}, server seed "
                f"{shuffle.server_seed}"
                if shuffle.revealed_at is not None
                else "not revealed: its seed and order stay secret until it ends",
            )
            for shuffle in obj.shuffles.order_by("pk")
        ]
        if not rows:
            return "- (none: a card reader's shoe, or not shuffled yet)"
        return format_html_join("", "<p>shuffle {}: commitment {}, {} card(s) dealt; {}</p>", rows)

    @admin.display(description="drawn")
    def counts(self, obj: Shoe) -> str:
        shown = drawn_shown(obj)
        return ", ".join(f"{card}: {n}" for card, n in shown.items()) or "-"

    @admin.display(description="reconciliation")
    def reconciled(self, obj: Shoe) -> str:
        # Stored when the shoe ended (croupier/conservation.py): no card is face down then.
        if obj.reconciliation is None:
            return "- (the shoe has not ended)"
        r = obj.reconciliation
        verdict = "conserved" if r["conserved"] else "NOT conserved"
        return (
            f"{verdict}: {r['cards_dealt']} dealt, {r['cards_discarded']} discarded, "
            f"reader count {r['reader_count']}, over the decks: {', '.join(r['over']) or 'none'}, "
            f"supervisor alerts: {r['alerts']}"
        )


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    list_display = ("__str__", "status", "requested_by", "created_at", "finished_at")
    list_filter = ("table", "status")
    readonly_fields = ("table", "start", "end", "requested_by", "status", "result", "error")

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(InstallCheck)
class InstallCheckAdmin(ReadOnlyAdmin):
    """Program authentication's results, newest first (tablehub/program.py): read only."""

    list_display = ("checked_at", "ok", "files", "manifest_sha256", "found")
    list_filter = ("ok",)
    fields = (
        "checked_at",
        "ok",
        "files",
        "manifest_sha256",
        "changed",
        "missing",
        "extra",
        "error",
    )
    readonly_fields = fields

    @admin.display(description="found")
    def found(self, obj: InstallCheck) -> str:
        return "; ".join(check_lines(obj)) or "every file verifies"


@admin.register(DealerReport)
class DealerReportAdmin(ReadOnlyAdmin):
    """The statistics per dealer and shift that ``manage.py dealer_report`` kept
    (payouts/dealer_stats.py): read only, outliers first to find (filter and column)."""

    list_display = (
        "start",
        "end",
        "shift",
        "table",
        "dealer",
        "hands",
        "bust_rate",
        "dealer_blackjacks",
        "chi_square",
        "p_value",
        "hold_z",
        "outlier",
        "flag_list",
    )
    list_filter = ("outlier", "shift", "table", "dealer")
    list_select_related = ("table", "dealer")
    date_hierarchy = "start"
    fields = (
        "dealer",
        "table",
        "shift",
        "start",
        "end",
        "hands",
        "dealer_busts",
        "dealer_blackjacks",
        "chi_square",
        "p_value",
        "hold_z",
        "outlier",
        "flags",
        "result",
        "created_at",
    )
    readonly_fields = fields

    @admin.display(description="bust rate")
    def bust_rate(self, obj: DealerReport) -> str:
        return f"{100 * obj.dealer_busts / obj.hands:.2f} %" if obj.hands else "-"

    @admin.display(description="beyond the thresholds")
    def flag_list(self, obj: DealerReport) -> str:
        return ", ".join(obj.flags) or "-"
