"""The croupier tablet's commands (docs/croupier.md), as services.

The tablet's socket (croupier.consumers.CroupierConsumer) is thin: it authenticates the
Django user, passes every message to ``handle`` and sends back the one reply. Each command
either works and the reply carries the new ``croupier_state``, or it raises EngineError
(a code and one line) having changed nothing.

What the tablet shows is built in croupier/tablet_state.py.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import authenticate
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.utils import timezone

from croupier import dealers, virtual_shoe
from croupier.conservation import CardCountExceeded, raise_alert, reconcile, reconcile_at_close
from croupier.services import (
    apply_passed_deadline,
    check_shoe_copies,
    face_down_card,
    locked_shoe,
    scan,
)
from croupier.tablet_state import croupier_state, current_round
from rounds import corrections, disputes, voids, writer
from rounds.engine import EngineError, Notice, parse_card
from rounds.models import IN_PLAY, Round, RoundEvent
from tablehub import broadcast, fair_shoe, program
from tablehub.auth import authenticate_from_scope
from tablehub.models import Shoe, Table
from tablehub.roles import APPROVER_ROLES, has_role

log = logging.getLogger("tablehub.croupier")

MAX_CLIENT_ID = 64
User = AbstractBaseUser | AnonymousUser


# -- the commands ------------------------------------------------------------------------------


def open_table(table: Table) -> Round:
    """Open the table: a new round after each one, and a betting round now if none is open."""
    with transaction.atomic():
        table = Table.objects.select_for_update(no_key=True).get(pk=table.pk)
        opened = not table.is_open
        if opened:
            program.refuse_if_unverified(table)  # the jurisdiction may require it
            table.is_open = True
            table.save(update_fields=["is_open"])
        round = current_round(table)
        if round is None:
            round = writer.open_round(table)  # announces itself to the table
        if opened:
            _tell_stations_on_commit(table, {"type": "table_status", "open": True})
        _tell_tablets_on_commit(table, "table")
    return round


def close_table(table: Table, by: str = "") -> None:
    """No new round after the current one. A betting round nobody has bet on is cancelled
    (VOID, logged with ``by``, the tablet user who closed the table; no money moved), since
    bets would otherwise stay open for ever."""
    with transaction.atomic():
        table = Table.objects.select_for_update(no_key=True).get(pk=table.pk)
        closed = table.is_open
        if closed:
            table.is_open = False
            table.save(update_fields=["is_open"])
        round = current_round(table)
        if round is not None and round.phase == Round.Phase.BETTING:
            round = Round.objects.select_for_update(no_key=True).get(pk=round.pk)  # no bet races us
            if round.phase == Round.Phase.BETTING and not round.bets.exists():
                reason = voids.TABLE_CLOSED
                writer.end_round(
                    round,
                    Round.Phase.VOID,
                    {"by": by, "reason": reason, "requested_by": by},
                    Notice("public", {"type": "void", "reason": reason}),
                )
        if closed:
            _tell_stations_on_commit(table, {"type": "table_status", "open": False})
            fair_shoe.reveal_ended(table)  # closing the table ends its virtual shoe
            reconcile_at_close(table.pk)  # now, or when its last round ends
        _tell_tablets_on_commit(table, "table")


def close_bets(table: Table) -> None:
    """Close bets on the open betting round (as its timer would)."""
    round = current_round(table)
    if round is None:
        raise EngineError("no round is open: open the table first", code="no_round")
    if round.phase != Round.Phase.BETTING:
        raise EngineError("bets are already closed", code="bets_closed")
    if not round.bets.exists():  # close_bets would only restart the betting time
        raise EngineError("no station has bet yet: bets stay open", code="no_bets")
    writer.close_bets(round.pk)


def deal(table: Table, burn: bool = False) -> dict[str, Any]:
    """The virtual shoe deals (or burns) its next card, through the card reader's input."""
    return virtual_shoe.deal_next(table, burn=burn)


