"""Soft meters: each station's and each table's counters, as a gaming machine keeps them
(total wagered, total won, games played, games won, cash-in, cash-out, voided stakes, tips,
the house's losses), kept in the same transaction as the ledger entries they count.

Only the ledger (payouts/ledger.py) calls ``add`` (every movement it writes) and
``count_games`` (a round settled, corrected after its settlement, or voided after it); the
meters are never written anywhere else. A money meter is the sum of the station's entries
of one kind (``KINDS``: its name and the sign that makes it count up); the games come from
the settled rounds' stakes and returns (``payouts.ledger.games``). A table's meters are the
sums of its stations' (its games are station games, as a bank of machines counts them).
``differences`` names every meter that is not what the ledger says (``manage.py
check_ledger``; docs/integrity.md, "Meters").

Each write is one upsert per kind of row (stations, table), money in whole cents. A batch of
station messages (stations/commands.py) adds its changes up and writes them once, at its
end (``batched``): a decision that doubles costs no query more. Until then they wait as
on-commit markers, so that a message's savepoint rolled back (a refused message) drops its
own.
"""

from __future__ import annotations

import threading
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db import connection, models, transaction

from payouts.models import LedgerEntry, Meters, StationMeter, TableMeter
from stations.models import Station
from tablehub import until_commit
from tablehub.models import Table
from tablehub.rows import insert_values

CENTS = Decimal(100)
# A ledger kind -> the meter that counts it and the sign that makes the meter count up.
KINDS: dict[str, tuple[str, int]] = {
    LedgerEntry.Kind.STAKE: ("total_wagered", -1),
    LedgerEntry.Kind.RETURN: ("total_won", 1),
    LedgerEntry.Kind.CASH_IN: ("cash_in", 1),
    LedgerEntry.Kind.CASH_OUT: ("cash_out", -1),
    LedgerEntry.Kind.REFUND: ("voided_stakes", 1),
    LedgerEntry.Kind.TIP: ("tips", -1),
    LedgerEntry.Kind.HOUSE_LOSS: ("house_losses", 1),
}
MONEY = tuple(name for name, _sign in KINDS.values())  # in cents: ``<name>_cents``
GAMES = ("games_played", "games_won")
COLUMNS = tuple(f"{name}_cents" for name in MONEY) + GAMES


def counted_as(kind: str, refunded: str | None = None) -> str:
    """The kind a movement is counted as (``KINDS``): its own, but a void's refund of a
    return (``refunded``: the kind of the entry it refunds), counted as a negative return,
    so that ``voided_stakes`` are the stakes voids gave back."""
    if kind == LedgerEntry.Kind.REFUND and refunded == LedgerEntry.Kind.RETURN:
        return LedgerEntry.Kind.RETURN
    return kind


def cents(amount: Decimal) -> int:
    """An amount of the ledger (two places) in whole cents."""
    return int(amount * CENTS)


def money(counted: int) -> Decimal:
    """Whole cents as an amount with two places."""
    return Decimal(counted).scaleb(-2)


def shown(meter: Meters | None) -> dict[str, Any]:
    """A row's meters as the API and the admin show them: money as Decimal, games as counts
    (no row yet: all zero)."""
    row = {name: getattr(meter, name, 0) for name in COLUMNS}
    return {
        **{name: money(row[f"{name}_cents"]) for name in MONEY},
        **{name: row[name] for name in GAMES},
    }


def of_station(station: Station) -> dict[str, Any]:
    """A station's meters, as the API shows them."""
    return _station_meters(station, StationMeter.objects.filter(pk=station.pk).first())


def of_table(table: Table) -> dict[str, Any]:
    """A table's meters and each of its stations', by name, as the API shows them."""
    rows = {m.station_id: m for m in StationMeter.objects.filter(table=table)}
    stations = [_station_meters(s, rows.get(s.pk)) for s in table.stations.order_by("name")]
    row = TableMeter.objects.filter(pk=table.pk).first()
    return {"table": table.pk, "name": table.name, **shown(row), "stations": stations}


def _station_meters(station: Station, row: StationMeter | None) -> dict[str, Any]:
    return {"station": station.pk, "name": station.name, "table": station.table_id, **shown(row)}


# -- counting --------------------------------------------------------------------------------


