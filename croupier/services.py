"""The card reader's input: each card as it leaves the shoe, with the reader's sequence number.

A duplicate scan (a sequence number already taken) is ignored; a gap in the sequence, a card
that cannot be read, a card the round does not want now or one the shoe cannot hold is
refused with an error for the croupier, and changes nothing. A card the shoe cannot hold
(one copy more than its decks) is ``card_count_exceeded``: whoever answers the scan raises
the supervisor alert (croupier/conservation.py) once the scan's transaction is undone.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from croupier.conservation import CardCountExceeded
from rounds import writer
from rounds.engine import Burn, CardDrawn, EngineError, parse_card
from rounds.models import CARD_PHASES, IN_PLAY, Round
from tablehub.compiled import CompiledQuery, Param
from tablehub.models import Shoe, Table


def current_shoe(table: Table) -> Shoe:
    shoe = table.shoes.filter(closed_at__isnull=True).order_by("-pk").first()
    if shoe is None:
        config = table.current_config()
        assert config is not None  # a table without a configuration cannot be dealt to
        shoe = Shoe.objects.create(table=table, decks=config.ruleset().decks)
    return shoe


# The table's open shoe, locked (tablehub/compiled.py: its SQL built once).
_OPEN_SHOE_LOCKED = CompiledQuery(
    lambda: (
        Shoe.objects.select_for_update(no_key=True)
        .filter(table_id=Param("table_id"), closed_at__isnull=True)
        .order_by("-pk")[:1]
    )
)


def locked_shoe(table: Table) -> Shoe:
    """The table's current shoe, its row locked until the transaction ends: every card input
    locks it first, then the round. One query when the table has a shoe open."""
    shoe = _OPEN_SHOE_LOCKED.first(table_id=table.pk)
    if shoe is None:  # none yet, or the one open was closed (a shuffle) while we waited
        shoe = Shoe.objects.select_for_update(no_key=True).get(pk=current_shoe(table).pk)
    shoe.table = table  # as read through ``table.shoes``: no second read of the table
    return shoe


def check_shoe_copies(shoe: Shoe, card: str, hole: str | None = None) -> None:
    """A shoe with a cut card is dealt across rounds until the cut card: the cards of every
    round since the shuffle count (a continuous shuffler takes them back after each round,
    so there the round's own count, checked by the engine, is the one that matters). The
    face-down ``hole`` card, given, is not counted."""
    if shoe.drawn.get(card, 0) - (1 if card == hole else 0) >= shoe.decks:
        raise EngineError(
            f"{card} cannot be drawn: all {shoe.decks} copies of it have left this "
            f"{shoe.decks}-deck shoe since it was shuffled",
            code="impossible_card",
        )


def _unnamed(exc: EngineError, card: str, seq: int) -> EngineError:
    """The refusal with the card named by its reader sequence number: reader errors show on
    the tablet, which faces the table, and the card may have been read face down."""
    if card not in exc.reason:
        return exc
    return EngineError(exc.reason.replace(card, f"reader card {seq}"), code=exc.code)


def face_down_card(table: Table) -> str | None:
    """The hole card of the table's round in play while it is face down, else None."""
    round = table.rounds.filter(phase__in=IN_PLAY).order_by("-pk").first()
    if round is None:
        return None
    return writer.read(
        round.pk,
        lambda engine: (
            str(engine.dealer[1])
            if engine.rules.hole_card and len(engine.dealer) >= 2 and not engine.hole_revealed
            else None
        ),
    )


def drawn_shown(shoe: Shoe) -> dict[str, int]:
    """The copies of each card drawn from ``shoe`` as anyone may see them: without the hole
    card while it is face down (else the counts minus the cards on the table would name it).
    A new shoe never starts while a round is dealt, so the round in play is the open shoe's."""
    drawn = dict(shoe.drawn)
    hole = face_down_card(shoe.table) if shoe.closed_at is None else None
    if hole is not None and drawn.get(hole):
        drawn[hole] -= 1
        if not drawn[hole]:
            del drawn[hole]
    return dict(sorted(drawn.items()))


def apply_passed_deadline(table: Table) -> None:
    """A card input that finds its round's step past the deadline (its timer late, e.g.
    after a restart) first applies the step's timeout in a transaction of its own (call it
    before the input's): the timeout stands whatever becomes of the card, and a card the
    round no longer wants is refused for what is true then (``card_not_expected`` when the
    timeout ended the round)."""
    round = writer.current_round(table.pk)
    if round is not None and writer.past_deadline(round, timezone.now()):
        writer.expire_if_late(round.pk)


def scan(table: Table, seq: object, card: object, burn: bool = False) -> dict[str, Any]:
    """One card from the reader. Returns {"duplicate": True} for a scan already taken."""
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
        raise EngineError(f"seq must be a whole number from 1, got {seq!r}", code="bad_message")
    try:
        parsed = parse_card(card)
    except EngineError as exc:
        raise EngineError(exc.reason, code="unreadable_card") from None
    apply_passed_deadline(table)
    with transaction.atomic():
        shoe = locked_shoe(table)
        if seq <= shoe.reader_seq:
            return {"duplicate": True, "seq": seq}
        if seq != shoe.reader_seq + 1:
            raise EngineError(
                f"reader sequence jumps from {shoe.reader_seq} to {seq}: "
                f"{seq - shoe.reader_seq - 1} card(s) missing",
                code="sequence_gap",
            )
        cut_card = table.shuffler == Table.Shuffler.CUT_CARD
        event = Burn(parsed) if burn else CardDrawn(parsed)
        # The round's row locked once and held for the card, as for a batch of station
        # messages: the writer reads it no more (a card's fan-out waits for its commit).
        with writer.holding_the_table(table.pk, savepoint=False) as held:
            round = held if held is not None and held.phase in CARD_PHASES else None
            if round is None:
                raise EngineError(
                    f"reader card {seq} arrived but no round wants a card now",
                    code="card_not_expected",
                )
            try:
                if cut_card:
                    check_shoe_copies(shoe, str(parsed))
                writer.record(round.pk, event)
            except EngineError as exc:
                if exc.code == "impossible_card":  # one copy too many: card conservation
                    raise CardCountExceeded(table.pk, shoe, round.pk, seq) from None
                raise _unnamed(exc, str(parsed), seq) from None
        if round.shoe_id != shoe.pk:  # the shoe the round is dealt from, for its reconciliation
            Round.objects.filter(pk=round.pk).update(shoe=shoe)
            round.shoe = shoe
        shoe.reader_seq = seq
        shoe.cards_drawn += 1
        if cut_card:
            shoe.drawn[str(parsed)] = shoe.drawn.get(str(parsed), 0) + 1
        shoe.save(update_fields=["reader_seq", "cards_drawn", "drawn"])
        return {"duplicate": False, "seq": seq}  # never echo the card: it may be the hole card
