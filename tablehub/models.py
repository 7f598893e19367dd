"""The table itself: jurisdictions, stadiums, tables, their versioned configuration and shoes.

A stadium groups tables (any mix of modes and dealers) whose stations may move among them
between rounds (stations/lobby.py).

A TableConfig is never edited once a round has used it: a change is a new
version, and every round keeps the exact version it started with.
"""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from simple_history import register
from simple_history.models import HistoricalRecords

from payouts.models import Paytable
from payouts.specials import BETS, Paytables, parse_paytables
from rounds.engine import RuleSet
from rounds.engine.rules import BLACKJACK_PAYS
from stations.models import Station
from tablehub.tokens import check_token, hash_token

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser


def all_bet_codes() -> list[str]:
    return list(BETS)


def all_blackjack_pays() -> list[str]:
    return list(BLACKJACK_PAYS)


class JurisdictionManager(models.Manager["Jurisdiction"]):
    def get_by_natural_key(self, code: str) -> Jurisdiction:
        return self.get(code=code)


class Jurisdiction(models.Model):
    """What a regulator allows a table to be configured with (docs/operations.md,
    "Jurisdictions"); every table configuration is checked against it
    (tablehub/configuration.py), and so is a change of it against the tables' current
    configurations (``check_tables_under``, run by the jurisdiction's admin form). The
    defaults allow everything the engine can do, except hitting on a timeout; a real
    jurisdiction narrows them and says where each value comes from in ``source``."""

    code = models.SlugField(unique=True)
    name = models.CharField(max_length=120)
    max_decision_seconds = models.PositiveSmallIntegerField(
        default=25, help_text="the longest timer (betting, insurance, decision, bonus), seconds"
    )
    stale_game_hours = models.PositiveIntegerField(
        default=24, help_text="a game in progress longer than this is cancelled and refunded"
    )
    approved_special_bets = models.JSONField(
        default=all_bet_codes, blank=True, help_text="special bet codes a table may offer"
    )
    special_bets_behind = models.JSONField(
        default=list,
        blank=True,
        help_text="seat mode: the special bets a station may bet behind a seat (a main bet "
        "behind is always allowed)",
    )
    blackjack_pays = models.JSONField(
        default=all_blackjack_pays, help_text='blackjack payouts allowed, e.g. ["3:2", "6:5"]'
    )
    max_splits = models.PositiveSmallIntegerField(
        default=3,
        validators=[MaxValueValidator(7)],
        help_text="most splits of one box (3 splits make 4 hands)",
    )
    let_it_play_cap = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        null=True,
        blank=True,
        help_text="the highest Let It Play bet a table may allow; empty: no cap of its own",
    )
    hit_on_timeout_allowed = models.BooleanField(
        default=False, help_text='a table may hit a soft hand on a timeout ("hit_soft")'
    )
    disputes_allowed = models.BooleanField(default=False)
    dispute_window_seconds = models.PositiveIntegerField(
        default=0, help_text="how long after a round ends its result may still be disputed"
    )
    min_rtp = models.DecimalField(
        max_digits=6,
        decimal_places=4,
        null=True,
        blank=True,
        validators=[MinValueValidator(0), MaxValueValidator(1)],
        help_text="the lowest return to player of any special bet's paytable, as a fraction "
        "(0.9518 = 95.18 %); empty: no floor",
    )
    required_rules = models.JSONField(
        default=dict,
        blank=True,
        help_text='rules every table must have, e.g. {"decks": 8, "dealer_hits_soft_17": false}',
    )
    max_stake_per_round = models.DecimalField(
        max_digits=14,
        decimal_places=2,
        null=True,
        blank=True,
        help_text="player protection: the most a station may stake in one round, whatever "
        "the player set; empty: off",
    )
    max_session_minutes = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="player protection: the longest session (first cash-in to cash-out) in "
        "which a station may bet, whatever the player set; empty: off",
    )
    reality_check_minutes = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="player protection: a reality check after each such interval of a session, "
        "shown between rounds; empty: off",
    )
    recall_games = models.PositiveSmallIntegerField(
        default=10,
        validators=[MinValueValidator(10), MaxValueValidator(100)],
        help_text="how many of its last games a station recalls (at least 10)",
    )
    abandoned_hands = models.CharField(
        max_length=16,
        choices=[
            ("timeout", "the table's timeout action"),
            ("basic_strategy", "the basic strategy of the table's rules"),
        ],
        default="timeout",
        help_text="player protection: what a station's unanswered play decision gets (basic "
        "strategy: the main game's par-sheet chart; recall shows such steps as automatic)",
    )
    tips_allowed = models.BooleanField(
        default=False,
        help_text="a station may tip the dealer from its credits (to the table's tip account)",
    )
    idle_minutes = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="player protection: a station with credits and no bet for this long asks "
        "whether the player is there, then locks betting (credits stay); empty: off",
    )
    source = models.TextField(
        blank=True, help_text="where each value comes from (document and line)"
    )
    install_check_required = models.BooleanField(
        default=False,
        help_text="tables open only while the last program authentication (verify_install) "
        "verified",
    )
    dealer_z_threshold = models.DecimalField(
        max_digits=4,
        decimal_places=2,
        default=Decimal("3"),
        validators=[MinValueValidator(Decimal("1"))],
        help_text="statistics per dealer: a hold more standard deviations than this from the "
        "par sheets' is an outlier (docs/integrity.md)",
    )
    dealer_p_threshold = models.DecimalField(
        max_digits=7,
        decimal_places=6,
        default=Decimal("0.001"),
        validators=[MinValueValidator(Decimal("0.000001")), MaxValueValidator(Decimal("0.5"))],
        help_text="statistics per dealer: rank frequencies whose chi-square p-value is below "
        "this are an outlier (docs/integrity.md)",
    )
    history = HistoricalRecords()

    objects = JurisdictionManager()

    def __str__(self) -> str:
        return self.name

    def natural_key(self) -> tuple[str]:
        return (self.code,)

    def clean(self) -> None:
        """Valid codes and rules. Whether the change breaks a table's current configuration
        is the configuration service's check (``check_tables_under``, which the admin form
        runs once this one passes): a model imports no service."""
        errors: dict[str, str] = {}
        bets = self.approved_special_bets
        if not isinstance(bets, list) or not all(isinstance(b, str) for b in bets):
            errors["approved_special_bets"] = "a list of special bet codes"
        elif unknown := [b for b in bets if b not in BETS]:
            errors["approved_special_bets"] = f"unknown special bet {unknown[0]!r}"
        behind = self.special_bets_behind
        if not isinstance(behind, list) or not all(isinstance(b, str) for b in behind):
            errors["special_bets_behind"] = "a list of special bet codes"
        elif unknown := [b for b in behind if b not in BETS]:
            errors["special_bets_behind"] = f"unknown special bet {unknown[0]!r}"
        pays = self.blackjack_pays
        if not isinstance(pays, list) or not pays or not all(isinstance(p, str) for p in pays):
            errors["blackjack_pays"] = 'a list of blackjack payouts, e.g. ["3:2"]'
        elif unknown := [p for p in pays if p not in BLACKJACK_PAYS]:
            allowed = ", ".join(BLACKJACK_PAYS)
            errors["blackjack_pays"] = f"unknown payout {unknown[0]!r} (known: {allowed})"
        if not isinstance(self.required_rules, dict):
            errors["required_rules"] = 'an object of rules, e.g. {"decks": 8}'
        else:
            try:
                RuleSet.from_dict(self.required_rules)
            except Exception as exc:  # EngineError: the message names the rule
                errors["required_rules"] = str(exc)
        if errors:
            raise ValidationError(errors)


