"""The tamper-evident log: each table's two SHA-256 hash chains, one over its RoundEvent
rows (``events``) and one over its LedgerEntry rows (``ledger``), and their verification.

Every row carries its place in its table's chain (``chain_pos``, 1, 2, ...) and its link
(``chain_link``): SHA-256 of the previous row's link (32 zero bytes before the first row)
followed by SHA-256 of the row's canonical content. The format is written in
docs/integrity.md so that anyone can recompute it without this code; ``canonical_event`` and
``canonical_entry`` are that format and must never change.

Writing. Only the round writer (rounds/writer.py) and the ledger (payouts/ledger.py) call
``link_events`` and ``link_entries``, in the transaction that inserts the rows. Each table's
chain heads (``ChainHead``: the last position and link of each chain) are one locked pair of
rows: taken after the round's lock and before any station's (``lock_heads``, which
``ledger.lock_stations`` calls first), so the lock order stays table, shoe, round, chain
heads, stations, and a batch writing many events in one transaction locks them once (what
this transaction holds is found again in its pending on-commit callbacks, which Django drops
with a rolled-back savepoint, as the writer finds its engines).

Reading. ``verify_chain`` walks a chain in order and names the first row that breaks it:
``changed`` (its content or link is not what was written), ``missing`` (a position, or the
chain's last rows, gone), ``reordered`` (an intact row at another place than where it was
written: its position, or its seq within the round, exchanged with another row's) or
``added`` (a row that was never linked, or a position held twice).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from django.db import connection, transaction

from payouts.models import LedgerEntry
from rounds.models import ChainHead, RoundEvent
from tablehub import until_commit
from tablehub.compiled import CompiledQuery, CompiledUpdate, Param

EVENTS, LEDGER = ChainHead.Chain.EVENTS, ChainHead.Chain.LEDGER
CHAINS = (EVENTS, LEDGER)
GENESIS = "0" * 64  # the link before a chain's first row


# -- the format (docs/integrity.md) ---------------------------------------------------------


def timestamp(at: datetime) -> str:
    """A row's time in its canonical content: UTC, microseconds, ``Z``."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def canonical(content: dict[str, Any]) -> bytes:
    """JSON with sorted keys, no spaces, UTF-8."""
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def canonical_event(
    table_id: int, round_id: int, seq: int, kind: str, payload: Any, at: datetime
) -> bytes:
    return canonical(
        {
            "chain": "events",
            "table": table_id,
            "round": round_id,
            "seq": seq,
            "kind": kind,
            "payload": payload,
            "at": timestamp(at),
        }
    )


def canonical_entry(
    table_id: int,
    round_id: int | None,
    station_id: int | None,
    kind: str,
    amount: Decimal,
    key: str,
    at: datetime,
) -> bytes:
    return canonical(
        {
            "chain": "ledger",
            "table": table_id,
            "round": round_id,
            "station": station_id,
            "kind": kind,
            "amount": f"{Decimal(amount):.2f}",
            "key": key,
            "at": timestamp(at),
        }
    )


def link(previous: str, content: bytes) -> str:
    """The link of a row: SHA-256(previous link's 32 bytes + SHA-256(content)), in hex."""
    return hashlib.sha256(bytes.fromhex(previous) + hashlib.sha256(content).digest()).hexdigest()


# -- writing ---------------------------------------------------------------------------------


class _HeadsHeld:
    """The on-commit callback (it does nothing) that marks a table's chain heads as locked by
    this transaction, with their values as this transaction has written them."""

    def __init__(self, table_id: int, heads: dict[str, tuple[int, str]]) -> None:
        self.table_id = table_id
        self.heads: dict[str, tuple[int, str]] | None = heads

    def __call__(self) -> None:
        return None


def _held(table_id: int) -> _HeadsHeld | None:
    # Those of a rolled-back savepoint are gone, and the row locks it took with them.
    for callback in reversed(until_commit.waiting(_HeadsHeld)):
        if callback.table_id == table_id and callback.heads is not None:
            return callback
    return None


def lock_heads(table_ids: Iterable[int]) -> None:
    """Lock the chain heads of the tables (by id) until this transaction ends: after the
    round's lock, before the stations' (the module docstring). Locked once per transaction."""
    assert connection.in_atomic_block, "the chain heads are locked inside a transaction"
    wanted = sorted({t for t in table_ids if _held(t) is None})
    if not wanted:
        return
    rows = _locked_rows(wanted)
    if len(rows) < len(wanted) * len(CHAINS):  # a table's first row: its heads are made now
        ChainHead.objects.bulk_create(
            [
                ChainHead(table_id=t, chain=c, position=0, link=GENESIS)
                for t in wanted
                for c in CHAINS
            ],
            ignore_conflicts=True,
        )
        rows = _locked_rows(wanted)
    heads: dict[int, dict[str, tuple[int, str]]] = {t: {} for t in wanted}
    for table_id, chain, position, last in rows:
        heads[table_id][chain] = (position, last)
    for table_id in wanted:
        transaction.on_commit(_HeadsHeld(table_id, heads[table_id]))


