"""Correcting cards already logged: a misread card, cards read in the wrong order, a card
dealt by mistake (docs/croupier.md, "Misreads and misdeals").

A supervisor names each card by its position among the round's scanned cards (1 = the
first card or burn of the round) or by its RoundEvent seq, and gives the right card, or
takes the card out of play (``"burn": true``: an exposed card; the round then waits for the
next card in its place). The round is replayed from its event log with the correction: a
new engine from ``bets_closed``, every later input re-applied. If an input no longer applies
(a decision now not allowed, a card now not wanted, more copies of a card than the shoe
holds) the correction is refused with a message naming that input, and nothing changes. A
settled round must still be settled after its correction (otherwise: void it), and it can
be corrected only while its dispute window is open or a dispute made in time is open.

While the hole card is face down no answer depends on it (issue 17): a correction of it to
the card it already is is applied like any other (no "already" refusal that only a right
guess gets), and a refusal names it by its position only.

The correction is a RoundEvent (kind ``correction``, payload ``{changes: [{seq, position,
was, card}], by, requested_by, reason, dispute}``; ``card`` null: taken out of play) that
the engine replay skips; ``rounds.replay.replay`` applies it to the card events it
names, so ``rebuild`` and every later input see the corrected round.

The ledger is brought to the corrected round (rounds.writer.correct), item by item (the keys
the writer gives each money item,
``round:<id>:<station>:<item>``): an item the corrected round has and the ledger lacks is
written; an entry the corrected round no longer has, or has with another amount, is
reversed by ``<its key>:corrected`` (same kind, opposite amount) and the new amount written
as ``<the item's key>:c<seq of the correction>``. A settled round's Hand and Bet results
are written again. Every station hears ``{"type": "corrected", "round", "positions"}`` and
each station with a bet in the round gets its new state (``{"type": "state", "state"}``).
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

from rounds import disputes, writer
from rounds.engine import EngineError, Notice, parse_card
from rounds.engine import Round as Engine
from rounds.models import CARD_KINDS, ENDED, Round, RoundEvent
from rounds.replay import Fixes, Step, corrections_of, replay
from stations.commands import station_state
from tablehub.models import Shoe, Table

log = logging.getLogger("tablehub.rounds")

MAX_CHANGES = 8
MAX_REASON = 200


def correct_cards(
    round_id: int,
    changes: list[dict[str, Any]],
    by: str,
    requested_by: str = "",
    reason: str = "",
    resolve: bool = False,
) -> Round:
    """Correct cards of a round (see the module docstring). ``changes``: a list of
    ``{"position": n} | {"seq": s}`` with ``"card": "7H"`` or ``"burn": true``. ``by`` is the
    approving supervisor (already checked); with ``resolve`` the correction also resolves the
    round's open dispute and the round goes on. Raises EngineError (``bad_message``,
    ``unreadable_card``, ``no_card_yet``, ``no_such_card``, ``invalid``, ``round_over``,
    ``dispute_window_closed``, ``no_dispute``, ``impossible_card``, ``correction_refused``)
    having changed nothing."""
    wanted = _parse(changes)
    if not isinstance(reason, str) or len(reason) > MAX_REASON:
        raise EngineError(
            f"the reason is text of at most {MAX_REASON} characters", code="bad_message"
        )
    reason = reason.strip()
    with transaction.atomic():
        shoe = _cut_card_shoe(Round.objects.select_related("table").get(pk=round_id))
        round = (
            Round.objects.select_for_update(no_key=True).select_related("table").get(pk=round_id)
        )
        dispute = disputes.open_dispute(round)
        if resolve and dispute is None:
            raise EngineError(f"round {round.pk} has no open dispute", code="no_dispute")
        was_settled = _check_correctable(round)
        rows = list(round.events.order_by("seq"))
        hole = _face_down(round, rows)
        made = _resolve_changes(rows, wanted, hole)
        fixes = corrections_of(rows) | {c["seq"]: c["card"] for c in made}
        engine = _replay(round, rows, fixes, hole, frozenset(c["seq"] for c in made))
        if shoe is not None:
            _count_in_the_shoe(shoe, made)
        if was_settled and not engine.settled:
            raise EngineError(
                f"the corrected round {round.pk} would not be over "
                f"({engine.croupier_prompt()}): void it instead; nothing was changed",
                code="correction_refused",
            )
        record, live, news, moved = writer.correct(
            round,
            engine,
            {
                "changes": made,
                "by": by,
                "requested_by": requested_by,
                "reason": reason,
                "dispute": dispute.seq if dispute is not None else None,
            },
            was_settled,
        )
        resumed = None
        if resolve:
            assert dispute is not None  # refused above when there is none
            resumed = disputes.resume(
                round, dispute, "correct", by, requested_by, {"correction": record.seq}, False
            )
        elif dispute is not None:  # still halted: the supervisor may correct more
            round.step_key = f"{writer.HALTED}{dispute.seq}"
            round.deadline = None
            round.save(update_fields=["step_key", "deadline"])
        else:  # a step after a correction has a fresh step time
            writer.time_step(round)
        _tell_the_table(round, live, made, was_settled, [resumed] if resumed else [], news)
    log.warning(
        "table %s round %s: cards corrected by %s (asked by %s): %s; %d ledger movements%s",
        round.table_id,
        round.pk,
        by,
        requested_by or "-",
        ", ".join(f"#{c['position']} {c['was']} -> {c['card'] or 'out of play'}" for c in made),
        moved,
        # resolve was refused above without an open dispute
        f"; dispute {dispute.seq} resolved" if resolve and dispute is not None else "",
    )
    return round


# -- checks ------------------------------------------------------------------------------------


def _parse(changes: Any) -> list[dict[str, Any]]:
    if not isinstance(changes, list) or not 1 <= len(changes) <= MAX_CHANGES:
        raise EngineError(f"a correction names 1 to {MAX_CHANGES} cards", code="bad_message")
    parsed = []
    for change in changes:
        if not isinstance(change, dict):
            raise EngineError("each card to correct is an object", code="bad_message")
        where = {k: change.get(k) for k in ("position", "seq") if change.get(k) is not None}
        if len(where) != 1:
            raise EngineError(
                "name the card by its position or by its seq (one of them)", code="missing_field"
            )
        ((name, value),) = where.items()
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise EngineError(f"{name} must be a whole number from 1", code="bad_message")
        out = change.get("burn", False)
        if not isinstance(out, bool):
            raise EngineError("burn must be true or false", code="bad_message")
        card = change.get("card")
        if out:
            if card is not None:
                raise EngineError(
                    "give either the right card or burn: true, not both", code="bad_message"
                )
        elif card is None:
            raise EngineError(
                "a correction needs the right card (or burn: true)", code="missing_field"
            )
        else:
            try:
                card = str(parse_card(card))
            except EngineError as exc:
                raise EngineError(exc.reason, code="unreadable_card") from None
        parsed.append({name: value, "card": None if out else card})
    return parsed


def _check_correctable(round: Round) -> bool:
    """Whether the round is settled; refuses a round that cannot be corrected."""
    if round.phase == Round.Phase.VOID:
        raise EngineError(f"round {round.pk} is void", code="round_over")
    if round.phase == Round.Phase.BETTING:
        raise EngineError(f"round {round.pk} has no card yet", code="no_card_yet")
    if round.phase != Round.Phase.SETTLED:
        return False
    if disputes.may_change_settled(round):
        return True
    if disputes.disputes_allowed(round.table):
        raise EngineError(
            f"round {round.pk} is final: its dispute window has closed",
            code="dispute_window_closed",
        )
    raise EngineError(f"round {round.pk} is settled and final", code="round_over")


def _face_down(round: Round, rows: list[RoundEvent]) -> tuple[int, str] | None:
    """The hole card's event seq and card while it is face down in a round in play."""
    if round.phase in ENDED:
        return None
    last: list[tuple[int, str]] = []

    def observe(step: Step) -> None:
        if step.row.kind == RoundEvent.Kind.CARD and not step.out_of_play:
            if step.awaiting_before == "hole":
                last[:] = [(step.row.seq, step.payload["card"])]

    engine = replay(round, rows, observe=observe)
    if engine is None or not engine.rules.hole_card or engine.hole_revealed:
        return None
    return last[0] if last else None


