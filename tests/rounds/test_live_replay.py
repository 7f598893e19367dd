"""Every golden round replayed live (play_scenario --live): the real server in this process,
websockets, database, ledger and timers give exactly the engine path's output.

``play_live`` plays on the test database here, and deletes nothing: its table stays, marked
as a replay table. (The command's own throwaway database: test_replay_database.py.)"""

import json
from decimal import Decimal
from pathlib import Path

import pytest
from channels.layers import channel_layers
from django.db.models import Sum

from payouts.maingame import abandoned
from payouts.models import LedgerEntry
from payouts.specials import parse_paytables
from rounds.engine import EngineError, play_scenario
from rounds.live_replay import play_live
from tablehub.models import Table

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
GOLDEN = sorted(p for p in SCENARIOS.glob("*.json") if not p.name.endswith(".expected.json"))
# Long enough that a station's answer always beats the timer on a loaded 2-core CI machine
# (500 ms was missed there); the golden rounds let a timer run out only 16 times in all.
TIMER_MS = 3000


@pytest.fixture(scope="module", autouse=True)
def fresh_channel_layer_afterwards():
    """The replay's server thread has its own event loop; channels_redis lets one layer
    instance receive on one loop only. The server's consumers get a layer of their own (not
    one an async test made on its loop), and so do later tests."""
    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


@pytest.fixture
def live(in_process_timers):
    return play_live


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden_round_replayed_live(live, path):
    data = json.loads(path.read_text(), parse_float=Decimal)
    outcome = live(data, timer_ms=TIMER_MS)
    assert outcome == json.loads(path.with_suffix(".expected.json").read_text())
    assert outcome == play_scenario(
        json.loads(path.read_text(), parse_float=Decimal), parse_paytables, abandoned.for_scenario
    )
    assert_replay_table_stays()


def assert_replay_table_stays() -> Table:
    """Nothing deleted: the one table is the replay's, marked, its round settled, and its
    ledger (every movement two entries) adds up to zero."""
    table = Table.objects.get()
    assert table.is_replay and table.rounds.get().phase == "settled"
    assert LedgerEntry.objects.exists()
    assert LedgerEntry.objects.aggregate(total=Sum("amount"))["total"] == 0
    return table


def test_an_invalid_action_names_station_box_and_the_servers_code(live):
    data = {
        "stations": {
            "s1": {"credits": "100", "bets": {"1": {"main": "10"}}, "actions": ["hit", "double"]}
        },
        "shoe": ["2S", "5H", "3D", "4C", "2C", "2D", "4S", "6D", "6S", "9H"],
    }
    with pytest.raises(EngineError) as exc:
        live(data, timer_ms=TIMER_MS)
    assert exc.value.line() == (
        "station s1, box 1: double is not allowed on a 3-card hand [not_allowed]"
    )
    table = Table.objects.get()  # nothing deleted after a failed replay either
    assert table.is_replay and table.stations.get().name == "s1"
    assert LedgerEntry.objects.filter(station__table=table).exists()


def test_the_table_stays_for_game_recall(live):
    path = SCENARIOS / "rule_spec_example.json"
    live(json.loads(path.read_text(), parse_float=Decimal), timer_ms=TIMER_MS)
    table = Table.objects.get()
    round = table.rounds.get()
    assert round.phase == "settled" and round.events.count() > 10
    assert table.is_replay


def test_url_replays_on_a_running_server(live, run_command):
    """``--url`` plays on a server that is already running (here the one in this process,
    started by an earlier replay or now) instead of starting one."""
    from rounds.live_replay import in_process_server

    url = in_process_server()
    path = SCENARIOS / "rule_common_draw_three.json"
    code, out, err = run_command(
        "play_scenario", "--live", "--url", url, "--timer-ms", str(TIMER_MS), str(path)
    )
    assert (code, err) == (0, "")
    assert json.loads(out) == json.loads(path.with_suffix(".expected.json").read_text())
    assert_replay_table_stays()  # the running server's database keeps it, marked