class Stadium(models.Model):
    """A floor of tables sharing their player stations: a station of the stadium lists its
    tables and moves among them between rounds, with its credits (stations/lobby.py)."""

    name = models.CharField(max_length=80, unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Table(models.Model):
    class Shuffler(models.TextChoices):
        CONTINUOUS = "continuous", "continuous shuffler"
        CUT_CARD = "cut_card", "shoe with a cut card"

    name = models.CharField(max_length=80, unique=True)
    jurisdiction = models.ForeignKey(Jurisdiction, on_delete=models.PROTECT)
    boxes = models.PositiveSmallIntegerField(
        default=3, validators=[MinValueValidator(1), MaxValueValidator(9)]
    )
    shuffler = models.CharField(
        max_length=16, choices=Shuffler.choices, default=Shuffler.CONTINUOUS
    )

    class Mode(models.TextChoices):
        # labels in the page's language (the croupier's list of tables)
        DEALER = "dealer", _("live dealer (the croupier deals)")
        VIDEO = "video", _("video (the virtual shoe deals by itself)")

    currency = models.CharField(max_length=3, default="USD")
    mode = models.CharField(max_length=8, choices=Mode.choices, default=Mode.DEALER)
    is_open = models.BooleanField(default=False, help_text="a new round opens after each one")
    stadium = models.ForeignKey(
        Stadium,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="tables",
        help_text="the stadium whose stations may move to this table (empty: none)",
    )
    is_replay = models.BooleanField(
        default=False,
        help_text="made by play_scenario --live to replay a scenario; reports leave it out",
    )
    reader_key = models.CharField(
        max_length=128, blank=True, help_text="hash of the card reader's credential"
    )
    staff = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="tables",
        help_text="dealers and supervisors who work this table (they see its status)",
    )
    dealer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        editable=False,
        help_text="the dealer on duty (croupier/dealers.py): each new round records them",
    )
    history = HistoricalRecords(excluded_fields=["reader_key", "dealer"])

    class Meta:
        permissions = [("view_reports", "Can view and export table reports")]

    def __str__(self) -> str:
        return self.name

    def set_reader_key(self, secret: str) -> None:
        self.reader_key = hash_token(secret)

    def check_reader_key(self, secret: str) -> bool:
        return check_token(secret, self.reader_key)

    def current_config(self) -> TableConfig | None:
        return self.configs.order_by("-version").first()