def manual_card(table: Table, card: str, burn: bool = False) -> dict[str, Any]:
    """A card entered by hand when the reader fails: a scan with the shoe's next sequence
    number, accepted or refused exactly as the reader's would be."""
    apply_passed_deadline(table)
    try:
        with transaction.atomic():
            shoe = locked_shoe(table)
            result = scan(table, shoe.reader_seq + 1, card, burn=burn)
    except CardCountExceeded as refusal:
        raise_alert(refusal)  # the scan is undone; the alert is kept
        raise
    log.info("table %s: card %s entered by hand", table.pk, result["seq"])
    return result


def new_shoe(table: Table) -> Shoe:
    """Close the shoe and start a new one (the virtual shoe shuffles it at its first card);
    refused while a round is being dealt."""
    with transaction.atomic():
        table = Table.objects.select_for_update(no_key=True).get(pk=table.pk)
        if table.rounds.filter(phase__in=IN_PLAY).exists():
            raise EngineError(
                "a round is being dealt: finish it (or void it) before a new shoe",
                code="round_in_play",
            )
        for ended in table.shoes.filter(closed_at__isnull=True):
            # Every card dealt from it, reconciled and kept with it (croupier/conservation.py).
            ended.reconciliation = reconcile(ended)
            ended.closed_at = timezone.now()
            ended.save(update_fields=["reconciliation", "closed_at"])
            if not ended.reconciliation["conserved"]:
                log.warning(
                    "table %s shoe %s ended unreconciled: %s",
                    table.pk,
                    ended.pk,
                    ended.reconciliation,
                )
        config = table.current_config()
        assert config is not None  # a table without a configuration cannot be dealt to
        shoe = Shoe.objects.create(table=table, decks=config.ruleset().decks)
        _tell_stations_on_commit(table, {"type": "shoe_changed", "decks": shoe.decks})
        fair_shoe.reveal_ended(table)  # the ended shoe's virtual shuffle, if it had one
        _tell_tablets_on_commit(table, "shoe")
    log.info("table %s: new shoe %s", table.pk, shoe.pk)
    return shoe


def check_supervisor(
    table: Table, credentials: object, asked_by: str, scope: dict[str, Any] | None = None
) -> AbstractBaseUser:
    """The supervisor who approves an action: a valid login with an approver role. With the
    tablet socket's ASGI ``scope`` the login is throttled like every other (tablehub.auth):
    its failures count, and a locked-out username is refused."""
    username = password = None
    if isinstance(credentials, dict):
        username, password = credentials.get("username"), credentials.get("password")
    if not isinstance(username, str) or not username or not isinstance(password, str):
        log.warning(
            "table %s: supervisor action without a supervisor login (%s)", table.pk, asked_by
        )
        raise EngineError(
            "a supervisor must approve this: supervisor username and password",
            code="supervisor_required",
        )
    if scope is not None:
        user = authenticate_from_scope(scope, username, password)
    else:
        user = authenticate(None, username=username, password=password)
    if user is None or not has_role(user, APPROVER_ROLES):
        log.warning(
            "table %s: supervisor approval refused for %r (asked by %s)",
            table.pk,
            username[:150],
            asked_by,
        )
        raise EngineError("that is not a supervisor's login", code="supervisor_required")
    return user


def void_current_round(
    table: Table, supervisor: AbstractBaseUser, reason: str, round_id: int | None, asked_by: str
) -> Round:
    """Void the table's round in progress (or the one named, which must be it)."""
    round = current_round(table)
    if round_id is not None:
        named = table.rounds.filter(pk=round_id).first()
        if named is None:
            raise EngineError(f"round {round_id} is not a round of this table", code="no_round")
        round = named
    if round is None:
        raise EngineError("no round is in progress", code="no_round")
    return voids.void_round(round.pk, supervisor.get_username(), reason, requested_by=asked_by)


def _named_round(table: Table, round_id: int) -> Round:
    named = table.rounds.filter(pk=round_id).first()
    if named is None:
        raise EngineError(f"round {round_id} is not a round of this table", code="no_round")
    return named


