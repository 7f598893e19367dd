"""The tamper-evident log (rounds/chain.py, docs/integrity.md): every RoundEvent and ledger
entry is linked into its table's chain as it is written, ``verify_log`` recomputes the
chains, and a row changed, deleted or reordered with raw SQL is named with its kind of break.
The links are recomputed here with hashlib alone, from the documented format."""

import hashlib
import importlib
import json
import threading
from decimal import Decimal

import pytest
from django.apps import apps as django_apps
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from payouts import ledger
from payouts.models import LedgerEntry
from rounds import chain
from rounds.engine import RuleSet
from rounds.models import ChainHead, RoundEvent
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig
from tests.helpers import play

D = Decimal


def a_table(name: str = "t1") -> Table:
    jurisdiction, _ = Jurisdiction.objects.get_or_create(code="wa", defaults={"name": "WA"})
    table = Table.objects.create(name=name, jurisdiction=jurisdiction)
    TableConfig.objects.create(table=table, version=1, rules=RuleSet().to_dict())
    return table


def play_a_round(table: Table, station: Station) -> None:
    """Box 1: T T against the dealer's 9 up, 7 in the hole, 2 drawn; the station stands and wins."""
    play(table, [(station, 1, "main", "10")], "TS 9C TD 7D 2H", [(station.name, "stand")])


def a_played_table() -> Table:
    table = a_table()
    s1 = Station.objects.create(table=table, name="s1")
    cash_in(s1, "100", key="start")
    play_a_round(table, s1)
    play_a_round(table, s1)
    return table


def verify_log(*args: str) -> tuple[int, str]:
    """verify_log's exit status and what it wrote to stderr."""
    try:
        call_command("verify_log", *args)
    except CommandError as failed:
        return failed.returncode, str(failed)
    return 0, ""


def broken(capsys, *args: str) -> str:
    status, _ = verify_log(*args)
    assert status == 1
    return capsys.readouterr().err


def sql(statement: str, params=()) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


EVENTS = RoundEvent._meta.db_table
ENTRIES = LedgerEntry._meta.db_table


def recomputed(previous: str, content: dict) -> str:
    """The documented link, with hashlib and json alone."""
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return hashlib.sha256(bytes.fromhex(previous) + digest).hexdigest()


