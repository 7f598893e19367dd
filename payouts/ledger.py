"""The credit ledger: the only writer of LedgerEntry, and the owner of its keys.

Every movement of money is two entries, the station's and the house's, that add up to zero.
A station's credits are the sum of its entries, kept as they are written in its
``StationCredits`` row, so that a balance is read in one row whatever the station's
history (``check`` compares the two). Each entry has a key, unique in the
database, so that nothing is written twice: a retried settlement finds its keys taken, and
two connections posting the same cash-in at once post it once (the constraint decides, not
a read before the write). Nothing updates or deletes an entry: a correction or a void is a
new, compensating entry. ``check`` verifies the books (``manage.py check_ledger``).

Keys are typed here and nowhere else (``CashKey``, ``ItemKey``, ``EntryKey``); their text,
which the database stores and game recall shows, is made and read only in this module:

- ``station:<station id>:cash_in:<client key>`` and ``...:cash_out:...``: a station's
  cash-in and cash-out;
- ``round:<round id>:<station>:<item>``: the first entry of one money item of a round for
  one station (the engine names the items: a bet's stake, a split, a double, insurance, a
  hand's or a special bet's return);
- ``...:c<seq>``: the item written again after a correction took it back (``seq``: the
  event that wrote it); ``...:corrected``: an entry a correction took back;
  ``...:void``: an entry a void refunded;
- ``round:<round id>:<station>:house_loss:<when>``: what a void (``when``: ``void``) or a
  correction (``c<seq>``) took back beyond the station's credits, the house's loss (or,
  negative, such a loss given back to the house when a later correction pays the station);
- ``station:<station id>:tip:<client key>``: a station's tip to the dealer;
- ``station:<station id>:move:<client key>:leave`` and ``...:arrive``: a station's credits
  leaving its table and arriving at another table of its stadium (``move``): the first in
  the table it leaves (its ``table`` and chain), the second in the table it arrives at, each
  with its house mirror; the station's two entries sum to zero, so its credits do not change;
- ``<station side's key>|house``: the house side of every movement but a tip;
  ``<station side's key>|tips``: a tip's other side, the table's tip account (``TIPS``).

No balance goes below zero. Every movement that takes money from a station is decided under
the station's row lock (``lock_credits``: after the round's lock, stations by id): a
cash-out pays the balance, a stake the credits do not cover is refused
(``insufficient_credits``), and what a void or a correction takes back beyond the credits is
the house's loss (``HOUSE_LOSS``), recorded on the round for a floor manager, never owed by
whoever plays the station next.

The soft meters (payouts/meters.py) count every movement written here, in the same
transaction, and the games of each settled round (``count_games``); ``check`` compares them
with the entries.
"""

from __future__ import annotations

import functools
import logging
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal
from typing import Any, NamedTuple

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import OuterRef, Subquery, Sum
from django.utils import timezone

from payouts import meters
from payouts.models import LedgerEntry, StationCredits
from rounds import chain
from rounds.engine import EngineError
from rounds.models import Round
from stations.models import Station
from tablehub import until_commit
from tablehub.compiled import CompiledQuery, Param
from tablehub.rows import insert_rows

log = logging.getLogger("tablehub.payouts")

CENT = Decimal("0.01")
HOUSE = "|house"  # the house side's key: the station side's key and this
TIPS = "|tips"  # a tip's other side, the table's tip account: the station side's key and this
_REVISION = re.compile(r"^(?P<item>.+):c(?P<seq>\d+)$")
_REVERSAL = ":corrected"
_REFUND = ":void"


# -- keys --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CashKey:
    """A station's cash-in, cash-out or tip, keyed by the cashier's or client's key."""

    station_id: int
    kind: str  # LedgerEntry.Kind.CASH_IN, CASH_OUT or TIP
    client_key: str

    def text(self) -> str:
        return f"station:{self.station_id}:{self.kind}:{self.client_key}"


class ItemKey(NamedTuple):
    """One money item of a round for one station, as the engine names it. A named tuple,
    not a dataclass: every card and every settlement makes one for each station's each
    item and looks it up in the books (at 1000 stations, half the time of a frozen
    dataclass's)."""

    round_id: int
    station: str
    item: str

    def text(self) -> str:
        return f"round:{self.round_id}:{self.station}:{self.item}"


@dataclass(frozen=True)
class EntryKey:
    """A station's entry of a round: an item written (``revision``: the event that wrote it
    again after a correction, 0 for its first writing), taken back by a correction
    (``reversal``), or refunded by a void (``refund``)."""

    item: ItemKey
    revision: int = 0
    reversal: bool = False
    refund: bool = False

    def text(self) -> str:
        text = self.item.text()
        if self.revision:
            text += f":c{self.revision}"
        if self.reversal:
            text += _REVERSAL
        if self.refund:
            text += _REFUND
        return text

    @classmethod
    def parse(cls, text: str) -> EntryKey:
        refund = text.endswith(_REFUND)
        if refund:
            text = text.removesuffix(_REFUND)
        reversal = text.endswith(_REVERSAL)
        if reversal:
            text = text.removesuffix(_REVERSAL)
        revision = 0
        rewritten = _REVISION.match(text)
        if rewritten is not None:
            text, revision = rewritten["item"], int(rewritten["seq"])
        _round, round_id, station, item = text.split(":", 3)
        return cls(ItemKey(int(round_id), station, item), revision, reversal, refund)