def _resolve_changes(
    rows: list[RoundEvent], wanted: list[dict[str, Any]], hole: tuple[int, str] | None = None
) -> list[dict]:
    """Each wanted change as ``{seq, position, was, card}`` against the round's scans. The
    face-down hole card given its own card again is corrected like any other (logged and
    told the same way): "card 4 is 7C already" would answer only the right guess."""
    scans = [r for r in rows if r.kind in CARD_KINDS]
    fixes = corrections_of(rows)
    made: list[dict[str, Any]] = []
    for change in wanted:
        if "position" in change:
            n = change["position"]
            if n > len(scans):
                raise EngineError(
                    f"the round has {len(scans)} card(s): there is no card {n}",
                    code="no_such_card",
                )
            row = scans[n - 1]
        else:
            row = next((r for r in scans if r.seq == change["seq"]), None)
            if row is None:
                raise EngineError(
                    f"event {change['seq']} of the round is not a card", code="no_such_card"
                )
        position = scans.index(row) + 1
        if any(m["seq"] == row.seq for m in made):
            raise EngineError(f"card {position} is named twice", code="bad_message")
        was = fixes[row.seq] if row.seq in fixes else row.payload["card"]
        card = change["card"]
        if card is None and (row.kind == "burn" or was is None):
            raise EngineError(f"card {position} is out of play already", code="invalid")
        if card is not None and card == was and (hole is None or row.seq != hole[0]):
            raise EngineError(f"card {position} is {card} already", code="invalid")
        made.append({"seq": row.seq, "position": position, "was": was, "card": card})
    return made