@pytest.mark.django_db
def test_every_row_is_linked_as_docs_integrity_says_and_the_log_verifies(capsys):
    table = a_played_table()
    previous = "0" * 64
    events = RoundEvent.objects.filter(round__table=table).order_by("chain_pos")
    assert [e.chain_pos for e in events] == list(range(1, events.count() + 1))
    for e in events:
        content = {
            "chain": "events",
            "table": table.pk,
            "round": e.round_id,
            "seq": e.seq,
            "kind": e.kind,
            "payload": e.payload,
            "at": e.created_at.astimezone(chain.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        }
        assert e.chain_link == recomputed(previous, content)
        previous = e.chain_link
    assert ChainHead.objects.get(table=table, chain="events").link == previous
    previous = "0" * 64
    entries = LedgerEntry.objects.filter(table=table).order_by("chain_pos")
    assert entries.count() == LedgerEntry.objects.count() == 10  # a cash-in, 2 x (stake, return)
    for e in entries:
        content = {
            "chain": "ledger",
            "table": table.pk,
            "round": e.round_id,
            "station": e.station_id,
            "kind": e.kind,
            "amount": f"{e.amount:.2f}",
            "key": e.key,
            "at": e.created_at.astimezone(chain.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        }
        assert e.chain_link == recomputed(previous, content)
        previous = e.chain_link
    assert ChainHead.objects.get(table=table, chain="ledger").link == previous
    assert verify_log() == (0, "")
    assert "the log verifies: 1 table(s)" in capsys.readouterr().out
    assert verify_log("--table", "t1") == (0, "")
    assert verify_log("--table", str(table.pk), "--since", "2000-01-01") == (0, "")


@pytest.mark.django_db
def test_a_changed_event_is_named(capsys):
    table = a_played_table()
    event = RoundEvent.objects.filter(round__table=table, kind="card").order_by("chain_pos")[2]
    sql(f"UPDATE {EVENTS} SET kind = 'burn' WHERE id = %s", [event.pk])  # a card made a burn
    err = broken(capsys)
    assert (
        f"table {table.pk} events: changed at position {event.chain_pos}: "
        f"event {event.pk} (round {event.round_id} #{event.seq})"
    ) in err
    assert "ledger" not in err  # the ledger's chain is intact


@pytest.mark.django_db
def test_a_changed_ledger_amount_is_named(capsys):
    a_played_table()
    entry = LedgerEntry.objects.filter(key__endswith=":s1/1/1:return").order_by("pk")[0]
    sql(f"UPDATE {ENTRIES} SET amount = amount + 5 WHERE id = %s", [entry.pk])
    err = broken(capsys, "--table", "t1")
    assert (
        f"ledger: changed at position {entry.chain_pos}: ledger entry {entry.pk} ({entry.key})"
        in err
    )


@pytest.mark.django_db
def test_a_deleted_event_is_named_missing(capsys):
    table = a_played_table()
    events = list(RoundEvent.objects.filter(round__table=table).order_by("chain_pos"))
    gone = events[3]
    sql(f"DELETE FROM {EVENTS} WHERE id = %s", [gone.pk])
    err = broken(capsys)
    assert (
        f"events: missing at position {gone.chain_pos}: position {gone.chain_pos}: 1 row(s) gone "
        f"after event {events[2].pk} (round {events[2].round_id} #{events[2].seq}), "
        f"before event {events[4].pk}"
    ) in err


@pytest.mark.django_db
def test_the_last_rows_deleted_are_named_missing_against_the_head(capsys):
    table = a_played_table()
    entries = list(LedgerEntry.objects.filter(table=table).order_by("chain_pos"))
    sql(f"DELETE FROM {ENTRIES} WHERE id IN (%s, %s)", [entries[-1].pk, entries[-2].pk])
    err = broken(capsys)
    assert (
        f"ledger: missing at position {entries[-2].chain_pos}: position {entries[-2].chain_pos}: "
        f"2 row(s) gone after ledger entry {entries[-3].pk}"
    ) in err


@pytest.mark.django_db
def test_events_whose_seqs_were_exchanged_are_named_reordered(capsys):
    table = a_played_table()
    round_id = RoundEvent.objects.filter(round__table=table).order_by("chain_pos")[0].round_id
    first, second = RoundEvent.objects.filter(round_id=round_id, seq__in=[2, 3]).order_by("seq")
    sql(f"UPDATE {EVENTS} SET seq = 999 WHERE id = %s", [first.pk])
    sql(f"UPDATE {EVENTS} SET seq = 2 WHERE id = %s", [second.pk])
    sql(f"UPDATE {EVENTS} SET seq = 3 WHERE id = %s", [first.pk])
    err = broken(capsys)
    assert (
        f"events: reordered at position {first.chain_pos}: event {first.pk} (round {round_id} #3): "
        "its seq was exchanged: it was written as #2"
    ) in err


@pytest.mark.django_db
def test_ledger_entries_moved_in_the_chain_are_named_reordered(capsys):
    table = a_played_table()
    entries = list(LedgerEntry.objects.filter(table=table).order_by("chain_pos"))
    a, b = entries[2], entries[5]
    sql(f"UPDATE {ENTRIES} SET chain_pos = NULL WHERE id = %s", [a.pk])
    sql(f"UPDATE {ENTRIES} SET chain_pos = %s WHERE id = %s", [a.chain_pos, b.pk])
    sql(f"UPDATE {ENTRIES} SET chain_pos = %s WHERE id = %s", [b.chain_pos, a.pk])
    err = broken(capsys)
    assert (
        f"ledger: reordered at position {a.chain_pos}: ledger entry {b.pk} ({b.key}): "
        f"it was written after ledger entry {entries[4].pk}"
    ) in err


@pytest.mark.django_db
def test_a_row_never_linked_is_named_added(capsys):
    table = a_played_table()
    s1 = Station.objects.get(name="s1")
    LedgerEntry.objects.bulk_create(
        [
            LedgerEntry(station=s1, table=table, kind="cash_in", amount=D("50"), key="forged"),
            LedgerEntry(table=table, kind="cash_in", amount=D("-50"), key="forged|house"),
        ]
    )
    err = broken(capsys)
    assert "ledger: added at no position: ledger entry" in err and "(forged)" in err


@pytest.mark.django_db
def test_since_starts_from_the_first_row_written_that_day_and_trusts_its_predecessor(capsys):
    table = a_played_table()
    events = list(RoundEvent.objects.filter(round__table=table).order_by("chain_pos"))
    # An old day's row, changed: --since a later day starts after it and trusts its link.
    sql(f"UPDATE {EVENTS} SET created_at = %s WHERE id = %s", ["2001-01-01 00:00:00", events[0].pk])
    today = events[1].created_at.date().isoformat()
    assert verify_log("--since", today) == (0, "")
    assert "events: changed at position 1" in broken(capsys)  # the whole chain: it is named
    sql(f"UPDATE {EVENTS} SET kind = 'burn' WHERE id = %s", [events[4].pk])
    assert f"events: changed at position 5: event {events[4].pk}" in broken(
        capsys, "--since", today
    )
    assert verify_log("--since", "2099-01-01") == (0, "")
    with pytest.raises(CommandError, match="not a date"):
        call_command("verify_log", "--since", "yesterday")
    with pytest.raises(CommandError, match="no table 'nope'"):
        call_command("verify_log", "--table", "nope")


@pytest.mark.django_db(transaction=True)
def test_chains_stay_whole_under_concurrent_writers():
    """Cash-ins on many stations, bets and a round's cards at once, on two tables: each chain
    is numbered without a gap or a repeat and verifies (the heads' lock orders them)."""
    tables = [a_table("t1"), a_table("t2")]
    stations = [Station.objects.create(table=t, name=f"s{i}") for t in tables for i in range(4)]
    for s in stations:
        cash_in(s, "100", key="start")
    start = threading.Barrier(len(stations) + len(tables))
    failures: list[BaseException] = []

    def cash(station: Station) -> None:
        try:
            start.wait(10)
            for i in range(5):
                cash_in(station, "1", key=f"more-{i}")
        except BaseException as exc:  # reported by the test
            failures.append(exc)
        finally:
            connection.close()

    def deal(table: Table) -> None:
        try:
            start.wait(10)
            play_a_round(table, Station.objects.get(table=table, name="s0"))
        except BaseException as exc:  # reported by the test
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=cash, args=(s,)) for s in stations]
    threads += [threading.Thread(target=deal, args=(t,)) for t in tables]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == []
    assert chain.verify([t.pk for t in tables]) == []
    for table in tables:
        positions = list(
            LedgerEntry.objects.filter(table=table)
            .order_by("chain_pos")
            .values_list("chain_pos", flat=True)
        )
        assert positions == list(range(1, 2 * (4 * 6 + 2) + 1))  # 24 cash-ins, a stake, a return
    assert ledger.check() == []


