"""The table itself: jurisdictions, tables, their versioned configuration and shoes.

A TableConfig is never edited once a round has used it: a change is a new
version, and every round keeps the exact version it started with.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from rounds.engine import RuleSet
from tablehub.tokens import check_token, hash_token


class Jurisdiction(models.Model):
    code = models.SlugField(unique=True)
    name = models.CharField(max_length=120)
    max_decision_seconds = models.PositiveSmallIntegerField(default=25)
    stale_game_hours = models.PositiveIntegerField(default=24)

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
        DEALER = "dealer", "live dealer (the croupier deals)"
        VIDEO = "video", "video (the virtual shoe deals by itself)"

    currency = models.CharField(max_length=3, default="USD")
    mode = models.CharField(max_length=8, choices=Mode.choices, default=Mode.DEALER)
    is_open = models.BooleanField(default=False, help_text="a new round opens after each one")
    reader_key = models.CharField(
        max_length=128, blank=True, help_text="hash of the card reader's credential"
    )

    def __str__(self) -> str:
        return self.name

    def set_reader_key(self, secret: str) -> None:
        self.reader_key = hash_token(secret)

    def check_reader_key(self, secret: str) -> bool:
        return check_token(secret, self.reader_key)

    def current_config(self) -> TableConfig:
        return self.configs.order_by("-version").first()


def default_chips() -> list[str]:
    return ["1", "5", "25", "100", "500"]


def default_win_thresholds() -> dict[str, str]:
    return {"nice": "3", "big": "10"}


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
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["table", "version"], name="unique_config_version")
        ]

    def __str__(self) -> str:
        return f"{self.table} v{self.version}"

    def ruleset(self) -> RuleSet:
        return RuleSet.from_dict(self.rules)

    def paytables(self) -> dict[str, Any]:
        from payouts.specials import parse_paytable

        return {code: parse_paytable(code, table) for code, table in self.special_bets.items()}

    def limit(self, kind: str) -> tuple[Decimal, Decimal] | None:
        pair = self.limits.get(kind)
        return (Decimal(pair[0]), Decimal(pair[1])) if pair else None


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

    def __str__(self) -> str:
        return f"{self.table} shoe {self.pk}"