@dataclass(frozen=True)
class LossKey:
    """The house's loss on a round for one station: what a void (``when``: ``void``) or the
    correction of event ``seq`` (``c<seq>``) took back beyond its credits, or gave back."""

    round_id: int
    station: str
    when: str

    def text(self) -> str:
        return f"round:{self.round_id}:{self.station}:house_loss:{self.when}"


@dataclass(frozen=True)
class MoveKey:
    """One side of a station's move between two tables of its stadium: its credits leaving
    the table it plays at (``leave``) or arriving at the other (``arrive``), keyed by the
    client's key so that a move sent again is written once."""

    station_id: int
    client_key: str
    side: str  # LEAVE or ARRIVE

    def text(self) -> str:
        return f"station:{self.station_id}:{LedgerEntry.Kind.MOVE}:{self.client_key}:{self.side}"


LEAVE, ARRIVE = "leave", "arrive"

Key = CashKey | EntryKey | LossKey | MoveKey


# -- locking -----------------------------------------------------------------------------------


def lock_credits(stations: Iterable[Station | int]) -> dict[int, Decimal]:
    """Lock the stations' rows and return their credits (station id -> balance), read under
    the locks. Every change of what a station's credits must cover takes these locks in one
    order: the round's row first (when there is one), then the stations' rows by id. A bet
    change, a cash-out, the close of bets and a void or correction that takes money back
    hold them, so none of them decides on credits another is changing.

    Inside a transaction the credits read are kept (``_CreditsRead``) until it adds to any
    station's credits: while it holds a station's lock no other transaction takes from them
    (another may add: a refund at a table the station left, which a kept read does not
    count until it is read again). A batch of doubles reads its stations' credits once."""
    ids = lock_stations(stations)
    if not connection.in_atomic_block:
        return balances(ids)
    known = _credits_read()
    missing = [station_id for station_id in ids if station_id not in known]
    if missing:
        read = _kept_cents(missing)
        transaction.on_commit(_CreditsRead(read))
        known |= read
    waiting = _waiting_cents(ids)
    return {station_id: meters.money(known[station_id] + waiting[station_id]) for station_id in ids}


class _CreditsRead:
    """Kept credits (cents, by station) this transaction read under the stations' locks, to
    be used again until it adds to any station's (``_add_credits`` forgets them): an
    on-commit marker, dropped with the savepoint that read them."""

    def __init__(self, cents: dict[int, int]) -> None:
        self.cents: dict[int, int] | None = cents

    def __call__(self) -> None:
        pass


def _credits_read() -> dict[int, int]:
    known: dict[int, int] = {}
    for read in until_commit.waiting(_CreditsRead):
        if read.cents is not None:
            known |= read.cents
    return known


class _StationsLocked:
    """This transaction holds the locks of these stations: an on-commit marker, dropped with
    the savepoint that took the locks if it rolls back (PostgreSQL releases them then too)."""

    def __init__(self, ids: Iterable[int]) -> None:
        self.ids = frozenset(ids)

    def __call__(self) -> None:
        pass


def _locked_here() -> set[int]:
    """The stations whose locks this transaction holds (``lock_stations``)."""
    held: set[int] = set()
    for locked in until_commit.waiting(_StationsLocked):
        held |= locked.ids
    return held


# A batch's betting stations locked (tablehub/compiled.py: its SQL built once).
_STATIONS_LOCKED = CompiledQuery(
    lambda: (
        Station.objects.select_for_update(no_key=True)
        .filter(pk__among=Param("ids"))
        .order_by("pk")
        .values_list("pk")
    )
)


def lock_stations(stations: Iterable[Station | int]) -> list[int]:
    """``lock_credits`` without reading them (the caller reads them next, under the locks);
    the stations' ids, in the order they were locked. A station this transaction has locked
    already is not locked again (a batch locks its betting stations once)."""
    stations = list(stations)
    ids = sorted({s if isinstance(s, int) else s.pk for s in stations})
    if ids and connection.in_atomic_block and set(ids) <= _locked_here():
        return ids
    if ids:
        # The chain heads of their tables first: a transaction that holds a station's lock
        # never waits for a chain head (rounds/chain.py, the lock order).
        tables = {s.table_id for s in stations if not isinstance(s, int)}
        if any(isinstance(s, int) for s in stations):
            tables |= set(Station.objects.filter(pk__among=ids).values_list("table_id", flat=True))
        chain.lock_heads(tables)
        _STATIONS_LOCKED.list(ids=ids)
        if connection.in_atomic_block:
            transaction.on_commit(_StationsLocked(ids))
    return ids


# -- writing -----------------------------------------------------------------------------------


def post(station: Station, round: Round | None, kind: str, amount: Decimal, key: Key) -> None:
    """Move ``amount`` to the station (negative: from it), the house taking the other side."""
    _post(round, [(station, kind, amount, key)])


