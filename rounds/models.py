"""The round and its append-only event log.

``RoundEvent`` rows are the truth: the round's state is rebuilt by replaying
them through the rules engine (rounds/replay.py); only the round writer
(rounds/writer.py) appends them. ``Bet`` and ``Hand`` rows
are written from the engine for queries and game recall.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from tablehub.fields import RowsJSONField


class Kept(Exception):
    """A RoundEvent or LedgerEntry was to be deleted: they are kept for good (retention,
    docs/operations.md; their chains, rounds/chain.py)."""


class AppendOnlyQuerySet(models.QuerySet):
    """Rows that are never deleted: ``delete()`` refuses (docs/operations.md, retention)."""

    def delete(self):
        raise Kept(f"{self.model.__name__} rows are never deleted")


class AppendOnly(models.Model):
    """A model whose rows are never deleted, one by one or by a query."""

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        abstract = True

    def delete(self, *args, **kwargs):
        raise Kept(f"{type(self).__name__} {self.pk} is never deleted")


class Round(models.Model):
    class Phase(models.TextChoices):
        BETTING = "betting"
        DEAL = "deal"
        BONUS = "bonus"
        INSURANCE = "insurance"
        PLAY = "play"
        DEALER = "dealer"
        SETTLED = "settled"
        VOID = "void"

    table = models.ForeignKey("tablehub.Table", on_delete=models.PROTECT, related_name="rounds")
    number = models.PositiveIntegerField(
        help_text="the round's number at its table: 1, 2, ... (the id counts across tables)"
    )
    config = models.ForeignKey("tablehub.TableConfig", on_delete=models.PROTECT)
    shoe = models.ForeignKey("tablehub.Shoe", null=True, blank=True, on_delete=models.PROTECT)
    # The dealer on duty when the round's first card was dealt (croupier/dealers.py): empty
    # at a video table, when no tablet user had taken the table, or once the user is deleted
    # (deactivate a dealer instead: docs/integrity.md).
    dealer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="the dealer who dealt the round (croupier/dealers.py)",
    )
    phase = models.CharField(max_length=16, choices=Phase.choices, default=Phase.BETTING)
    deadline = models.DateTimeField(null=True, blank=True)
    last_seq = models.PositiveIntegerField(default=0, help_text="seq of the newest RoundEvent")
    step_key = models.CharField(
        max_length=40, blank=True, help_text="the timed step the deadline belongs to"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    settled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["table", "number"], name="one_number_per_table_round")
        ]
        indexes = [
            # A table's round that is not over (rounds/writer.py ``current_round``, every batch
            # of station messages and every state): found in this index whatever the number of
            # rounds the table has played, not by walking back through them all when none is
            # open (13 ms at 100 000 rounds on PostgreSQL). The phases are ``ENDED``'s.
            models.Index(
                fields=["table", "id"],
                condition=~models.Q(phase__in=["settled", "void"]),
                name="round_not_over_by_table",
            ),
            # A table's rounds whose result may still be disputed: settled within the
            # jurisdiction's window, or halted by a dispute of a settled round (its step key
            # starts with rounds/writer.py ``HALTED``). Every Dispute button of a batch's
            # replies looks there (rounds/disputes.py ``stations_disputes``): read from these,
            # not from a walk through every round the table played (2.9 ms at 20 000 rounds
            # on PostgreSQL, 0.16 ms with them).
            models.Index(
                fields=["table", "settled_at"],
                condition=models.Q(phase="settled"),
                name="round_settled_by_table",
            ),
            models.Index(
                fields=["table"],
                condition=models.Q(step_key__startswith="halted:"),
                name="round_halted_by_table",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.table} round {self.number}"


# The phases in groups: one definition for every module that asks where a round stands.
ENDED = (Round.Phase.SETTLED, Round.Phase.VOID)
IN_PLAY = (  # bets closed, not yet settled
    Round.Phase.DEAL,
    Round.Phase.BONUS,
    Round.Phase.INSURANCE,
    Round.Phase.PLAY,
    Round.Phase.DEALER,
)
UNFINISHED = (Round.Phase.BETTING, *IN_PLAY)
CARD_PHASES = (Round.Phase.DEAL, Round.Phase.PLAY, Round.Phase.DEALER)  # a card may be wanted


class RoundEvent(AppendOnly):
    """One input that changed the round, in order. Never updated or deleted."""

    class Kind(models.TextChoices):
        # The inputs of the game, replayed through the engine (rounds/replay.py).
        BETS_CLOSED = "bets_closed"
        CARD = "card"
        BURN = "burn"
        DECISION = "decision"
        TIMEOUT = "timeout"
        BONUS_ASSIGNED = "bonus_assigned"
        SEAT_LEFT = "seat_left"  # seat mode: the seated player left mid-round
        # Records of what happened to the round, which replaying skips: who voided it and
        # why (every way a round ends without a settlement), a station's dispute and its
        # resolution, a supervisor's correction of cards already logged (replay applies it
        # to the card events it names) and a card that left the shoe unused.
        VOID = "void"
        DISPUTE = "dispute"
        DISPUTE_RESOLVED = "dispute_resolved"
        CORRECTION = "correction"
        DISCARD = "discard"

    round = models.ForeignKey(Round, on_delete=models.PROTECT, related_name="events")
    seq = models.PositiveIntegerField()
    kind = models.CharField(max_length=24, choices=Kind.choices)
    payload = RowsJSONField()
    # Set by the writer before the row's link is made (rounds/chain.py), hence not auto_now_add.
    created_at = models.DateTimeField(default=timezone.now)
    # The row's place and link in its table's events chain (rounds/chain.py, docs/integrity.md).
    chain_pos = models.PositiveBigIntegerField(null=True, blank=True, editable=False)
    chain_link = models.CharField(max_length=64, blank=True, editable=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["round", "seq"], name="unique_event_seq")]
        indexes = [models.Index(fields=["chain_pos"], name="roundevent_chain_pos")]
        ordering = ["round", "seq"]

    def __str__(self) -> str:
        return f"{self.round} #{self.seq} {self.kind}"


class ChainHead(models.Model):
    """The last position and link of one of a table's hash chains (rounds/chain.py): the row
    locked to append to the chain, and the head the table report publishes."""

    class Chain(models.TextChoices):
        EVENTS = "events"
        LEDGER = "ledger"

    table = models.ForeignKey("tablehub.Table", on_delete=models.PROTECT, related_name="+")
    chain = models.CharField(max_length=8, choices=Chain.choices)
    position = models.PositiveBigIntegerField(default=0)
    link = models.CharField(max_length=64)
    # Where the chain starts in this database: the rows up to ``base_position`` were
    # archived (docs/operations.md, "Retention"), the next row's link follows ``base_link``.
    base_position = models.PositiveBigIntegerField(
        default=0, help_text="the last position archived out of the database (0: none)"
    )
    base_link = models.CharField(
        max_length=64, default="0" * 64, help_text="the link of that last archived row"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["table", "chain"], name="one_head_per_chain")
        ]

    def __str__(self) -> str:
        return f"{self.table_id} {self.chain} #{self.position} {self.link[:12]}"


class Bet(models.Model):
    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="bets")
    station = models.ForeignKey("stations.Station", on_delete=models.PROTECT)
    box = models.PositiveSmallIntegerField()
    code = models.CharField(max_length=32)
    stake = models.DecimalField(max_digits=12, decimal_places=2)
    combination = models.CharField(max_length=32, blank=True, help_text="empty: none hit")
    returned = models.DecimalField(
        max_digits=12, decimal_places=2, null=True, blank=True, help_text="empty: not settled"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["round", "station", "box", "code"], name="one_bet_per_spot"
            )
        ]

    def __str__(self) -> str:
        return f"{self.round} {self.station} box {self.box} {self.code} {self.stake}"


class Hand(models.Model):
    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="hands")
    station = models.ForeignKey("stations.Station", on_delete=models.PROTECT)
    box = models.PositiveSmallIntegerField()
    position = models.PositiveSmallIntegerField(help_text="play order within the station's hands")
    cards = RowsJSONField()
    stake = models.DecimalField(max_digits=12, decimal_places=2)
    result = models.CharField(max_length=16)
    returned = models.DecimalField(max_digits=12, decimal_places=2)
    insurance = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    insurance_returned = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)

    class Meta:
        ordering = ["round", "station", "position"]

    def __str__(self) -> str:
        return f"{self.round} {self.station} box {self.box}: {' '.join(self.cards)} {self.result}"


# The event kinds in groups: the engine's inputs after bets close, and the records.
ENGINE_KINDS = frozenset(
    {
        RoundEvent.Kind.CARD,
        RoundEvent.Kind.BURN,
        RoundEvent.Kind.DECISION,
        RoundEvent.Kind.TIMEOUT,
        RoundEvent.Kind.BONUS_ASSIGNED,
        RoundEvent.Kind.SEAT_LEFT,
    }
)
RECORD_KINDS = frozenset(
    {
        RoundEvent.Kind.VOID,
        RoundEvent.Kind.DISPUTE,
        RoundEvent.Kind.DISPUTE_RESOLVED,
        RoundEvent.Kind.CORRECTION,
        RoundEvent.Kind.DISCARD,
    }
)
CARD_KINDS = (RoundEvent.Kind.CARD, RoundEvent.Kind.BURN)  # what a correction may change
