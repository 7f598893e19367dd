"""The station's state beyond the open round: the table's set-up (``info``), its last result
(``last_bet``, ``last_win``, ``win``) and the histories, from rounds played through the
services; over the websocket too. Never the hole card before the reveal."""

import json
from decimal import Decimal

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.core.cache import cache
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

from rounds import writer
from rounds.engine import CardDrawn, Decision, RuleSet, parse_card
from rounds.models import Round
from stations.commands import handle, station_state
from stations.models import Station
from stations.selectors import HISTORY, classify_win
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig

THRESHOLDS = {"nice": "3", "big": "10"}


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()  # dealer outcomes are cached by round; every test has its own rounds
    yield
    cache.clear()


def make_table(**config):
    jurisdiction = Jurisdiction.objects.create(
        code="wa", name="Washington", max_decision_seconds=25
    )
    table = Table.objects.create(name="Felt 7", jurisdiction=jurisdiction, currency="EUR")
    table.set_reader_key("reader-secret")
    table.save()
    TableConfig.objects.create(
        table=table,
        version=1,
        rules=RuleSet(decks=6).to_dict(),
        limits={"main": ["1", "500"], "special": ["1", "100"], "let_it_play": ["0", "1000"]},
        timers={"betting": 20, "insurance": 10, "decision": 60},
        special_bets={"pair": {"suited_pair": 25, "pair": 8}, "21+3": {"flush": 5}},
        **{"chips": ["0.5", "1", "5", "25"], **config},
    )
    station = Station(table=table, name="s1")
    station.set_credential("s1-secret")
    station.save()
    cash_in(station, "1000", key="start")
    return table, station


@pytest.fixture
def table(db):
    return make_table()


n = iter(range(10**6))


def send(station, **message):
    reply = handle(station, {"client_id": f"c{next(n)}", **message})
    assert reply["ok"], reply
    return reply["state"]


def play(table, station, bets, cards, decisions=(), more_cards=()):
    """One round: bets (box, code, amount), the deal, the station's decisions, later cards."""
    round = writer.open_round(table)
    for box, code, amount in bets:
        send(station, type="place", box=box, bet=code, amount=amount)
    writer.expire(round.pk, "betting")
    for card in cards:
        writer.record(round.pk, CardDrawn(parse_card(card)))
    for action in decisions:
        writer.record(round.pk, Decision(station.name, action))
    for card in more_cards:
        writer.record(round.pk, CardDrawn(parse_card(card)))
    round.refresh_from_db()
    assert round.phase == "settled"
    return round


def blackjack(table, station, amount="10"):
    """Box 1 A K against the dealer's 6 and 7: paid 3:2 at once, the dealer stops at 13."""
    return play(table, station, [(1, "main", amount)], ["AS", "6C", "KD", "7H"])


def win_19(table, station, amount="10"):
    """Box 1 T 9 stands against the dealer's 6 7, who draws a K: bust, the hand wins 1:1."""
    return play(table, station, [(1, "main", amount)], ["TS", "6C", "9D", "7H"], ["stand"], ["KC"])


def lose_16(table, station, amount="10"):
    """Box 1 T 6 stands against the dealer's T 8 (18)."""
    return play(table, station, [(1, "main", amount)], ["TS", "TC", "6D", "8H"], ["stand"])