def _post(
    round: Round | None,
    movements: Iterable[tuple[Station, str, Decimal, Key]],
    refunded: Mapping[Key, str] | None = None,
    tables: Mapping[Key, int] | None = None,
    wait: bool = False,
) -> int:
    """Several movements of one round in one insert, counted by the meters (a refund as the
    kind of the entry it refunds, ``refunded``; a move is not metered); a movement of 0.00
    moves nothing. Each movement is in the books of the station's table, or of the table
    ``tables`` gives for its key (a move's arrival). With ``wait`` (a batch's round items)
    the entries wait to be written with the batch's others (``write_waiting``)."""
    entries: list[LedgerEntry] = []
    counted: list[tuple[int, int, str, Decimal]] = []
    at = timezone.now()
    # The entries name their station and round by id: an object set through a foreign key
    # is checked and cached per row.
    round_id = round.pk if round is not None else None
    for station, kind, amount, key in movements:
        if not amount:
            continue
        text = key.text()
        # Both sides in the chain of the round's table, else the station's (rounds/chain.py):
        # a void of a round at a table the station has left since is in that table's books.
        table = (tables or {}).get(key, round.table_id if round is not None else station.table_id)
        if kind != LedgerEntry.Kind.MOVE:
            counted.append(
                (table, station.pk, meters.counted_as(kind, (refunded or {}).get(key)), amount)
            )
        entries += [
            LedgerEntry(
                station_id=station.pk,
                round_id=round_id,
                kind=kind,
                amount=amount,
                key=text,
                table_id=table,
                created_at=at,
            ),
            LedgerEntry(
                station_id=None,
                round_id=round_id,
                kind=kind,
                amount=-amount,
                key=text + other_side(kind),
                table_id=table,
                created_at=at,
            ),
        ]
    if wait and connection.in_atomic_block:
        if entries:
            transaction.on_commit(_WaitingEntries(entries, counted))
    else:
        # The chain takes entries in their order, and a batch writes those waiting before
        # any message but a decision or a bet (rounds/writer.py ``flush``): none may wait.
        assert not _waiting(), "entries posted at once while a batch's entries wait"
        _write(entries, counted)
    return len(entries) // 2


class _WaitingEntries:
    """A batch's round entries posted but not yet written (``_post`` with ``wait``): the
    batch writes them together (``write_waiting``, from the round writer's ``flush``). An
    on-commit callback, so that a refused message's savepoint drops them with the rest of
    what it did; the credits read meanwhile count them (``balances``)."""

    def __init__(
        self, entries: list[LedgerEntry], counted: list[tuple[int, int, str, Decimal]]
    ) -> None:
        self.entries: list[LedgerEntry] | None = entries
        self.counted = counted
        self.cents = _station_cents(entries)  # what they add to each station's credits

    def __call__(self) -> None:
        # Written by ``write_waiting`` before the commit: entries still here were lost with
        # it (a caller posted with ``wait`` and never wrote them), which no test may pass.
        if self.entries is not None:
            raise AssertionError(f"{len(self.entries)} ledger entries were never written")


def _waiting() -> list[_WaitingEntries]:
    return [w for w in until_commit.waiting(_WaitingEntries) if w.entries is not None]


def write_waiting() -> None:
    """Write this transaction's entries that wait (``_post`` with ``wait``), in the order
    they were posted: one link into the chains, one insert, one addition to the credits.
    Not inside a message's savepoint: one rolled back after the insert would take the rows
    with it."""
    waiting = _waiting()
    entries: list[LedgerEntry] = []
    counted: list[tuple[int, int, str, Decimal]] = []
    for posted in waiting:
        assert posted.entries is not None
        entries += posted.entries
        counted += posted.counted
        posted.entries = None
    _write(entries, counted)


def _waiting_cents(station_ids: Iterable[int]) -> Counter[int]:
    """What the entries waiting to be written add to these stations' credits, in cents: each
    posting's sum, made once (a batch of 256 doubles asks 256 times)."""
    wanted = set(station_ids)
    added: Counter[int] = Counter()
    for posted in _waiting():
        for station_id, cents in posted.cents.items():
            if station_id in wanted:
                added[station_id] += cents
    return added


def _station_cents(entries: Iterable[LedgerEntry]) -> Counter[int]:
    """What station entries add to their stations' credits, in cents, by station id."""
    added: Counter[int] = Counter()
    for entry in entries:
        if entry.station_id is not None:
            added[entry.station_id] += meters.cents(entry.amount)
    return added


def _write(entries: list[LedgerEntry], counted: list[tuple[int, int, str, Decimal]]) -> None:
    if entries:
        chain.link_entries(entries)  # linked in this transaction, in this order
        insert_rows(LedgerEntry, entries)
        _add_credits(entries)
        meters.add(counted)


def _add_credits(entries: Iterable[LedgerEntry]) -> None:
    """Add the station entries just written to their stations' credits (``StationCredits``),
    one upsert for all, stations by id (the lock order). An addition, not a value read and
    written back: two transactions writing entries of one station (a void at the table it
    left, a bet at its new one) each add their own."""
    added = _station_cents(entries)
    rows = [([station_id], {"cents": cents}) for station_id, cents in sorted(added.items())]
    meters.add_counts(StationCredits, ["station_id"], ["cents"], rows)
    # The credits read before are no longer what the rows hold (kept even if a savepoint
    # undoes this addition: a read again is never wrong).
    for read in until_commit.waiting(_CreditsRead):
        read.cents = None


def other_side(kind: str) -> str:
    """The suffix of the key of a movement's other side: the house's, or for a tip the
    table's tip account."""
    return TIPS if kind == LedgerEntry.Kind.TIP else HOUSE


def _side_name(kind: str) -> str:
    return "tip account" if kind == LedgerEntry.Kind.TIP else "house"


