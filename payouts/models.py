"""Paytables as data (the pays of one special bet, named, with where they come from), the
ledger's entries and the soft meters kept with them.

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
        # A station's tip to the dealer: its other side is the table's tip account, not the
        # house (payouts.ledger.tip).
        TIP = "tip"
        # A station's credits leaving its table, or arriving at another table of its
        # stadium, as it moves between them (payouts.ledger.move): not metered.
        MOVE = "move"

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
        indexes = [
            models.Index(fields=["station", "round"]),
            # A station's entries from one on (a player session's money, stations/protection.py;
            # its last entry): a range of this index, not the station's whole history.
            models.Index(fields=["station", "id"], name="ledger_station_since"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["table", "chain_pos"], name="one_entry_per_link"),
            # A movement of nothing is no movement (payouts.ledger never writes one).
            models.CheckConstraint(condition=~models.Q(amount=0), name="ledger_amount_not_zero"),
        ]

    def __str__(self) -> str:
        return f"{self.key} {self.amount}"


class Meters(models.Model):
    """Soft meters, as a gaming machine keeps them: counters that only go up (but for a
    correction or a void taking back what it counted), kept by payouts/meters.py in the same
    transaction as the ledger entries they count; ``manage.py check_ledger`` compares them
    with the sums of the ledger. Money in cents (whole numbers: exact on every database)."""

    total_wagered_cents = models.BigIntegerField(default=0, help_text="the stakes")
    total_won_cents = models.BigIntegerField(
        default=0,
        help_text="the returns (a winning or pushed bet's stake and its win), less those a "
        "void took back",
    )
    games_played = models.BigIntegerField(default=0, help_text="settled rounds with a stake")
    games_won = models.BigIntegerField(
        default=0, help_text="settled rounds whose returns were more than their stakes"
    )
    cash_in_cents = models.BigIntegerField(default=0)
    cash_out_cents = models.BigIntegerField(default=0)
    voided_stakes_cents = models.BigIntegerField(default=0, help_text="the stakes voids gave back")
    tips_cents = models.BigIntegerField(default=0, help_text="tips to the dealer")
    house_losses_cents = models.BigIntegerField(
        default=0,
        help_text="what voids and corrections took back beyond the credits (the house's loss)",
    )

    class Meta:
        abstract = True


class StationCredits(models.Model):
    """A station's credits: the sum of its entries, kept by the ledger in the same statement
    as it writes them (payouts/ledger.py), so that reading a balance is one row whatever the
    station's history (a busy station writes about 1500 entries a day, and a burst's replies
    read hundreds of balances). In cents: whole numbers, exact on every database.
    ``manage.py check_ledger`` compares it with the sum of the entries."""

    station = models.OneToOneField(
        "stations.Station", primary_key=True, on_delete=models.PROTECT, related_name="+"
    )
    cents = models.BigIntegerField(default=0)

    class Meta:
        verbose_name_plural = "station credits"

    def __str__(self) -> str:
        return f"credits of station {self.station_id}"


class StationMeter(Meters):
    """A station's meters (a row once money has moved at the station)."""

    station = models.OneToOneField(
        "stations.Station", primary_key=True, on_delete=models.PROTECT, related_name="meter"
    )
    table = models.ForeignKey(
        "tablehub.Table", on_delete=models.PROTECT, related_name="station_meters"
    )

    class Meta:
        ordering = ["table", "station"]

    def __str__(self) -> str:
        return f"meters of station {self.station_id}"


class TableMeter(Meters):
    """A table's meters: the sums of its stations' (games: station games, as a bank of
    machines counts them)."""

    table = models.OneToOneField(
        "tablehub.Table", primary_key=True, on_delete=models.PROTECT, related_name="meter"
    )

    class Meta:
        ordering = ["table"]

    def __str__(self) -> str:
        return f"meters of table {self.table_id}"