def test_info_describes_the_table(table):
    _, station = table
    state = station_state(station)
    assert state["info"] == {
        "table_id": station.table_id,
        "table": "Felt 7",
        "mode": "dealer",
        "play": "common_draw",
        "tips": False,  # the jurisdiction allows none
        "currency": "EUR",
        "boxes": 3,
        "chips": ["0.50", "1.00", "5.00", "25.00"],
        "special_bets": ["21+3", "pair"],  # the catalog's order, not the JSON's
        "limits": {
            "main": ["1.00", "500.00"],
            "special": ["1.00", "100.00"],
            "let_it_play": ["0.00", "1000.00"],
        },
        "win_thresholds": {"nice": "3", "big": "10"},
        # the decision timer is capped at the jurisdiction's 25 s; bonus falls back to it
        "timers": {"betting": 20.0, "insurance": 10.0, "bonus": 25.0, "decision": 25.0},
        # the rules and paytables a station explains the game with (not only the floor's API)
        "rules": RuleSet(decks=6).to_dict(),
        "paytables": {"21+3": {"flush": "5"}, "pair": {"suited_pair": "25", "pair": "8"}},
        # each one's return to player, from its exact par sheet (6 decks): a 21+3 paying only
        # a flush returns little
        "rtp": {"21+3": "0.3642", "pair": "0.9389"},
        # the maximum win of one bet at its maximum (GLI-19 §5.2.2): a main bet of 500 split
        # three times, each of the four hands doubled and won, 8 x 500; a suited pair at 25
        # to 1 on 100; a flush at 5 to 1 on 100
        "max_win": {"main": "4000.00", "21+3": "500.00", "pair": "2500.00"},
    }
    assert list(state["info"]["paytables"]) == ["21+3", "pair"]  # the catalog's order
    assert state["round"] is None and state["credits"] == "1000.00"
    assert state["last_round"] is None and state["last_bet"] is None
    assert state["last_win"] is None and state["win"] is None
    assert state["player_history"] == [] and state["dealer_history"] == []
    assert state["dealer_stats"]["rounds"] == 0
    assert state["server_time"].endswith("+00:00")


def test_last_bet_and_win_to_the_cent_after_played_rounds(table):
    table, station = table
    round = blackjack(table, station, "5.50")  # 3:2 on 5.50: 5.50 + 8.25
    state = station_state(station)
    assert state["credits"] == "1008.25"
    assert (state["last_round"], state["last_bet"], state["last_win"]) == (
        round.pk,
        "5.50",
        "13.75",
    )
    assert state["win"] == "regular"  # 13.75 / 5.50 = 2.5
    assert state["player_history"] == [
        {"round": round.pk, "number": 1, "staked": "5.50", "returned": "13.75", "net": "8.25"}
    ]
    assert state["dealer_history"] == [
        {"round": round.pk, "number": 1, "total": 13, "bust": False, "blackjack": False}
    ]

    # A double: both stakes are the round's bet. 11 doubled to 21 against the dealer's 18.
    doubled = play(
        table, station, [(2, "main", "7.25")], ["6S", "TC", "5D", "8H"], ["double"], ["TD"]
    )
    state = station_state(station)
    assert (state["last_round"], state["last_bet"], state["last_win"]) == (
        doubled.pk,
        "14.50",
        "29.00",
    )
    assert state["credits"] == "1022.75"

    # A loss with a special bet that pays: main 10 lost, pair 2 pays 8:1 (18 back).
    lost = play(
        table,
        station,
        [(1, "main", "10"), (1, "pair", "2")],
        ["8S", "TC", "8D", "9H"],
        ["stand"],
    )
    state = station_state(station)
    assert (state["last_bet"], state["last_win"], state["win"]) == ("12.00", "18.00", "regular")
    assert state["player_history"][0] == {
        "round": lost.pk,
        "number": lost.number,
        "staked": "12.00",
        "returned": "18.00",
        "net": "6.00",
    }
    assert [h["round"] for h in state["player_history"]] == [lost.pk, doubled.pk, round.pk]
    assert state["credits"] == "1028.75"
    assert state["dealer_history"][0] == {
        "round": lost.pk,
        "number": lost.number,
        "total": 19,
        "bust": False,
        "blackjack": False,
    }


@pytest.mark.parametrize(
    "staked,returned,expected",
    [
        ("10.00", "0.00", None),  # a loss
        ("10.00", "5.00", None),  # a surrender: money back, but no win
        ("10.00", "10.00", None),  # a push
        ("10.00", "10.01", "regular"),
        ("10.00", "29.99", "regular"),
        ("10.00", "30.00", "nice"),  # returned / staked = 3: the nice threshold itself
        ("10.00", "99.99", "nice"),
        ("10.00", "100.00", "big"),  # = 10: the big threshold itself
        ("0.00", "5.00", None),
    ],
)
def test_win_classes_at_the_thresholds_edges(staked, returned, expected):
    assert classify_win(Decimal(staked), Decimal(returned), THRESHOLDS) == expected