def _post_once(station: Station, kind: str, amount: Decimal, key: CashKey) -> bool:
    """``post``, unless ``key`` is taken (a resent cash-in, say): False then, and nothing is
    written. The unique key decides, so two connections posting one key at once write it
    once."""
    try:
        with transaction.atomic():  # a savepoint: the caller's transaction goes on
            post(station, None, kind, amount, key)
    except IntegrityError:
        if not LedgerEntry.objects.filter(key=key.text()).exists():
            raise  # another constraint broke: not a repeat
        return False
    return True


def cash_in(station: Station, amount: Decimal, client_key: str) -> bool:
    """Credit a cash-in once per ``client_key``; False when it was credited already. Raises
    EngineError, writing nothing, for a cash-in above ``TABLEHUB_MAX_CASH_IN``
    (``amount_too_large``) or one that would take the balance above
    ``TABLEHUB_MAX_BALANCE`` (``balance_limit``): every entry and balance fits the ledger.
    (The balance is read without a lock: cash-ins at the same moment may pass the limit
    together, by less than the headroom the ledger's column keeps.)"""
    key = CashKey(station.pk, LedgerEntry.Kind.CASH_IN, client_key)
    most = settings.TABLEHUB_MAX_CASH_IN
    if amount > most:
        raise EngineError(
            f"a cash-in is at most {money(most)}, not {money(amount)}",
            station.name,
            code="amount_too_large",
        )
    limit, credits = settings.TABLEHUB_MAX_BALANCE, balance(station)
    if credits + amount > limit and not LedgerEntry.objects.filter(key=key.text()).exists():
        raise EngineError(
            f"credits {money(credits)} and a cash-in of {money(amount)} would be above the "
            f"most a station may hold, {money(limit)}",
            station.name,
            code="balance_limit",
        )
    return _post_once(station, LedgerEntry.Kind.CASH_IN, amount, key)


def cash_out(station: Station, client_key: str) -> Decimal:
    """Pay out the station's whole balance once per ``client_key`` (the caller holds the
    round's and the station's locks, ``lock_credits``, and has checked it has no bets on the
    table); the amount paid."""
    credits = balance(station)
    if credits <= 0:
        return Decimal("0.00")
    key = CashKey(station.pk, LedgerEntry.Kind.CASH_OUT, client_key)
    return credits if _post_once(station, LedgerEntry.Kind.CASH_OUT, -credits, key) else credits


def tip(station: Station, amount: Decimal, client_key: str) -> bool:
    """Move ``amount`` from the station to its table's tip account once per ``client_key``
    (the caller holds the station's lock and has checked that its credits cover it); False
    when it was moved already."""
    key = CashKey(station.pk, LedgerEntry.Kind.TIP, client_key)
    return _post_once(station, LedgerEntry.Kind.TIP, -amount, key)


def lock_for_move(station: Station, to_table_id: int) -> Decimal:
    """Lock what a move of the station to ``to_table_id`` writes, in the lock order (after
    the round's lock of the table it leaves, which the caller holds): the chain heads of
    both tables, then the station's row; its credits, read under the lock."""
    chain.lock_heads([station.table_id, to_table_id])
    return lock_credits([station])[station.pk]


def move(station: Station, to_table_id: int, client_key: str) -> Decimal:
    """Move the station's credits from its table's books to those of ``to_table_id``, another
    table of its stadium, once per ``client_key`` (the caller holds ``lock_for_move`` and has
    checked that the station has no bet on its table's open round; ``station.table_id`` is
    still the table it leaves). Two movements: the credits leave the table (``leave``, in its
    chain) and arrive at the other (``arrive``, in that table's chain), each with its house
    mirror: the station's two entries sum to zero, so its credits do not change. The amount
    moved: 0.00 with no credits (nothing is written), and a move already written under
    ``client_key`` is not written again (its amount)."""
    meters.station_moved(station.pk, to_table_id)  # its meters' row names its new table
    credits = balance(station)
    if credits <= 0:
        return Decimal("0.00")
    leave = MoveKey(station.pk, client_key, LEAVE)
    arrive = MoveKey(station.pk, client_key, ARRIVE)
    kind = LedgerEntry.Kind.MOVE
    try:
        with transaction.atomic():  # a savepoint: the caller's transaction goes on
            _post(
                None,
                [(station, kind, -credits, leave), (station, kind, credits, arrive)],
                tables={arrive: to_table_id},
            )
    except IntegrityError:
        moved = LedgerEntry.objects.filter(key=arrive.text()).values_list("amount", flat=True)
        if not moved:
            raise  # another constraint broke: not a repeat
        return money(moved[0])
    return credits


@dataclass
class RoundBooks:
    """What a round's station entries hold, item by item, kept current by whoever writes
    the round's money (the round writer keeps it with its engine)."""

    now: dict[ItemKey, tuple[EntryKey, Decimal]] = field(default_factory=dict)
    taken: set[ItemKey] = field(default_factory=set)  # items whose first key is taken
    lost: dict[str, Decimal] = field(default_factory=dict)  # station -> the house's loss