def correct_card(
    table: Table,
    supervisor: AbstractBaseUser,
    changes: list[dict[str, Any]],
    round_id: int | None,
    reason: str,
    asked_by: str,
) -> Round:
    """Correct cards of the round named, or else of the round being dealt, or else of the
    table's last settled round (rounds/corrections.py)."""
    round: Round | None
    if round_id is not None:
        round = _named_round(table, round_id)
    else:
        round = current_round(table)
        if round is None or round.phase == Round.Phase.BETTING:
            round = table.rounds.filter(phase=Round.Phase.SETTLED).order_by("-pk").first()
        if round is None:
            raise EngineError("no round has cards to correct", code="no_round")
    return corrections.correct_cards(round.pk, changes, supervisor.get_username(), asked_by, reason)


def resolve_dispute(
    table: Table,
    supervisor: AbstractBaseUser,
    resolution: str,
    round_id: int | None,
    asked_by: str,
    reason: str = "",
    changes: list[dict[str, Any]] | None = None,
) -> Round:
    """Resolve the open dispute of the round named, or the table's one open dispute."""
    if round_id is None:
        open_ = disputes.table_disputes(table)
        if not open_:
            raise EngineError("no dispute is open at this table", code="no_dispute")
        if len(open_) > 1:
            rounds = ", ".join(str(d["round"]) for d in open_)
            raise EngineError(
                f"disputes are open in rounds {rounds}: name the round", code="missing_field"
            )
        round_id = open_[0]["round"]
    round = _named_round(table, round_id)
    by = supervisor.get_username()
    if resolution not in disputes.RESOLUTIONS:
        raise EngineError("resolution must be continue, correct or void", code="bad_message")
    if resolution == "correct":
        return corrections.correct_cards(
            round.pk, changes or [], by, asked_by, reason, resolve=True
        )
    if resolution == "void":
        return voids.void_disputed_round(round.pk, by, reason, requested_by=asked_by)
    return disputes.continue_round(round.pk, by, asked_by, reason)


def discard_card(
    table: Table, supervisor: AbstractBaseUser, card: str | None, reason: str, asked_by: str
) -> RoundEvent:
    """A card that left the shoe without being scanned and is not used (dropped and not
    usable, exposed before the reader saw it): logged on the round being dealt (RoundEvent
    ``discard``), counted as drawn from the shoe, never part of the game."""
    if not isinstance(reason, str) or not reason.strip():
        raise EngineError("a discarded card needs a reason", code="missing_field")
    reason = reason.strip()
    if len(reason) > voids.MAX_REASON:
        raise EngineError(
            f"the reason is longer than {voids.MAX_REASON} characters", code="bad_message"
        )
    text = None
    if card is not None:
        try:
            text = str(parse_card(card))
        except EngineError as exc:
            raise EngineError(exc.reason, code="unreadable_card") from None
    with transaction.atomic():
        shoe = locked_shoe(table)
        round = table.rounds.filter(phase__in=IN_PLAY).order_by("-pk").first()
        if round is None:
            raise EngineError("no round is being dealt", code="no_round")
        round = Round.objects.select_for_update(no_key=True).get(pk=round.pk)
        cut_card = table.shuffler == Table.Shuffler.CUT_CARD
        if text is not None:
            # The face-down hole card counts as unknown: a refusal exactly when the card
            # named is the hole card's last copy would name the hole card (issue 17).
            hole = face_down_card(table)
            _check_discard_copies(round, text, hole)
            if cut_card:
                check_shoe_copies(shoe, text, hole)
                shoe.drawn[text] = shoe.drawn.get(text, 0) + 1
        row = writer.append_record(
            round,
            RoundEvent.Kind.DISCARD,
            {
                "card": text,
                "reason": reason,
                "by": supervisor.get_username(),
                "requested_by": asked_by,
            },
        )
        round.save(update_fields=["last_seq"])
        shoe.cards_drawn += 1  # it left the shoe; the reader never read it
        shoe.save(update_fields=["cards_drawn", "drawn"])
        _tell_tablets_on_commit(table, "discard")
    log.warning(
        "table %s round %s: card %s discarded, approved by %s (asked by %s): %s",
        table.pk,
        round.pk,
        text or "(unknown)",
        supervisor.get_username(),
        asked_by,
        reason,
    )
    return row