@pytest.mark.django_db
def test_an_archived_year_is_a_cut_not_a_gap(capsys):
    """docs/operations.md, Retention: the rows up to a cut are moved out and the chain's base
    set to the last of them; the rest verifies from it, recomputed whole or --since."""
    table = a_played_table()
    events = list(RoundEvent.objects.filter(round__table=table).order_by("chain_pos"))
    cut = events[6]
    for gone in events[: cut.chain_pos]:
        sql(f"DELETE FROM {EVENTS} WHERE id = %s", [gone.pk])
    assert "events: missing at position 1" in broken(capsys)  # not yet told where it starts
    head = ChainHead._meta.db_table
    sql(
        f"UPDATE {head} SET base_position = %s, base_link = %s "
        "WHERE table_id = %s AND chain = 'events'",
        [cut.chain_pos, cut.chain_link, table.pk],
    )
    assert verify_log() == (0, "")
    assert verify_log("--since", "2000-01-01") == (0, "")
    sql(f"UPDATE {EVENTS} SET kind = 'burn' WHERE id = %s", [events[7].pk])
    assert f"events: changed at position {cut.chain_pos + 1}: event {events[7].pk}" in broken(
        capsys
    )


@pytest.mark.django_db
def test_the_migration_links_the_rows_written_before_the_chains():
    table = a_played_table()
    links = dict(LedgerEntry.objects.values_list("pk", "chain_link"))
    sql(f"UPDATE {EVENTS} SET chain_pos = NULL, chain_link = ''")
    sql(f"UPDATE {ENTRIES} SET chain_pos = NULL, chain_link = '', table_id = NULL")
    sql(f"DELETE FROM {ChainHead._meta.db_table}")
    assert chain.verify([table.pk])[0].kind == "added"
    migration = importlib.import_module("rounds.migrations.0005_link_existing_rows")
    migration.link_existing_rows(django_apps, None)
    assert chain.verify([table.pk]) == []
    # Written in id order, as they were: the same links as when they were written.
    assert dict(LedgerEntry.objects.values_list("pk", "chain_link")) == links