def round_books(round: Round | int) -> RoundBooks:
    """The round's books (of the round, or the round's id) as the database has them."""
    books = RoundBooks()
    rows = LedgerEntry.objects.filter(
        round=round,
        station__isnull=False,
        kind__in=[LedgerEntry.Kind.STAKE, LedgerEntry.Kind.RETURN, LedgerEntry.Kind.HOUSE_LOSS],
    ).values_list("key", "kind", "amount")
    amounts: dict[str, Decimal] = {}  # key text -> amount
    for text, kind, amount in rows:
        if kind == LedgerEntry.Kind.HOUSE_LOSS:
            station = text.split(":", 3)[2]
            books.lost[station] = books.lost.get(station, Decimal(0)) + amount
        else:
            amounts[text] = amount
    for text, amount in amounts.items():
        key = _entry_key(text)
        if key.refund:
            continue
        if key.revision == 0 and not key.reversal:
            books.taken.add(key.item)
        # Keys are written as ``EntryKey.text`` gives them: a key's reversal is its text
        # and the reversal's suffix (a refund is not reversed).
        if not key.reversal and text + _REVERSAL not in amounts:
            books.now[key.item] = (key, amount)
    return books


@functools.lru_cache(maxsize=65_536)
def _entry_key(text: str) -> EntryKey:
    """``EntryKey.parse``, remembered: the books of a round are read again after every
    batch another server process wrote (rounds/writer.py), thousands of keys each time, and
    a key (frozen) never changes."""
    return EntryKey.parse(text)


def post_round_items(
    round: Round,
    stations: Mapping[str, Station],
    items: Mapping[ItemKey, Decimal],
    books: RoundBooks,
    seq: int,
    wait: bool = False,
) -> int:
    """Post each item of ``items`` the books do not hold yet (stakes negative, returns
    positive); an item whose first key a correction took back is written under the event
    ``seq`` that writes it again. With ``wait`` (a batch's held round) the entries wait to
    be written with the batch's others (``write_waiting``). Returns how many movements were
    posted."""
    movements = [
        _written(books, stations, item, amount, seq)
        for item, amount in items.items()
        if item not in books.now
    ]
    return _post_covered(round, movements, books, f"s{seq}", refuse=True, wait=wait)


def _written(
    books: RoundBooks, stations: Mapping[str, Station], item: ItemKey, amount: Decimal, seq: int
) -> tuple[Station, str, Decimal, Key]:
    """The movement that writes ``item`` (again, under ``seq``, if its first key is taken),
    entered in the books."""
    key = EntryKey(item, revision=seq if item in books.taken else 0)
    books.now[item] = (key, amount)
    books.taken.add(item)
    return (stations[item.station], _kind(amount), amount, key)


def bring_round_to(
    round: Round,
    stations: Mapping[str, Station],
    items: Mapping[ItemKey, Decimal],
    books: RoundBooks,
    seq: int,
) -> int:
    """Make the round's entries the corrected round's ``items``: an item the books lack is
    written, an entry the corrected round no longer has, or has with another amount, is
    taken back (same kind, opposite amount) and the new amount written under the
    correction's ``seq``. Returns how many movements were written."""
    movements: list[tuple[Station, str, Decimal, Key]] = []
    for item in sorted(set(books.now) | set(items), key=lambda i: i.text()):
        held = books.now.get(item)
        amount = items.get(item)
        if held is not None and amount is not None and held[1] == amount:
            continue
        if held is not None:  # no longer in the round, or another amount: taken back
            key, was = held
            station = stations.get(item.station) or _station_of(round, key)
            movements.append((station, _kind(was), -was, replace(key, reversal=True)))
            del books.now[item]
        if amount is not None:
            movements.append(_written(books, stations, item, amount, seq))
    return _post_covered(round, movements, books, f"c{seq}")


def refund_round(round: Round) -> int:
    """Reverse every station entry of the round (stakes and returns, those of corrections
    too) with a refund: each station is back where it was before the round. A second refund
    finds its keys taken and fails whole. Returns how many entries were refunded."""
    entries = (
        LedgerEntry.objects.filter(
            round=round,
            station__isnull=False,
            kind__in=[LedgerEntry.Kind.STAKE, LedgerEntry.Kind.RETURN],
        )
        .select_related("station")
        .order_by("pk")
    )
    refunds: list[tuple[Station, str, Decimal, Key]] = []
    refunded: dict[Key, str] = {}  # the meters count a refunded return off the returns
    stations: dict[str, Station] = {}
    for e in entries:
        assert e.station is not None  # the query takes the station entries only
        key = replace(EntryKey.parse(e.key), refund=True)
        refunds.append((e.station, LedgerEntry.Kind.REFUND, -e.amount, key))
        refunded[key] = e.kind
        stations[e.station.name] = e.station
    books = round_books(round)
    if round.phase == Round.Phase.SETTLED:  # its games are no longer games
        count_games(round, stations, games(books), {})
    _post_covered(round, refunds, books, "void", refunded=refunded)
    return len(refunds)


def games(books: RoundBooks) -> dict[str, bool]:
    """Each station's game in a settled round, by its entries now (station -> whether it
    won): a station plays when it has stakes standing, and wins when its returns are more
    than its stakes (a push is played, not won)."""
    staked: dict[str, Decimal] = defaultdict(Decimal)
    net: dict[str, Decimal] = defaultdict(Decimal)
    for item, (_key, amount) in books.now.items():
        net[item.station] += amount
        if amount < 0:
            staked[item.station] += amount
    return {name: net[name] > 0 for name, stakes in staked.items() if stakes < 0}


