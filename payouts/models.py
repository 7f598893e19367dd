"""Paytables as data: the pays of one special bet, named, with where they come from.

The default paytable of every bet ships as the fixture
``payouts/fixtures/default_paytables.json``; each names its source.
"""

from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from payouts.specials import BETS, parse_paytable
from rounds.engine import EngineError
from rounds.models import AppendOnly

BET_CHOICES = [(code, code) for code in BETS]


class Paytable(models.Model):
    bet_code = models.CharField(max_length=32, choices=BET_CHOICES)
    name = models.CharField(max_length=80)
    pays = models.JSONField(help_text="combination code -> pays N to 1 (hard 6: three multipliers)")
    source = models.TextField(help_text="where these numbers come from")
    is_default = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["bet_code", "name"], name="unique_paytable_name"),
            models.UniqueConstraint(
                fields=["bet_code"],
                condition=models.Q(is_default=True),
                name="one_default_paytable_per_bet",
            ),
        ]
        ordering = ["bet_code", "name"]

    def __str__(self) -> str:
        return f"{self.bet_code}: {self.name}"

    def clean(self) -> None:
        try:
            parse_paytable(self.bet_code, self.pays, where="pays")
        except EngineError as exc:
            raise ValidationError({"pays": exc.line()}) from None


class LedgerEntry(AppendOnly):
    """One side of a money movement. Every movement is two entries (station and house) that
    add up to zero; ``key`` makes each entry impossible to write twice."""

    class Kind(models.TextChoices):
        CASH_IN = "cash_in"
        CASH_OUT = "cash_out"
        STAKE = "stake"
        RETURN = "return"
        REFUND = "refund"
        # What a void or correction took back and the station no longer had (it had cashed
        # out, or lost it since): the house's loss, so no balance goes below zero; given
        # back to the house first when a later correction pays the station again.
        HOUSE_LOSS = "house_loss"

    station = models.ForeignKey(
        "stations.Station",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        help_text="empty: the house account",
    )
    round = models.ForeignKey("rounds.Round", null=True, blank=True, on_delete=models.PROTECT)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    amount = models.DecimalField(max_digits=14, decimal_places=2, help_text="+ credits, - debits")
    key = models.CharField(max_length=160, unique=True)
    # Set by the ledger before the row's link is made (rounds/chain.py), hence not auto_now_add.
    created_at = models.DateTimeField(default=timezone.now)
    # The table whose ledger chain holds the entry, its place and link (docs/integrity.md).
    table = models.ForeignKey(
        "tablehub.Table", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    chain_pos = models.PositiveBigIntegerField(null=True, blank=True, editable=False)
    chain_link = models.CharField(max_length=64, blank=True, editable=False)

    class Meta:
        ordering = ["pk"]
        indexes = [models.Index(fields=["station", "round"])]
        constraints = [
            models.UniqueConstraint(fields=["table", "chain_pos"], name="one_entry_per_link"),
            # A movement of nothing is no movement (payouts.ledger never writes one).
            models.CheckConstraint(condition=~models.Q(amount=0), name="ledger_amount_not_zero"),
        ]

    def __str__(self) -> str:
        return f"{self.key} {self.amount}"