def default_chips() -> list[str]:
    return ["1", "5", "25", "100", "500"]


def default_win_thresholds() -> dict[str, str]:
    return {"nice": "3", "big": "10"}


class Play(models.TextChoices):
    """How the stations play the boxes: common draw, or seats with bets behind them."""

    COMMON_DRAW = "common_draw", "common draw"
    SEAT = "seat", "seat mode"


class TableConfig(models.Model):
    """One version of a table's rules, limits, timers and special bets (with paytables)."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="configs")
    version = models.PositiveIntegerField()
    rules = models.JSONField(help_text="every rule of the scenario format, defaults filled in")
    limits = models.JSONField(default=dict, help_text='{"main": ["1", "100"], "special": [..]}')
    timers = models.JSONField(default=dict, help_text='seconds: {"betting": 15, "decision": 15}')
    special_bets = models.JSONField(default=dict, help_text="bet code -> paytable")
    chips = models.JSONField(
        default=default_chips, help_text="chip denominations offered at the stations"
    )
    win_thresholds = models.JSONField(
        default=default_win_thresholds,
        help_text="return / stakes of a round that makes a nice or a big win",
    )
    play = models.CharField(
        max_length=12,
        choices=Play.choices,
        default=Play.COMMON_DRAW,
        help_text="common draw: every station plays every box; seat mode: each seat (box) "
        "has one seated player, others bet behind it",
    )
    behind_cap = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        null=True,
        blank=True,
        help_text="seat mode: the most staked behind one seat, all stations together "
        "(empty: no cap beyond the limits)",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="who saved this version",
    )
    history = HistoricalRecords()
    # Read by simple_history as the user of the history row the next save writes; set (by
    # configuration.save_version) only when there is one, so no default here.
    _history_user: AbstractBaseUser

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["table", "version"], name="unique_config_version")
        ]

    def __str__(self) -> str:
        return f"{self.table} v{self.version}"

    def as_data(self) -> dict[str, Any]:
        """The configurable part, in the shape ``check_config`` and the API use."""
        return {
            "rules": self.rules,
            "limits": self.limits,
            "timers": self.timers,
            "special_bets": self.special_bets,
            "chips": self.chips,
            "win_thresholds": self.win_thresholds,
            "play": self.play,
            "behind_cap": None if self.behind_cap is None else str(self.behind_cap),
        }

    def ruleset(self) -> RuleSet:
        # Read for every bet of a burst: parsed once per rules this instance has held (a
        # RuleSet is frozen, so one may be shared).
        cached = self.__dict__.get("_ruleset")
        if cached is None or cached[0] != self.rules:
            cached = self.__dict__["_ruleset"] = (
                copy.deepcopy(self.rules),
                RuleSet.from_dict(self.rules),
            )
        return cached[1]

    def offered_special_bets(self) -> list[str]:
        """The special bets this configuration offers, in the catalog's order (spec/special-
        bets.md): one order everywhere, whatever order the database keeps JSON keys in."""
        return [code for code in BETS if code in self.special_bets]

    def paytables(self) -> Paytables:
        """The special bets offered, each paytable with its evaluator: what the rules
        engine settles them with (``Round(..., paytables)``)."""
        return parse_paytables(self.special_bets)

    def limit(self, kind: str) -> tuple[Decimal, Decimal] | None:
        """``main``, ``special``, ``let_it_play``, or a special bet's code: its own limits
        when the configuration sets them, else ``special``'s."""
        pair = self.limits.get(kind)
        if pair is None and kind not in ("main", "special", "let_it_play"):
            pair = self.limits.get("special")
        return (Decimal(pair[0]), Decimal(pair[1])) if pair else None

    def special_limits(self) -> dict[str, tuple[Decimal, Decimal] | None]:
        """Every offered special bet's [minimum, maximum]."""
        return {code: self.limit(code) for code in self.special_bets}