def count_games(
    round: Round,
    stations: Mapping[str, Station],
    before: Mapping[str, bool],
    after: Mapping[str, bool],
) -> None:
    """The meters count the round's games as ``after`` instead of ``before`` (``games``;
    empty: no game, before its settlement or after its void). The round writer calls it
    when a round settles and when a correction changes a settled round."""
    missing = (set(before) | set(after)) - set(stations)
    ids = {name: station.pk for name, station in stations.items()}
    if missing:  # a station no longer seated in a corrected round
        ids |= dict(
            Station.objects.filter(table_id=round.table_id, name__in=missing).values_list(
                "name", "pk"
            )
        )
    meters.count_games(
        round.table_id,
        {ids[name]: won for name, won in before.items()},
        {ids[name]: won for name, won in after.items()},
    )


def _post_covered(
    round: Round,
    movements: list[tuple[Station, str, Decimal, Key]],
    books: RoundBooks,
    when: str,
    refuse: bool = False,
    refunded: Mapping[Key, str] | None = None,
    wait: bool = False,
) -> int:
    """``_post`` the round's movements, never taking a station below zero. A station they
    take money from is locked (``lock_credits``) and its credits read: what they take beyond
    them is refused (``refuse``: a stake, ``insufficient_credits``) or is the house's loss
    (a void or a correction taking back, keyed ``when``). A station they pay first gives
    back the house's loss on this round, if any. Returns how many movements were written
    (the house's losses not counted)."""
    net: dict[str, Decimal] = defaultdict(Decimal)
    stations: dict[str, Station] = {}
    for station, _kind, amount, _key in movements:
        net[station.name] += amount
        stations[station.name] = station
    paying = [stations[name] for name, amount in net.items() if amount < 0]
    credits = lock_credits(paying) if paying else {}
    losses: list[tuple[Station, str, Decimal, Key]] = []
    for name, amount in sorted(net.items()):
        station = stations[name]
        after = credits[station.pk] + amount if amount < 0 else Decimal(0)
        lost = books.lost.get(name, Decimal(0))
        if after < 0 and refuse:
            raise EngineError(
                f"credits {money(credits[station.pk])} do not cover the stakes {money(-amount)}",
                name,
                code="insufficient_credits",
            )
        if after < 0:
            loss = -after  # what the station no longer has
        elif amount > 0 and lost > 0:
            loss = -min(amount, lost)  # the house gets its loss back first
        else:
            continue
        books.lost[name] = lost + loss
        losses.append((station, LedgerEntry.Kind.HOUSE_LOSS, loss, LossKey(round.pk, name, when)))
        log.warning(
            "round %s (%s): station %s %s %s: the house's loss on the round is now %s",
            round.pk,
            when,
            name,
            "could not give back" if loss > 0 else "was paid again and gave back",
            money(abs(loss)),
            money(books.lost[name]),
        )
    written = _post(round, movements + losses, refunded, wait=wait)
    return written - len(losses)


def _kind(amount: Decimal) -> str:
    return LedgerEntry.Kind.STAKE if amount < 0 else LedgerEntry.Kind.RETURN


def _station_of(round: Round, key: EntryKey) -> Station:
    """The station of an entry, read back (a station no longer seated in the corrected round)."""
    entry = LedgerEntry.objects.select_related("station").get(round=round, key=key.text())
    assert entry.station is not None
    return entry.station


# -- reading -----------------------------------------------------------------------------------


def money(total: Any) -> Decimal:
    """A sum of amounts as Decimal in cents on every database (SQLite's sum can come back as
    a float), never -0.00."""
    if total is None:
        return Decimal("0.00")
    if not isinstance(total, Decimal):
        total = Decimal(str(total))
    return total.quantize(CENT) + Decimal("0.00")  # adding zero turns -0.00 into 0.00


def balance(station: Station | int) -> Decimal:
    """A station's credits: the sum of its entries. One plain query, not the ORM's
    aggregate: it is read for every reply to a station (measured in docs/benchmarks.md, the
    aggregate's query building was a fifth of a bet's time on the database thread)."""
    station_id = station if isinstance(station, int) else station.pk
    return balances([station_id])[station_id]


# The kept credits of a batch's stations (tablehub/compiled.py: its SQL built once, the ids
# one parameter).
_KEPT_CREDITS = CompiledQuery(
    lambda: StationCredits.objects.filter(station_id__among=Param("ids")).values_list(
        "station_id", "cents"
    )
)


def balances(station_ids: Iterable[int]) -> dict[int, Decimal]:
    """Each station's credits, by station id, in one query (a batch's replies): their
    ``StationCredits`` rows (none: no entry yet, 0.00), with the entries this transaction
    has posted that wait to be written (``write_waiting``)."""
    ids = list(dict.fromkeys(station_ids))
    if not ids:
        return {}
    kept = _kept_cents(ids)
    waiting = _waiting_cents(ids) if connection.in_atomic_block else Counter()
    return {station_id: meters.money(kept[station_id] + waiting[station_id]) for station_id in ids}


def _kept_cents(ids: list[int]) -> dict[int, int]:
    """The stations' ``StationCredits`` rows, in cents, by station id (no row: 0)."""
    kept = dict(_KEPT_CREDITS.list(ids=ids))
    return {station_id: kept.get(station_id, 0) for station_id in ids}