@dataclass
class Changes:
    """Meter changes by station (and its table), column -> how much to add."""

    stations: dict[int, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    tables: dict[int, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    table_of: dict[int, int] = field(default_factory=dict)

    def add(self, table_id: int, station_id: int, column: str, by: int) -> None:
        if by:
            self.stations[station_id][column] += by
            self.tables[table_id][column] += by
            self.table_of[station_id] = table_id

    def merge(self, other: Changes) -> None:
        for station_id, columns in other.stations.items():
            for column, by in columns.items():
                self.add(other.table_of[station_id], station_id, column, by)

    def __bool__(self) -> bool:
        return bool(self.stations)


def add(movements: Iterable[tuple[int, int, str, Decimal]]) -> None:
    """Count movements the ledger writes: (table id, station id, the kind counted
    (``counted_as``), the station side's amount)."""
    changes = Changes()
    for table_id, station_id, kind, amount in movements:
        name, sign = KINDS[kind]
        changes.add(table_id, station_id, f"{name}_cents", sign * cents(amount))
    _keep(changes)


def count_games(table_id: int, before: Mapping[int, bool], after: Mapping[int, bool]) -> None:
    """A round's games change from ``before`` to ``after`` (station id -> whether it won;
    empty: the round is no game, not settled or void): counted once at the settlement,
    counted again as a correction changed them, taken back by a void."""
    changes = Changes()
    for station_id in set(before) | set(after):
        played = (station_id in after) - (station_id in before)
        won = bool(after.get(station_id)) - bool(before.get(station_id))
        changes.add(table_id, station_id, "games_played", played)
        changes.add(table_id, station_id, "games_won", won)
    _keep(changes)


# -- writing ---------------------------------------------------------------------------------


class _Batch(threading.local):
    depth: int = 0


_BATCH = _Batch()


class _Waiting:
    """Changes waiting for the batch's write, as an on-commit marker: a savepoint rolled back
    drops them with the entries they count."""

    def __init__(self, changes: Changes) -> None:
        self.changes: Changes | None = changes

    def __call__(self) -> None:
        pass  # written by ``write_waiting`` before the commit


@contextmanager
def batched() -> Iterator[None]:
    """Inside: the meters' changes wait and are written once, at the end (a batch of
    station messages, in its transaction; not inside a message's savepoint)."""
    _BATCH.depth += 1
    try:
        yield
        write_waiting()
    finally:
        _BATCH.depth -= 1


def write_waiting() -> None:
    """Write the changes waiting in this transaction, added up."""
    changes = Changes()
    for waiting in until_commit.waiting(_Waiting):
        if waiting.changes is not None:
            changes.merge(waiting.changes)
            waiting.changes = None
    _write(changes)


def _keep(changes: Changes) -> None:
    if not changes:
        return
    if _BATCH.depth and connection.in_atomic_block:
        transaction.on_commit(_Waiting(changes))
    else:
        _write(changes)


def _write(changes: Changes) -> None:
    """Add the changes to the meters: one upsert of the stations' rows, one of the tables'."""
    if not changes:
        return
    with transaction.atomic(savepoint=False):  # with the entries, even outside a transaction
        add_counts(
            StationMeter,
            ["station_id", "table_id"],
            COLUMNS,
            [([s, changes.table_of[s]], c) for s, c in sorted(changes.stations.items())],
        )
        add_counts(
            TableMeter, ["table_id"], COLUMNS, [([t], c) for t, c in sorted(changes.tables.items())]
        )


def add_counts(
    model: type[models.Model],
    keys: list[str],
    counted: Sequence[str],
    rows: Sequence[tuple[Sequence[int], Mapping[str, int]]],
) -> None:
    """Insert each row (its ``keys``' values, then its ``counted`` columns' counts), or add
    its counts to the row there, in one statement (``insert_values``' ``add``): an
    addition, so two writers never lose a count. The meters' rows, and the ledger's kept
    credits (payouts/ledger.py). On PostgreSQL the rows go as one JSON parameter: with a
    placeholder per value, a settlement of 1000 stations spent 39 ms of the database
    thread's CPU binding the meters' 11 000 values (docs/benchmarks.md)."""
    insert_values(
        model,
        [
            dict(zip(keys, key, strict=True))
            | {column: counts.get(column, 0) for column in counted}
            for key, counts in rows
        ],
        update_on=keys[:1],
        add=counted,
    )


# -- checking --------------------------------------------------------------------------------


def differences(
    expected: Mapping[int, Counter[str]], tables: Mapping[int, Counter[str]]
) -> list[str]:
    """Every meter that is not what the ledger says, one line each; ``expected``: each
    station's meters from the ledger (station id -> column -> count), ``tables``: each
    table's, from the entries in its books (a station that moved between the tables of its
    stadium counts at each table for what it did there)."""
    kept = {m.station_id: m for m in StationMeter.objects.all()}
    ids = set(expected) | set(kept)
    names = dict(Station.objects.filter(pk__in=ids).values_list("pk", "name"))
    broken: list[str] = []
    for station_id in sorted(ids):
        broken += _compare(
            f"station {station_id} ({names[station_id]})",
            kept.get(station_id),
            expected.get(station_id),
        )
    table_rows = {m.table_id: m for m in TableMeter.objects.all()}
    for table_id in sorted(set(tables) | set(table_rows)):
        broken += _compare(f"table {table_id}", table_rows.get(table_id), tables.get(table_id))
    return broken


def station_moved(station_id: int, table_id: int) -> None:
    """A station moved to another table of its stadium: its meters' row names its new table
    (what it counted at the other stays in that table's meters)."""
    StationMeter.objects.filter(pk=station_id).update(table_id=table_id)


def _compare(who: str, meter: Meters | None, expected: Counter[str] | None) -> list[str]:
    kept = shown(meter)
    counted = expected if expected is not None else Counter()
    wanted: dict[str, Decimal | int] = {
        **{name: money(counted[f"{name}_cents"]) for name in MONEY},
        **{name: counted[name] for name in GAMES},
    }
    return [
        f"{who}'s meter {name} is {_text(kept[name])}, the ledger says {_text(wanted[name])}"
        for name in (*MONEY, *GAMES)
        if kept[name] != wanted[name]
    ]


def _text(value: Decimal | int) -> str:
    return f"{value:.2f}" if isinstance(value, Decimal) else str(value)