# Every batch's first event locks its table's heads (tablehub/compiled.py: SQL built once).
_HEADS_LOCKED = CompiledQuery(
    lambda: (
        ChainHead.objects.select_for_update(no_key=True)
        .filter(table_id__among=Param("table_ids"))
        .order_by("table_id", "chain")
        .values_list("table_id", "chain", "position", "link")
    )
)


_HEAD_MOVED = CompiledUpdate(
    lambda: ChainHead.objects.filter(
        table_id=Param("table_id"), chain=Param("chain", ChainHead._meta.get_field("chain"))
    ),
    "position",
    "link",
)


def _locked_rows(table_ids: Sequence[int]) -> list[tuple[int, str, int, str]]:
    return _HEADS_LOCKED.list(table_ids=table_ids)


def _extend(table_id: int, chain: str, contents: Sequence[bytes]) -> list[tuple[int, str]]:
    """The positions and links of ``contents`` appended to the table's chain, and the head
    moved on (locked first if this transaction has not yet)."""
    lock_heads([table_id])
    held = _held(table_id)
    assert held is not None and held.heads is not None
    position, last = held.heads[chain]
    placed = []
    for content in contents:
        position, last = position + 1, link(last, content)
        placed.append((position, last))
    _HEAD_MOVED.run(table_id=table_id, chain=chain, position=position, link=last)
    # The new head belongs to this savepoint: if it is rolled back, so is the head's row, and
    # the next writer locks and reads it again.
    heads = dict(held.heads)
    heads[chain] = (position, last)
    held.heads = None
    transaction.on_commit(_HeadsHeld(table_id, heads))
    return placed


def link_events(table_id: int, events: Sequence[RoundEvent]) -> None:
    """Give new RoundEvent rows (not yet inserted, ``created_at`` set) their places and links
    in the table's events chain."""
    contents = [
        canonical_event(table_id, e.round_id, e.seq, e.kind, e.payload, e.created_at)
        for e in events
    ]
    for event, (position, chained) in zip(events, _extend(table_id, EVENTS, contents), strict=True):
        event.chain_pos, event.chain_link = position, chained


def link_entries(entries: Sequence[LedgerEntry]) -> None:
    """Give new LedgerEntry rows (not yet inserted, ``table_id`` and ``created_at`` set) their
    places and links in their tables' ledger chains, in their order."""
    by_table: dict[int, list[LedgerEntry]] = {}
    for entry in entries:
        assert entry.table_id is not None
        by_table.setdefault(entry.table_id, []).append(entry)
    for table_id in sorted(by_table):
        rows = by_table[table_id]
        contents = [_entry_content(table_id, e) for e in rows]
        for entry, (position, chained) in zip(
            rows, _extend(table_id, LEDGER, contents), strict=True
        ):
            entry.chain_pos, entry.chain_link = position, chained


def _entry_content(table_id: int, e: LedgerEntry) -> bytes:
    return canonical_entry(
        table_id, e.round_id, e.station_id, e.kind, e.amount, e.key, e.created_at
    )