_COLUMNS = {
    "amount": LedgerEntry._meta.get_field("amount").column,
    "table": LedgerEntry._meta.db_table,
    "station": LedgerEntry._meta.get_field("station").column,
    "kind": LedgerEntry._meta.get_field("kind").column,
    "id": LedgerEntry._meta.pk.column,
}
# Each station's entries from its first one on: the (station, first entry) pairs joined to
# the entries, so that each station's are read from the index ``ledger_station_since`` as a
# range that starts at its first entry, not as all of the station's entries filtered. The
# first of all the firsts, a constant, is what makes PostgreSQL's planner take that index
# (it cannot tell how much a join's ``>=`` leaves: with 2000 entries of history a station,
# it took the station's index and filtered, 70 ms a batch of 256 stations against 1 ms).
_SESSION_SQL = (
    "WITH since(station, first) AS (VALUES {{pairs}})"
    " SELECT {table}.{station}, {kind}, SUM({amount}) FROM since JOIN {table}"
    " ON {table}.{station} = since.station AND {table}.{id} >= since.first"
    " WHERE {table}.{id} >= %s GROUP BY {table}.{station}, {kind}"
).format(**_COLUMNS)


def cash_in_entry(station: Station, client_key: str) -> int | None:
    """The id of the station's entry of the cash-in keyed ``client_key`` (None: not credited):
    a player's session is counted from it (stations/protection.py)."""
    key = CashKey(station.pk, LedgerEntry.Kind.CASH_IN, client_key).text()
    return LedgerEntry.objects.filter(key=key).values_list("pk", flat=True).first()


def credits_around(station: Station, round: Round) -> tuple[Decimal, Decimal]:
    """The station's credits before its first entry of ``round`` and after its entries of
    that round (corrections and a void included): what recall at the station shows."""
    entries = LedgerEntry.objects.filter(station=station)
    of_round = entries.filter(round=round)
    first = of_round.order_by("pk").values_list("pk", flat=True).first()
    if first is None:
        credits = balance(station)
        return credits, credits
    before = money(entries.filter(pk__lt=first).aggregate(total=Sum("amount"))["total"])
    played = money(of_round.aggregate(total=Sum("amount"))["total"])
    return before, money(before + played)


# When each of a batch's stations' money last moved: its newest entry's time, one lookup of
# the ``ledger_station_since`` index a station, all in one statement (a GROUP BY would read
# every entry the stations ever had).
_LAST_ENTRIES_AT = CompiledQuery(
    lambda: (
        Station.objects.filter(pk__among=Param("ids"))
        .annotate(
            last=Subquery(
                LedgerEntry.objects.filter(station_id=OuterRef("pk"))
                .order_by("-pk")
                .values("created_at")[:1]
            )
        )
        .values_list("pk", "last")
    )
)


def last_entries_at(station_ids: Iterable[int]) -> dict[int, datetime | None]:
    """When each station's money last moved (a cash-in, a stake, a return), by station id
    (None: never): how long it has been idle (stations/protection.py). One query for any
    number of stations (a batch's replies)."""
    ids = list(dict.fromkeys(station_ids))
    if not ids:
        return {}
    found: dict[int, datetime | None] = dict(_LAST_ENTRIES_AT.list(ids=ids))
    return {station_id: found.get(station_id) for station_id in ids}


@dataclass(frozen=True)
class SessionMoney:
    """A station's money since an entry (a session's first cash-in): what was cashed in,
    staked and won, and ``net``, what play brought (returns, refunds and the house's
    losses less the stakes; negative: a loss). ``cash_in + net`` are the credits, until the
    cash-out."""

    cash_in: Decimal
    staked: Decimal
    won: Decimal
    net: Decimal


def sessions_money(first_entries: Mapping[int, int | None]) -> dict[int, SessionMoney]:
    """Each station's ``SessionMoney`` from its first entry on (station id -> the entry; None:
    a session from before the ledger was counted, all zero), in one plain query (a batch's
    replies read every station's: the ORM's query building cost more than the query)."""
    totals: dict[int, dict[str, Decimal]] = {station_id: {} for station_id in first_entries}
    since = {s: first for s, first in first_entries.items() if first is not None}
    if since:
        sql = _SESSION_SQL.format(pairs=", ".join(["(%s, %s)"] * len(since)))
        params = [*(value for pair in since.items() for value in pair), min(since.values())]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            for station_id, kind, total in cursor.fetchall():
                totals[station_id][kind] = money(total)
    return {station_id: _session_money(kinds) for station_id, kinds in totals.items()}


_NO_MONEY = Decimal("0.00")
_PLAY = (
    LedgerEntry.Kind.STAKE,
    LedgerEntry.Kind.RETURN,
    LedgerEntry.Kind.REFUND,
    LedgerEntry.Kind.HOUSE_LOSS,
)


def _session_money(totals: Mapping[str, Decimal]) -> SessionMoney:
    """``SessionMoney`` from a station's sums by kind, each already in cents (``money``):
    negating and adding them is exact, and adding 0.00 turns a -0.00 into 0.00 (a batch's
    replies read this for every station)."""
    staked = totals.get(LedgerEntry.Kind.STAKE)
    return SessionMoney(
        cash_in=totals.get(LedgerEntry.Kind.CASH_IN, _NO_MONEY),
        staked=_NO_MONEY if staked is None else _NO_MONEY - staked,
        won=totals.get(LedgerEntry.Kind.RETURN, _NO_MONEY),
        net=sum((totals[kind] for kind in _PLAY if kind in totals), _NO_MONEY),
    )