@pytest.mark.parametrize(
    "thresholds,expected",
    [
        ({"nice": "2.5", "big": "10"}, "nice"),  # a blackjack returns 2.5 times its stake
        ({"nice": "2.51", "big": "10"}, "regular"),
        ({"nice": "2", "big": "2.5"}, "big"),
        ({"nice": "2", "big": "2.51"}, "nice"),
    ],
)
def test_the_win_of_a_played_round_is_classified_by_the_tables_thresholds(db, thresholds, expected):
    table, station = make_table(win_thresholds=thresholds)
    blackjack(table, station, "10")
    state = station_state(station)
    assert (state["last_bet"], state["last_win"], state["win"]) == ("10.00", "25.00", expected)


def test_a_win_keeps_the_thresholds_of_the_configuration_it_was_played_under(table):
    table, station = table
    blackjack(table, station, "10")  # 25 back for 10: regular under nice 3, big 10
    config = table.current_config()
    config.pk, config.version = None, 2
    config.win_thresholds = {"nice": "2", "big": "2.5"}
    config.save()
    state = station_state(station)
    assert state["win"] == "regular"
    assert state["info"]["win_thresholds"] == {"nice": "3", "big": "10"}  # the round's
    blackjack(table, station, "10")  # played under version 2
    state = station_state(station)
    assert (state["win"], state["info"]["win_thresholds"]) == ("big", {"nice": "2", "big": "2.5"})


def test_no_win_after_a_loss_or_a_push(table):
    table, station = table
    lose_16(table, station)
    state = station_state(station)
    assert (state["last_bet"], state["last_win"], state["win"]) == ("10.00", "0.00", None)
    play(table, station, [(1, "main", "10")], ["TS", "TC", "8D", "8H"], ["stand"])  # 18 v 18
    state = station_state(station)
    assert (state["last_win"], state["win"]) == ("10.00", None)


def test_histories_keep_the_last_20_rounds_and_their_queries_are_bounded(table):
    table, station = table
    other = Station.objects.create(table=table, name="s2")
    cash_in(other, "100", key="start")
    kinds = (blackjack, win_19, lose_16)
    rounds = [kinds[i % 3](table, station).pk for i in range(HISTORY + 2)]
    # a round the station sat out: in the dealer's history, not in the station's
    sat_out = writer.open_round(table)
    handle(other, {"client_id": "o1", "type": "place", "box": 3, "amount": "5"})
    writer.expire(sat_out.pk, "betting")
    for card in ["AS", "6C", "KD", "7H"]:
        writer.record(sat_out.pk, CardDrawn(parse_card(card)))

    state = station_state(station)
    assert [h["round"] for h in state["player_history"]] == rounds[::-1][:HISTORY]
    assert [h["round"] for h in state["dealer_history"]] == [sat_out.pk] + rounds[::-1][:19]
    dealer_total = {blackjack: 13, win_19: 23, lose_16: 18}
    newest = [kinds[i % 3] for i in range(HISTORY + 2)][::-1][:19]
    assert [h["total"] for h in state["dealer_history"]] == [13] + [dealer_total[k] for k in newest]
    stats = state["dealer_stats"]
    assert stats["rounds"] == 20
    assert stats["bust"] == newest.count(win_19)
    assert stats["bust_percent"] == round(100 * newest.count(win_19) / 20)
    assert stats["totals"] == {"17": 0, "18": newest.count(lose_16), "19": 0, "20": 0, "21": 0}
    assert stats["under_17"] == newest.count(blackjack) + 1  # the dealer's 13s
    assert stats["blackjack"] == 0

    def queries():
        station_state(station)  # fills the cache of any new dealer outcome
        with CaptureQueriesContext(connection) as captured:
            station_state(station)
        return len(captured)

    before = queries()
    for _ in range(3):
        lose_16(table, station)
    assert queries() == before  # the histories cost the same however many rounds were played