# -- verifying -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Break:
    """The first row that breaks a chain."""

    table_id: int
    chain: str
    kind: str  # changed, missing, reordered, added
    position: int | None
    row: str  # the row named: "event 12 (round 3 #4)", "ledger entry 40 (key ...)"
    detail: str

    def line(self) -> str:
        where = f"position {self.position}" if self.position is not None else "no position"
        return (
            f"table {self.table_id} {self.chain}: {self.kind} at {where}: {self.row}: {self.detail}"
        )

    def as_data(self) -> dict[str, Any]:
        return {
            "chain": self.chain,
            "kind": self.kind,
            "position": self.position,
            "row": self.row,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class _Row:
    id: int
    position: int | None
    link: str
    content: bytes
    name: str
    round_id: int | None
    seq: int | None
    at: datetime
    # for an event: the content with another seq (a seq exchanged within its round)
    table_id: int = 0
    kind: str = ""
    payload: Any = None


def _event_rows(table_id: int, **filters: Any) -> Iterator[_Row]:
    rows = (
        RoundEvent.objects.filter(round__table_id=table_id, **filters)
        .order_by("chain_pos", "pk")
        .values_list(
            "pk", "chain_pos", "chain_link", "round_id", "seq", "kind", "payload", "created_at"
        )
    )
    for pk, position, chained, round_id, seq, kind, payload, at in rows.iterator(chunk_size=2000):
        yield _Row(
            pk,
            position,
            chained,
            canonical_event(table_id, round_id, seq, kind, payload, at),
            f"event {pk} (round {round_id} #{seq})",
            round_id,
            seq,
            at,
            table_id,
            kind,
            payload,
        )


def _entry_rows(table_id: int, **filters: Any) -> Iterator[_Row]:
    rows = (
        LedgerEntry.objects.filter(table_id=table_id, **filters)
        .order_by("chain_pos", "pk")
        .values_list(
            "pk",
            "chain_pos",
            "chain_link",
            "round_id",
            "station_id",
            "kind",
            "amount",
            "key",
            "created_at",
        )
    )
    for pk, position, chained, round_id, station_id, kind, amount, key, at in rows.iterator(
        chunk_size=2000
    ):
        content = canonical_entry(table_id, round_id, station_id, kind, amount, key, at)
        yield _Row(pk, position, chained, content, f"ledger entry {pk} ({key})", round_id, None, at)


def _rows(table_id: int, chain: str, **filters: Any) -> Iterator[_Row]:
    return _event_rows(table_id, **filters) if chain == EVENTS else _entry_rows(table_id, **filters)


def verify_chain(table_id: int, chain: str, since: datetime | None = None) -> Break | None:
    """The first break of the table's chain (None: every row verifies, and the last is the
    head). ``since``: from the first row written at or after it, its predecessor's link
    taken as written."""
    unlinked = _rows(table_id, chain, chain_pos__isnull=True)
    first_unlinked = next(iter(unlinked), None)
    if first_unlinked is not None:
        return Break(
            table_id, chain, "added", None, first_unlinked.name, "a row that was never linked"
        )
    base, base_link = _base(table_id, chain)
    expected, previous = base + 1, base_link
    filters: dict[str, Any] = {"chain_pos__gt": base}
    if since is not None:
        start = _first_since(table_id, chain, since)
        if start is None:
            return _check_head(table_id, chain, None, None)
        start = max(start, base + 1)
        expected, filters = start, {"chain_pos__gte": start}
        before = (
            next(_rows(table_id, chain, chain_pos=start - 1), None) if start > base + 1 else None
        )
        if start > base + 1 and before is None:
            return Break(
                table_id,
                chain,
                "missing",
                start - 1,
                f"position {start - 1}",
                "the row before the range is gone",
            )
        previous = before.link if before is not None else base_link
    last: _Row | None = None
    for row in _rows(table_id, chain, **filters):
        assert row.position is not None
        if row.position < expected:
            return Break(
                table_id,
                chain,
                "added",
                row.position,
                row.name,
                f"position {row.position} is held twice",
            )
        if row.position > expected:
            after = f"after {last.name}" if last is not None else "at the chain's start"
            return Break(
                table_id,
                chain,
                "missing",
                expected,
                f"position {expected}",
                f"{row.position - expected} row(s) gone {after}, before {row.name}",
            )
        if link(previous, row.content) != row.link:
            return _classify(table_id, chain, row, previous)
        previous, expected, last = row.link, expected + 1, row
    return _check_head(table_id, chain, last, expected - 1 if last is not None else None)


def _base(table_id: int, chain: str) -> tuple[int, str]:
    """Where the chain starts in this database: after the rows archived (ChainHead.base_*)."""
    base = (
        ChainHead.objects.filter(table_id=table_id, chain=chain)
        .values_list("base_position", "base_link")
        .first()
    )
    return base if base is not None else (0, GENESIS)


def _first_since(table_id: int, chain: str, since: datetime) -> int | None:
    model = (
        RoundEvent.objects.filter(round__table_id=table_id)
        if chain == EVENTS
        else LedgerEntry.objects.filter(table_id=table_id)
    )
    first = (
        model.filter(created_at__gte=since, chain_pos__isnull=False)
        .order_by("chain_pos")
        .values_list("chain_pos", flat=True)
        .first()
    )
    return first


def _check_head(table_id: int, chain: str, last: _Row | None, position: int | None) -> Break | None:
    """The chain ends at its head: the last row walked (``last`` at ``position``; None: no
    row walked, then the last row stored) is the head's position and link."""
    head = (
        ChainHead.objects.filter(table_id=table_id, chain=chain)
        .values_list("position", "link")
        .first()
    )
    if last is None:
        base, _ = _base(table_id, chain)
        stored = list(_rows(table_id, chain, chain_pos__gt=base))
        if not stored:
            if head is not None and head[0] > base:
                return Break(
                    table_id,
                    chain,
                    "missing",
                    base + 1,
                    f"position {base + 1}",
                    f"the head is at position {head[0]}, the chain has no row after {base}",
                )
            return None
        last = stored[-1]
        position = last.position
    assert position is not None
    if head is None:
        return Break(
            table_id,
            chain,
            "missing",
            None,
            "the chain's head",
            "the table has rows but no chain head",
        )
    if head[0] > position:
        return Break(
            table_id,
            chain,
            "missing",
            position + 1,
            f"position {position + 1}",
            f"{head[0] - position} row(s) gone after {last.name}, the last one written",
        )
    if head[0] < position or head[1] != last.link:
        return Break(
            table_id,
            chain,
            "changed",
            position,
            last.name,
            "the chain's head is not this row's link",
        )
    return None


def _classify(table_id: int, chain: str, row: _Row, previous: str) -> Break:
    """A row whose link does not verify: moved (reordered), or changed."""
    assert row.position is not None
    # An intact row in another place: its link verifies after another row's link.
    for other in _rows(table_id, chain, chain_pos__isnull=False):
        if other.id != row.id and link(other.link, row.content) == row.link:
            return Break(
                table_id,
                chain,
                "reordered",
                row.position,
                row.name,
                f"it was written after {other.name}",
            )
    if link(GENESIS, row.content) == row.link and row.position != 1:
        return Break(table_id, chain, "reordered", row.position, row.name, "it was written first")
    if chain == EVENTS and row.round_id is not None:
        seqs = (
            RoundEvent.objects.filter(round_id=row.round_id)
            .exclude(pk=row.id)
            .values_list("seq", flat=True)
        )
        for seq in seqs:
            moved = canonical_event(table_id, row.round_id, seq, row.kind, row.payload, row.at)
            if link(previous, moved) == row.link:
                return Break(
                    table_id,
                    chain,
                    "reordered",
                    row.position,
                    row.name,
                    f"its seq was exchanged: it was written as #{seq}",
                )
    return Break(
        table_id,
        chain,
        "changed",
        row.position,
        row.name,
        "its content or link is not what was written",
    )


def verify(table_ids: Iterable[int], since: datetime | None = None) -> list[Break]:
    """The first break of each chain of the tables (empty: they all verify)."""
    breaks = []
    for table_id in table_ids:
        for chain in CHAINS:
            found = verify_chain(table_id, chain, since)
            if found is not None:
                breaks.append(found)
    return breaks


def verify_rows(table_id: int, chain: str, rows: Sequence[_Row]) -> Break | None:
    """Each of ``rows`` (one round's, in chain order) checked against its predecessor's link
    as stored: a local check, for game recall."""
    if not rows:
        return None
    positions = [r.position for r in rows if r.position is not None]
    before = {
        r.position: r.link for r in _rows(table_id, chain, chain_pos__in=[p - 1 for p in positions])
    }
    base, base_link = _base(table_id, chain)
    for row in rows:
        if row.position is None:
            return Break(table_id, chain, "added", None, row.name, "a row that was never linked")
        previous = base_link if row.position == base + 1 else before.get(row.position - 1)
        if previous is None:
            return Break(
                table_id,
                chain,
                "missing",
                row.position - 1,
                f"position {row.position - 1}",
                f"the row before {row.name} is gone",
            )
        if link(previous, row.content) != row.link:
            return _classify(table_id, chain, row, previous)
    return None


def round_integrity(round_id: int, table_id: int) -> dict[str, Any]:
    """Whether the links of the round's events and ledger entries verify against their
    predecessors (game recall): ``verified``, how many rows of each chain, the first break."""
    events = list(_event_rows(table_id, round_id=round_id))
    entries = list(_entry_rows(table_id, round_id=round_id))
    found = verify_rows(table_id, EVENTS, events) or verify_rows(table_id, LEDGER, entries)
    return {
        "verified": found is None,
        "events": len(events),
        "ledger_entries": len(entries),
        "break": found.as_data() if found is not None else None,
    }


def heads_at(table_id: int, end: datetime) -> dict[str, dict[str, Any]]:
    """Each chain's last row written before ``end``: its position and link (the table
    report publishes them, so that a history rewritten later cannot match them)."""
    found: dict[str, dict[str, Any]] = {}
    for chain in CHAINS:
        model = (
            RoundEvent.objects.filter(round__table_id=table_id)
            if chain == EVENTS
            else LedgerEntry.objects.filter(table_id=table_id)
        )
        last = (
            model.filter(created_at__lt=end, chain_pos__isnull=False)
            .order_by("-chain_pos")
            .values_list("chain_pos", "chain_link")
            .first()
        )
        position, chained = last if last is not None else (0, GENESIS)
        found[chain] = {"position": position, "link": chained}
    return found