def station_round_totals(round: Round) -> dict[Station, dict[str, Decimal]]:
    """Each station's entries of a round summed by kind (``stake`` negative, ``return`` and
    ``refund`` as they moved the credits): what a void tells each station it got back."""
    rows = (
        LedgerEntry.objects.filter(round=round, station__isnull=False)
        .values_list("station", "kind")
        .annotate(total=Sum("amount"))
    )
    stations = Station.objects.in_bulk({station_id for station_id, _, _ in rows})
    totals: dict[Station, dict[str, Decimal]] = {}
    for station_id, kind, total in rows:
        totals.setdefault(stations[station_id], {})[kind] = money(total)
    return totals


def round_totals(round: Round) -> dict[str, Decimal]:
    """The stations' entries of a round summed by kind (stake, return, refund, the house's
    loss)."""
    rows = (
        LedgerEntry.objects.filter(round=round, station__isnull=False)
        .values_list("kind")
        .annotate(total=Sum("amount"))
    )
    return {kind: money(total) for kind, total in rows}


def check() -> list[str]:
    """Every broken invariant of the books, one line each (none: the books balance). The
    whole ledger and each round's entries sum to zero; each station's entry has its house
    mirror (same round, same kind, the opposite amount; a tip's: the table's tip account);
    each station's balance is exactly the sum of its entries, and never below zero; each
    station's and table's meters are what the entries say (payouts/meters.py)."""
    broken: list[str] = []
    columns = ("key", "station_id", "round_id", "kind", "amount", "table_id")
    rows = list(LedgerEntry.objects.values_list(*columns))
    total = sum((Decimal(str(r[4])) for r in rows), Decimal(0))
    if total != 0:
        broken.append(f"the whole ledger sums to {money(total)}, not 0.00")
    by_round: dict[int, Decimal] = defaultdict(Decimal)
    by_station: dict[int, Decimal] = defaultdict(Decimal)
    by_key = {r[0]: r for r in rows}
    counted: dict[int, Counter[str]] = defaultdict(Counter)  # the meters, from the entries
    # The tables' meters, from the entries in each table's books (a station that moved
    # between the tables of its stadium counted at each table for what it did there).
    by_table: dict[int, Counter[str]] = defaultdict(Counter)
    played: dict[tuple[int, int], list[Decimal]] = defaultdict(lambda: [Decimal(0)] * 2)
    # An entry's table: the one whose books hold it; an entry without one (written before
    # entries had their table) is its round's table's, else its station's.
    round_tables = dict(Round.objects.values_list("pk", "table_id"))
    station_tables = dict(Station.objects.values_list("pk", "table_id"))
    for key, station_id, round_id, kind, amount, table_id in rows:
        amount = Decimal(str(amount))
        if round_id is not None:
            by_round[round_id] += amount
        if station_id is None:
            continue
        by_station[station_id] += amount
        refunded = (
            by_key.get(key.removesuffix(_REFUND)) if kind == LedgerEntry.Kind.REFUND else None
        )
        if kind != LedgerEntry.Kind.MOVE:  # a move is not metered
            counted_kind = meters.counted_as(kind, refunded[3] if refunded else None)
            name, sign = meters.KINDS[counted_kind]
            counted[station_id][f"{name}_cents"] += sign * meters.cents(amount)
            if table_id is None:
                table_id = round_tables.get(round_id) or station_tables[station_id]
            by_table[table_id][f"{name}_cents"] += sign * meters.cents(amount)
        if round_id is not None and kind in (LedgerEntry.Kind.STAKE, LedgerEntry.Kind.RETURN):
            stakes_and_net = played[(round_id, station_id)]  # as ``games`` reads the books
            stakes_and_net[0] += amount if kind == LedgerEntry.Kind.STAKE else 0
            stakes_and_net[1] += amount
        mirror = by_key.get(key + other_side(kind))
        if mirror is None:
            broken.append(f"entry {key} has no {_side_name(kind)} mirror")
        elif mirror[1:4] != (None, round_id, kind) or Decimal(str(mirror[4])) != -amount:
            broken.append(f"entry {key} and its {_side_name(kind)} mirror do not match")
    for round_id, amount in sorted(by_round.items()):
        if amount != 0:
            broken.append(f"round {round_id}'s entries sum to {money(amount)}, not 0.00")
    names = dict(
        LedgerEntry.objects.filter(station__isnull=False)
        .values_list("station_id", "station__name")
        .distinct()
    )
    # The kept credits of every station with entries or a row (one with a row and no entry
    # must hold 0.00), all read at once.
    kept = dict(StationCredits.objects.values_list("station_id", "cents"))
    shown = {s: meters.money(kept.get(s, 0)) for s in sorted(set(by_station) | set(kept))}
    names |= dict(Station.objects.filter(pk__in=set(shown) - set(names)).values_list("pk", "name"))
    for station_id in shown:
        amount = by_station.get(station_id, Decimal(0))
        if amount < 0:
            broken.append(
                f"station {station_id} ({names[station_id]})'s balance {money(amount)} "
                "is below zero"
            )
        if shown[station_id] != amount:
            broken.append(
                f"station {station_id} ({names[station_id]})'s credits {shown[station_id]} are"
                f" not the sum of its entries, {money(amount)}"
            )
    settled = dict(Round.objects.filter(phase=Round.Phase.SETTLED).values_list("pk", "table_id"))
    for (round_id, station_id), (stakes, net) in played.items():
        if round_id in settled and stakes < 0:
            for games in (counted[station_id], by_table[settled[round_id]]):
                games["games_played"] += 1
                games["games_won"] += net > 0
    return broken + meters.differences(counted, by_table)