def _check_discard_copies(round: Round, card: str, hole: str | None = None) -> None:
    """A discarded card keeps the shoe possible: no more copies than its decks hold (the
    face-down ``hole`` card not counted)."""
    drawn, decks = writer.read(
        round.pk,
        lambda engine: (sum(1 for c in engine.drawn if str(c) == card), engine.rules.decks),
    )
    discarded = round.events.filter(kind=RoundEvent.Kind.DISCARD, payload__card=card).count()
    copies = drawn + discarded + 1 - (1 if card == hole else 0)
    if copies > decks:
        raise EngineError(
            f"{card} drawn {copies} times, but a {decks}-deck shoe holds {decks}",
            code="impossible_card",
        )


# -- the socket's messages ---------------------------------------------------------------------


def handle(
    table: Table, user: User, message: Any, scope: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Answer one tablet message with exactly one reply (it carries the state, or an error).
    ``scope`` is the socket's ASGI scope (for throttling supervisor logins)."""
    client_id = message.get("client_id") if isinstance(message, dict) else None
    try:
        if not isinstance(message, dict):
            raise EngineError("a message must be a JSON object", code="bad_message")
        if not isinstance(client_id, str) or not 1 <= len(client_id) <= MAX_CLIENT_ID:
            client_id = None
            raise EngineError(
                "client_id must be a string of 1 to 64 characters", code="bad_message"
            )
        kind = message.get("type")
        command = COMMANDS.get(kind) if isinstance(kind, str) else None
        if command is None:
            raise EngineError(f"unknown message type {kind!r}", code="unknown_type")
        extra = command(Context(table, user, scope), message) or {}
        dealers.after_command(table.pk, user, kind)  # a dealing command: its user deals
        return {
            "type": "reply",
            "client_id": client_id,
            "ok": True,
            **extra,
            "state": croupier_state(table),
        }
    except EngineError as exc:
        level = logging.WARNING if exc.code in BAD_INPUT else logging.INFO
        log.log(level, "table %s tablet %s: %s refused: %s", table.pk, _name(user), exc.code, exc)
        return error_reply(client_id, exc.code, exc.line())
    except Exception:  # still one reply; each command is one transaction, rolled back
        kind = message.get("type") if isinstance(message, dict) else None
        log.exception("table %s tablet %s: %r failed", table.pk, _name(user), kind)  # no password
        return error_reply(client_id, "server_error", "the server failed: nothing was changed")


BAD_INPUT = ("bad_json", "bad_message", "unknown_type", "missing_field")


def error_reply(client_id: str | None, code: str, message: str) -> dict[str, Any]:
    return {
        "type": "reply",
        "client_id": client_id,
        "ok": False,
        "error": {"code": code, "message": message},
    }


def _name(user: User) -> str:
    return user.get_username() if user is not None and user.is_authenticated else "anonymous"


def _field(message: dict[str, Any], name: str, kind: type, required: bool = True) -> Any:
    if name not in message or message[name] is None:
        if required:
            raise EngineError(f"{message['type']} needs {name}", code="missing_field")
        return None
    value = message[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise EngineError(f"{name} must be a {kind.__name__}", code="bad_message")
    return value


@dataclass(frozen=True)
class Context:
    """Who sends a command, at which table, over which socket."""

    table: Table
    user: User
    scope: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        return _name(self.user)

    def supervisor(self, message: dict[str, Any]) -> AbstractBaseUser:
        return check_supervisor(self.table, message.get("supervisor"), self.name, self.scope)


def _cmd_state(ctx: Context, message: dict[str, Any]) -> None:
    return None


def _cmd_open_table(ctx: Context, message: dict[str, Any]) -> None:
    open_table(ctx.table)
    log.info("table %s opened by %s", ctx.table.pk, ctx.name)


def _cmd_close_table(ctx: Context, message: dict[str, Any]) -> None:
    close_table(ctx.table, ctx.name)
    log.info("table %s closed by %s", ctx.table.pk, ctx.name)


def _cmd_close_bets(ctx: Context, message: dict[str, Any]) -> None:
    close_bets(ctx.table)


def _cmd_deal(ctx: Context, message: dict[str, Any]) -> dict[str, Any]:
    return {"scan": deal(ctx.table)}


def _cmd_burn(ctx: Context, message: dict[str, Any]) -> dict[str, Any]:
    return {"scan": deal(ctx.table, burn=True)}


def _cmd_manual_card(ctx: Context, message: dict[str, Any]) -> dict[str, Any]:
    card = _field(message, "card", str)
    burn = _field(message, "burn", bool, required=False) or False
    return {"scan": manual_card(ctx.table, card, burn)}


def _cmd_new_shoe(ctx: Context, message: dict[str, Any]) -> None:
    new_shoe(ctx.table)


def _cmd_void_round(ctx: Context, message: dict[str, Any]) -> None:
    supervisor = ctx.supervisor(message)
    reason = _field(message, "reason", str)
    round_id = _field(message, "round", int, required=False)
    void_current_round(ctx.table, supervisor, reason, round_id, ctx.name)


def _changes(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The cards to correct: ``changes`` (a list), or one card given by ``position`` or
    ``seq`` with ``card`` or ``burn`` in the message itself."""
    if message.get("changes") is not None:
        changes = message["changes"]
        if not isinstance(changes, list):
            raise EngineError("changes must be a list", code="bad_message")
        return changes
    return [{k: message.get(k) for k in ("position", "seq", "card", "burn") if k in message}]


def _cmd_correct_card(ctx: Context, message: dict[str, Any]) -> None:
    supervisor = ctx.supervisor(message)
    round_id = _field(message, "round", int, required=False)
    reason = _field(message, "reason", str, required=False) or ""
    correct_card(ctx.table, supervisor, _changes(message), round_id, reason, ctx.name)


def _cmd_resolve_dispute(ctx: Context, message: dict[str, Any]) -> None:
    supervisor = ctx.supervisor(message)
    resolution = _field(message, "resolution", str)
    round_id = _field(message, "round", int, required=False)
    reason = _field(message, "reason", str, required=resolution == "void") or ""
    changes = _changes(message) if resolution == "correct" else None
    resolve_dispute(ctx.table, supervisor, resolution, round_id, ctx.name, reason, changes)


def _cmd_discard_card(ctx: Context, message: dict[str, Any]) -> None:
    supervisor = ctx.supervisor(message)
    card = _field(message, "card", str, required=False)
    reason = _field(message, "reason", str)
    discard_card(ctx.table, supervisor, card, reason, ctx.name)


COMMANDS: dict[str, Callable[[Context, dict[str, Any]], dict[str, Any] | None]] = {
    "state": _cmd_state,
    "open_table": _cmd_open_table,
    "close_table": _cmd_close_table,
    "close_bets": _cmd_close_bets,
    "deal": _cmd_deal,
    "burn": _cmd_burn,
    "manual_card": _cmd_manual_card,
    "new_shoe": _cmd_new_shoe,
    "void_round": _cmd_void_round,
    "correct_card": _cmd_correct_card,
    "resolve_dispute": _cmd_resolve_dispute,
    "discard_card": _cmd_discard_card,
}


def _tell_stations_on_commit(table: Table, message: dict[str, Any]) -> None:
    """Every station and tablet hears ``message``, a change of the table that no input of a
    round caused (the table closed or opened, a new shoe), as an event of the table's newest
    round (a table that never had a round has nobody to tell)."""
    newest = table.rounds.order_by("-pk").first()
    if newest is not None:
        writer.publish_news(newest, [Notice("public", message)])


def _tell_tablets_on_commit(table: Table, what: str) -> None:
    """Other tablets of the table redraw (a change no table event announces)."""
    transaction.on_commit(
        lambda: broadcast.tell_croupier(table.pk, {"type": "changed", "what": what})
    )