class Shoe(models.Model):
    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="shoes")
    decks = models.PositiveSmallIntegerField()
    started_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    cards_drawn = models.PositiveIntegerField(default=0)
    reader_seq = models.PositiveIntegerField(default=0, help_text="last reader sequence number")
    virtual_order = models.JSONField(
        null=True, blank=True, help_text="the virtual shoe's shuffled cards (server only)"
    )
    drawn = models.JSONField(
        default=dict,
        blank=True,
        help_text="copies of each card drawn from this shoe so far (a shoe with a cut card)",
    )
    reconciliation = models.JSONField(
        null=True,
        blank=True,
        help_text="every card dealt from it, reconciled when it ended (croupier/conservation.py)",
    )

    def __str__(self) -> str:
        return f"{self.table} shoe {self.pk}"


class Report(models.Model):
    """A table report for a time range (a shift), computed by a Celery task
    (payouts/reports.py, payouts/tasks.py)."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DONE = "done"
        FAILED = "failed"

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="reports")
    start = models.DateTimeField()
    end = models.DateTimeField()
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.table} report {self.start:%Y-%m-%d %H:%M} to {self.end:%Y-%m-%d %H:%M}"


class DealerReport(models.Model):
    """The statistics of one dealer at one table over a shift (payouts/dealer_stats.py), as
    ``manage.py dealer_report`` kept them: the admin lists them, outliers flagged."""

    dealer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="+")
    shift = models.CharField(max_length=40, blank=True, help_text="empty: a range of dates")
    start = models.DateTimeField()
    end = models.DateTimeField()
    hands = models.PositiveIntegerField(help_text="rounds the dealer dealt to their settlement")
    dealer_busts = models.PositiveIntegerField()
    dealer_blackjacks = models.PositiveIntegerField()
    chi_square = models.FloatField(help_text="of the rank frequencies (12 degrees of freedom)")
    p_value = models.FloatField()
    hold_z = models.FloatField(
        null=True, blank=True, help_text="the hold's standard deviations from the par sheets'"
    )
    outlier = models.BooleanField(help_text="beyond a threshold of the table's jurisdiction")
    flags = models.JSONField(default=list, help_text="which figures are beyond: hold, ranks")
    result = models.JSONField(help_text="the report's row as the command printed it")
    created_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-start", "table", "dealer"]
        constraints = [
            models.UniqueConstraint(
                fields=["dealer", "table", "start", "end"], name="one_dealer_report_per_range"
            )
        ]

    def __str__(self) -> str:
        return f"{self.table} dealer {self.dealer_id} {self.start:%Y-%m-%d %H:%M}"


# The audit history of the models of other apps, kept without changing those apps' models:
# every change of a paytable or a station is recorded with who made it (its historical
# model lives in its own app).
def _register_history() -> None:
    for model, excluded in ((Paytable, []), (Station, ["credential"])):
        if not hasattr(model, "history"):
            register(model, excluded_fields=excluded)


_register_history()


class InstallCheck(models.Model):
    """One program authentication: the installed files checked against the manifest
    (tablehub/program.py)."""

    checked_at = models.DateTimeField(default=timezone.now)
    ok = models.BooleanField()
    files = models.PositiveIntegerField(default=0)
    manifest_sha256 = models.CharField(max_length=64, blank=True)
    changed = models.JSONField(default=list)
    missing = models.JSONField(default=list)
    extra = models.JSONField(default=list)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-pk"]

    def __str__(self) -> str:
        return f"install check {self.checked_at:%Y-%m-%d %H:%M}: {'ok' if self.ok else 'FAILED'}"


class VirtualShuffle(models.Model):
    """One shuffle of a virtual shoe, provably fair (tablehub/fairness.py, docs/integrity.md):
    its commitment is published before its first card; its server seed and order stay
    secret (no API, admin page, message or log shows them) until ``revealed_at``."""

    shoe = models.ForeignKey(Shoe, on_delete=models.CASCADE, related_name="shuffles")
    round_id = models.BigIntegerField(null=True, blank=True, help_text="shuffled for this round")
    server_seed = models.CharField(max_length=64, help_text="secret until revealed")
    station_seeds = models.JSONField(
        default=list, help_text='the stations\' seeds mixed in: [{"station", "seed"}]'
    )
    commitment = models.CharField(max_length=64)
    order = models.JSONField(help_text="the cards, first dealt first (secret until revealed)")
    dealt = models.JSONField(
        default=list,
        help_text='each card dealt from it: {"position", "round", "event"} (the round event)',
    )
    committed_at = models.DateTimeField(default=timezone.now)
    revealed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["pk"]

    def __str__(self) -> str:
        return f"{self.shoe} shuffle {self.pk}"


class StationSeed(models.Model):
    """A station's seed for its video table's next virtual shuffle (one pending per
    station; the shuffle that mixes it in is kept)."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="station_seeds")
    station = models.ForeignKey(Station, on_delete=models.CASCADE, related_name="shoe_seeds")
    seed = models.CharField(max_length=64)
    received_at = models.DateTimeField(default=timezone.now)
    shuffle = models.ForeignKey(
        VirtualShuffle, null=True, blank=True, on_delete=models.CASCADE, related_name="seeds"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["station"],
                condition=models.Q(shuffle__isnull=True),
                name="one_pending_seed_per_station",
            )
        ]

    def __str__(self) -> str:
        return f"{self.station} seed for {self.table}"
