"""A bet and a move to another table of the stadium, of one station at the same moment (two
server processes, two connections; stations/lobby.py): one of them wins, the other is
refused, and the station never has a bet at a table it has left. As in
test_bet_and_cash_out_race.py, a third connection holds the writes of both until both
commands are under way. PostgreSQL only: with CI=true it runs, never skips."""

import threading
import time
from decimal import Decimal

import psycopg
import pytest
from django.db import connection

from payouts import ledger
from payouts.models import LedgerEntry
from rounds import writer
from rounds.models import Bet
from stations.commands import handle
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Stadium, Table
from tests.stations.test_bet_and_cash_out_race import a_table, waiting_backends

D = Decimal


@pytest.mark.django_db(transaction=True)
def test_a_bet_and_a_move_at_once_leave_bets_at_one_table_only(postgres_url):
    assert connection.vendor == "postgresql"
    table = a_table()
    stadium = Stadium.objects.create(name="Main floor")
    other = Table.objects.create(
        name="t2", jurisdiction=table.jurisdiction, stadium=stadium, is_open=True
    )
    Table.objects.filter(pk=table.pk).update(stadium=stadium)
    s1 = Station.objects.create(table=table, name="s1", stadium=stadium)
    cash_in(s1, "100", key="start")
    round = writer.open_round(table)
    params = connection.get_connection_params()
    conninfo = psycopg.conninfo.make_conninfo(
        **{k: v for k, v in params.items() if k in ("dbname", "user", "host", "port", "password")}
    )

    replies: dict[str, object] = {}

    def command(message: dict) -> None:
        try:
            station = Station.objects.get(pk=s1.pk)  # each "process" reads its own
            replies[message["type"]] = handle(station, message)
        except Exception as exc:  # reported by the assertions
            replies[message["type"]] = exc
        finally:
            connection.close()

    gate = psycopg.connect(conninfo)
    try:
        gate.execute(
            f"LOCK TABLE {Bet._meta.db_table}, {LedgerEntry._meta.db_table} IN EXCLUSIVE MODE"
        )
        threads = [
            threading.Thread(
                target=command,
                args=({"type": "place", "client_id": "bet", "box": 1, "amount": "10"},),
            ),
            threading.Thread(
                target=command,
                args=({"type": "move_table", "client_id": "move", "table": other.pk},),
            ),
        ]
        for thread in threads:
            thread.start()
        until = time.monotonic() + 10
        while waiting_backends(conninfo) < 2 and time.monotonic() < until:
            time.sleep(0.05)  # both wait: on the gate, or one on the gate, one on the other
    finally:
        gate.rollback()
        gate.close()
    for thread in threads:
        thread.join(30)

    place, move = replies["place"], replies["move_table"]
    assert isinstance(place, dict) and isinstance(move, dict), replies
    assert [place["ok"], move["ok"]].count(True) == 1, replies  # one wins, one is refused
    s1.refresh_from_db()
    stake = sum((b.stake for b in Bet.objects.filter(round=round, station=s1)), D(0))
    if place["ok"]:
        assert move["error"]["code"] == "bets_unsettled"
        assert (s1.table_id, stake) == (table.pk, D("10.00"))
    else:
        assert place["error"]["code"] == "unauthorized"  # it plays at the other table now
        assert (s1.table_id, stake) == (other.pk, D(0))
    assert ledger.balance(s1) == D("100.00")
    assert ledger.check() == []