def test_the_state_in_play_never_carries_the_hole_card(table):
    table, station = table
    lose_16(table, station)  # history with a dealer hand, shown as totals only
    round = writer.open_round(table)
    send(station, type="place", box=1, bet="main", amount="10")
    send(station, type="place", box=1, bet="pair", amount="1")
    writer.expire(round.pk, "betting")
    for card in ["9S", "7C", "2D", "QH"]:  # the queen of hearts goes into the hole
        writer.record(round.pk, CardDrawn(parse_card(card)))
    state = send(station, type="state")
    assert state["round"]["phase"] == "play"
    assert state["table"]["dealer"] == {"cards": ["7C"], "hole_card": "face_down"}
    assert state["table"]["station"]["prompt"]["allowed"] == [
        "hit",
        "stand",
        "double",
        "surrender",
    ]
    assert "QH" not in json.dumps(state)
    send(station, type="decide", action="stand")  # the dealer's 7 Q: 17, stands
    state = send(station, type="state")  # the whole state: with the last result
    assert state["round"]["phase"] == "settled"
    assert state["table"]["dealer"]["cards"] == ["7C", "QH"]
    assert (state["last_round"], state["last_bet"], state["last_win"]) == (
        round.pk,
        "11.00",
        "0.00",
    )
    assert state["dealer_history"][0] == {
        "round": round.pk,
        "number": round.number,
        "total": 17,
        "bust": False,
        "blackjack": False,
    }


@pytest.fixture
async def _close_connections():
    yield
    await database_sync_to_async(connections.close_all)()


@pytest.mark.django_db(transaction=True)
async def test_the_join_reply_carries_the_info_and_the_last_result(_close_connections):
    table, station = await database_sync_to_async(make_table)()
    round = await database_sync_to_async(blackjack)(table, station, "4")
    from tablehub.asgi import application

    ws = WebsocketCommunicator(
        application,
        f"/ws/tables/{table.pk}/station/",
        headers=[(b"origin", b"http://127.0.0.1")],
    )
    assert (await ws.connect())[0]
    await ws.send_json_to(
        {"type": "join", "client_id": "j", "station": "s1", "credential": "s1-secret"}
    )
    reply = await ws.receive_json_from(timeout=10)
    state = reply["state"]
    assert reply["ok"] and state["info"]["currency"] == "EUR"
    assert state["info"]["chips"] == ["0.50", "1.00", "5.00", "25.00"]
    assert (state["last_round"], state["last_bet"], state["last_win"]) == (
        round.pk,
        "4.00",
        "10.00",
    )
    assert state["round"]["phase"] == Round.Phase.SETTLED
    assert len(json.dumps(state)) < 4096
    await ws.disconnect()


def test_a_bad_chip_or_threshold_in_the_configuration_hides_only_itself(db):
    table, station = make_table(chips=["1", "five", None, "-5", "25"], win_thresholds={"nice": "x"})
    blackjack(table, station, "10")
    state = station_state(station)
    assert state["info"]["chips"] == ["1.00", "25.00"]
    assert state["win"] == "regular"
    assert classify_win(Decimal("10"), Decimal("200"), {"nice": "3", "big": None}) == "nice"


def test_a_commands_reply_leaves_out_what_changes_only_between_rounds(table):
    from stations.commands import BETWEEN_ROUNDS, handle

    _, station = table
    reply = handle(station, {"type": "cash_in", "amount": "10", "client_id": "c-light"})
    assert reply["ok"] and not set(BETWEEN_ROUNDS) & set(reply["state"])
    full = handle(station, {"type": "state", "client_id": "c-full"})
    assert set(BETWEEN_ROUNDS) <= set(full["state"])
    assert reply["state"]["credits"] == full["state"]["credits"]