def _cut_card_shoe(round: Round) -> Shoe | None:
    """The locked shoe whose card counts a correction changes: at a table with a cut card,
    the open shoe, if the round was dealt from it (croupier.services.scan keeps the counts;
    no new shoe starts while a round is dealt, so a settled round's shoe is the open one if
    that started before the settlement)."""
    if round.table.shuffler != Table.Shuffler.CUT_CARD:
        return None
    shoes = Shoe.objects.select_for_update(no_key=True).filter(
        table=round.table, closed_at__isnull=True
    )
    if round.settled_at is not None:
        shoes = shoes.filter(started_at__lte=round.settled_at)
    return shoes.order_by("-pk").first()  # card inputs lock the shoe first, then the round


def _count_in_the_shoe(shoe: Shoe, made: list[dict[str, Any]]) -> None:
    drawn = dict(shoe.drawn)
    for change in made:
        if change["was"] is not None:
            drawn[change["was"]] = max(drawn.get(change["was"], 0) - 1, 0)
    for change in made:
        card = change["card"]
        if card is not None:
            if drawn.get(card, 0) >= shoe.decks:
                raise EngineError(
                    f"{card} cannot be card {change['position']}: all {shoe.decks} copies of it "
                    f"have left this {shoe.decks}-deck shoe since it was shuffled",
                    code="impossible_card",
                )
            drawn[card] = drawn.get(card, 0) + 1
    shoe.drawn = drawn
    shoe.save(update_fields=["drawn"])


def _what(
    row: RoundEvent, fixes: dict[int, str | None], rows: list[RoundEvent], hole: int | None
) -> str:
    payload = row.payload
    if row.kind in CARD_KINDS:
        position = [r.seq for r in rows if r.kind in CARD_KINDS].index(row.seq) + 1
        if row.seq == hole:
            return f"card {position}, the hole card"  # face down: never named
        card = fixes[row.seq] if row.seq in fixes else payload["card"]
        return f"{'the burn' if row.kind == 'burn' else 'card'} {position}, {card}"
    if row.kind == "decision":
        return f"station {payload['station']}'s {payload['action']}"
    if row.kind == "timeout":
        return "the timeout" + (
            f" of station {payload['station']}" if payload.get("station") else ""
        )
    if row.kind == "bonus_assigned":
        return f"the In For 6 multipliers of station {payload['station']}, box {payload['box']}"
    return row.kind


def _replay(
    round: Round,
    rows: list[RoundEvent],
    fixes: Fixes,
    hole: tuple[int, str] | None = None,
    changed: frozenset[int] = frozenset(),
) -> Engine:
    """The round replayed with the correction; refused, naming the first input that no
    longer applies (the face-down hole card, not corrected, by its position only)."""

    def refused(row: RoundEvent, exc: EngineError, fixes: Fixes) -> None:
        code = "impossible_card" if exc.code == "impossible_card" else "correction_refused"
        hole_seq = hole[0] if hole is not None else None
        why = exc.line()
        if hole is not None and row.seq == hole_seq and row.seq not in changed:
            why = why.replace(hole[1], "the hole card")  # face down: never named
        raise EngineError(
            f"with this correction, event {row.seq} ({_what(row, fixes, rows, hole_seq)}) no "
            f"longer applies: {why}; nothing was changed",
            code=code,
        ) from None

    engine = replay(round, rows, fixes=fixes, refused=refused)
    assert engine is not None  # a round with a card has closed bets
    return engine


# -- telling the table ----------------------------------------------------------------------


def _tell_the_table(
    round: Round,
    live: writer.Live,
    made: list[dict[str, Any]],
    was_settled: bool,
    resumed: list[Notice],
    news: list[Notice],
) -> None:
    """Every station redraws (and hears that the round goes on, after a dispute); each
    station in the round gets its new state at once."""
    notices = [
        Notice(
            "public",
            {"type": "corrected", "round": round.pk, "positions": [c["position"] for c in made]},
        )
    ]
    notices += resumed + news
    for name, station in sorted(live.stations.items()):
        notices.append(
            Notice(name, {"type": "state", "state": station_state(station, was_settled)})
        )
    writer.publish(round, notices)
