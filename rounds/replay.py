"""The one replay: a round's engine rebuilt from its event log (DESIGN.md, principle 2).

Every reader of a round's state goes through ``replay``: the round writer when its cached
engine is not current (another process wrote, or after a restart), game recall, a
supervisor's correction (which replays the round with the corrected cards before it writes
anything), the croupier tablet's state (whose replay each process keeps and brings up to
date with ``catch_up``, as the writer does its engine) and crash recovery. A caller that
wants more than the engine (every card with where it went, the hands each decision left)
passes ``observe``, which sees each input as it is applied, with the notices it caused.

Corrections are applied here and nowhere else: a ``correction`` record names card events by
their seq and gives the right card (or none: taken out of play), and the replay plays the
corrected card in place of the one first logged (the newest correction of an event counts).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from rounds.engine import Bet as EngineBet
from rounds.engine import EngineError, Notice, Seating
from rounds.engine import Round as Engine
from rounds.engine.codec import load_event
from rounds.models import CARD_KINDS, ENGINE_KINDS, Round, RoundEvent

Fixes = dict[int, str | None]  # seq of a card event -> the card it is corrected to (None: out)


@dataclass(frozen=True)
class Step:
    """One input of the round as the replay applied it."""

    row: RoundEvent
    payload: dict[str, Any]  # as applied: a corrected card's payload names the corrected card
    corrected_from: str | None  # the card first logged, when a correction changed it
    out_of_play: bool  # a card a correction took out of play: not applied at all
    awaiting_before: str | None  # the card the engine wanted before this input
    notices: list[Notice]


Observer = Callable[[Step], None]
Refusal = Callable[[RoundEvent, EngineError, Fixes], None]


def new_engine(round: Round, bets_closed: dict[str, Any]) -> Engine:
    """The engine as the table built it when bets closed: the round's configuration version,
    the bets and each station's credits of the ``bets_closed`` payload, and in seat mode
    its seating (who sat where, who follows, what may be bet behind)."""
    config = round.config
    bets = [EngineBet(s, box, code, Decimal(stake)) for s, box, code, stake in bets_closed["bets"]]
    credits = {name: Decimal(amount) for name, amount in bets_closed["credits"].items()}
    return Engine(
        config.ruleset(),
        bets,
        credits,
        round.table.boxes,
        config.paytables(),
        config.special_limits(),
        Seating.from_data(bets_closed["seating"]) if "seating" in bets_closed else None,
    )


def corrections_of(rows: Iterable[RoundEvent]) -> Fixes:
    """seq of a card (or burn) event -> the card it is corrected to, None when the card was
    taken out of play; the newest correction of an event counts."""
    fixes: Fixes = {}
    for row in rows:
        if row.kind == RoundEvent.Kind.CORRECTION:
            for change in row.payload.get("changes", []):
                fixes[change["seq"]] = change.get("card")
    return fixes


def generation(rows: Iterable[RoundEvent]) -> int:
    """The seq of the round's last correction (0: none). A correction may take the round back
    to a step it has been at: the steps after it are timed under keys of their own."""
    return max((row.seq for row in rows if row.kind == RoundEvent.Kind.CORRECTION), default=0)


def replay(
    round: Round,
    rows: list[RoundEvent],
    *,
    fixes: Fixes | None = None,
    observe: Observer | None = None,
    refused: Refusal | None = None,
) -> Engine | None:
    """The engine after every input of ``rows`` (the round's events in seq order), with the
    corrections of the rows themselves applied (or ``fixes``, given); None before bets close.
    An input the engine refuses raises its EngineError, unless ``refused`` is given: it is
    called instead and the replay goes on (game recall shows such a log, never hides it)."""
    if not rows or rows[0].kind != RoundEvent.Kind.BETS_CLOSED:
        return None
    if fixes is None:
        fixes = corrections_of(rows)
    engine = new_engine(round, rows[0].payload)
    _apply_rows(engine, rows[1:], fixes, observe, refused)
    return engine


def catch_up(engine: Engine, rows: list[RoundEvent], observe: Observer | None = None) -> bool:
    """Bring ``engine``, the round's engine after its events before ``rows``, up to the end
    of ``rows``, the events that follow them (another server process wrote them), as the
    whole replay would: True when done. False when one of ``rows`` is a correction, which
    changes cards already applied: then ``engine`` is left as it was, and only the whole log
    replayed gives the round's engine. A refused input raises, as in ``replay``: the
    engine may then be half-way, and must be dropped. ``observe`` sees each input applied,
    as in ``replay``."""
    if any(row.kind == RoundEvent.Kind.CORRECTION for row in rows):
        return False
    # No correction among them: an earlier one names only cards before them, so none of
    # these inputs is corrected.
    _apply_rows(engine, rows, {}, observe, None)
    return True


def _apply_rows(
    engine: Engine,
    rows: list[RoundEvent],
    fixes: Fixes,
    observe: Observer | None,
    refused: Refusal | None,
) -> None:
    for row in rows:
        if row.kind not in ENGINE_KINDS:
            continue  # a record (void, dispute, correction, discard): no input of the game
        payload, corrected_from = row.payload, None
        if row.kind in CARD_KINDS and row.seq in fixes:
            corrected_from = row.payload["card"]
            if fixes[row.seq] is None:
                if observe is not None:
                    observe(Step(row, payload, corrected_from, True, engine.awaiting_card, []))
                continue
            payload = {**payload, "card": fixes[row.seq]}
        awaiting = engine.awaiting_card
        try:
            notices = engine.apply(load_event(row.kind, payload))
        except EngineError as exc:
            if refused is None:
                raise
            refused(row, exc, fixes)
            continue
        if observe is not None:
            observe(Step(row, payload, corrected_from, False, awaiting, notices))


def rebuild(round: Round, rows: list[RoundEvent] | None = None) -> Engine:
    """The round's engine from its event log alone (every correction applied); refuses a
    round whose bets have not closed."""
    if rows is None:
        rows = list(round.events.order_by("seq"))
    engine = replay(round, rows)
    if engine is None:
        raise EngineError("the round has no closed bets to replay", code="invalid")
    return engine
