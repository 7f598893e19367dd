"""Station commands: one reply per client id, bets on a slip, money through the ledger."""

from decimal import Decimal

import pytest

from payouts import ledger
from rounds import writer
from rounds.engine import CardDrawn, RuleSet, parse_card
from stations.commands import handle
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig

pytestmark = pytest.mark.django_db


@pytest.fixture
def table():
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction)
    TableConfig.objects.create(
        table=table,
        version=1,
        rules=RuleSet().to_dict(),
        limits={"main": ["1", "100"], "special": ["1", "25"]},
        special_bets={
            "21+3": {"straight_flush": 40, "flush": 5},
            "top_21+3": {"suited_trips": 270},
        },
    )
    return table


@pytest.fixture
def s1(table):
    station = Station.objects.create(table=table, name="s1")
    cash_in(station, "50", key="start")
    return station


def send(station, n, **message):
    return handle(station, {"client_id": f"c{n}", **message})


def bets(reply):
    return [(b["box"], b["bet"], b["stake"]) for b in reply["state"]["bets"]]


def test_place_undo_clear_double_and_the_slip(table, s1):
    writer.open_round(table)
    assert bets(send(s1, 1, type="place", box=1, bet="main", amount="5")) == [(1, "main", "5.00")]
    assert bets(send(s1, 2, type="place", box=1, bet="main", amount="5")) == [(1, "main", "10.00")]
    send(s1, 3, type="place", box=2, bet="main", amount="1")
    assert bets(send(s1, 4, type="double_bets")) == [(1, "main", "20.00"), (2, "main", "2.00")]
    assert bets(send(s1, 5, type="undo")) == [(1, "main", "10.00"), (2, "main", "1.00")]
    assert bets(send(s1, 6, type="clear")) == []


def test_a_resent_message_is_not_applied_twice(table, s1):
    writer.open_round(table)
    first = send(s1, 1, type="place", box=1, bet="main", amount="5")
    again = send(s1, 1, type="place", box=1, bet="main", amount="5")
    assert again["resent"] is True and again["state"] == first["state"]
    assert bets(send(s1, 2, type="state")) == [(1, "main", "5.00")]


def test_a_command_cut_off_half_way_leaves_nothing_and_its_resend_runs(table, s1, monkeypatch):
    """A process that dies in the middle of a command (here: an error after the bet was
    written, before the reply) leaves no bet and no stored reply; the station's resend with
    the same client_id runs it once."""
    import stations.commands as commands
    from rounds.models import Bet
    from stations.models import StationCommand

    writer.open_round(table)
    real_state = commands.station_states

    def dies(*args, **kwargs):
        raise RuntimeError("the process died here")

    monkeypatch.setattr(commands, "station_states", dies)
    with pytest.raises(RuntimeError):
        send(s1, 1, type="place", box=1, bet="main", amount="5")
    assert not Bet.objects.exists() and not StationCommand.objects.exists()
    monkeypatch.setattr(commands, "station_states", real_state)
    assert bets(send(s1, 1, type="place", box=1, bet="main", amount="5")) == [(1, "main", "5.00")]
    assert bets(send(s1, 1, type="place", box=1, bet="main", amount="5")) == [(1, "main", "5.00")]


@pytest.mark.parametrize(
    "message,code,text",
    [
        (
            {"type": "place", "box": 1, "bet": "main", "amount": "60"},
            "insufficient_credits",
            "station s1: credits 50.00 do not cover the stakes 60.00",
        ),
        (
            {"type": "place", "box": 1, "bet": "main", "amount": "0.5"},
            "below_minimum",
            "station s1, box 1: main stake 0.50 is below the table minimum 1",
        ),
        (
            {"type": "place", "box": 4, "bet": "main", "amount": "5"},
            "invalid",
            "station s1, box 4: the table has boxes 1 to 3",
        ),
        (
            {"type": "place", "box": 1, "bet": "main", "amount": "-5"},
            "bad_amount",
            "station s1, box 1: amount must not be negative, got -5",
        ),
        (
            {"type": "place", "box": 1, "bet": "main", "amount": "1.005"},
            "bad_amount",
            "station s1, box 1: amount has more than 2 decimal places: 1.005",
        ),
        (
            {"type": "place", "box": 1, "bet": "21+3", "amount": "5"},
            "special_needs_main",
            "station s1, box 1: 21+3 needs a main bet on this box",
        ),
        (
            {"type": "place", "box": 1, "bet": "pair", "amount": "5"},
            "special_not_offered",
            "station s1, box 1: special bet 'pair' is not offered at this table",
        ),
        ({"type": "fly"}, "bad_message", "station s1: unknown message type 'fly'"),
        # Amounts are decimal strings (docs/protocol.md): a JSON number is refused.
        (
            {"type": "place", "box": 1, "bet": "main", "amount": 5},
            "bad_amount",
            'station s1, box 1: amount must be a decimal string such as "10.00", got 5',
        ),
        (
            {"type": "bet_all", "box": 1, "amount": 2.5},
            "bad_amount",
            'station s1, box 1: amount must be a decimal string such as "10.00", got 2.5',
        ),
        (
            {"type": "place_many", "bets": [{"box": 1, "bet": "main", "amount": 10}]},
            "bad_amount",
            'station s1, box 1: amount must be a decimal string such as "10.00", got 10',
        ),
        (
            {"type": "cash_in", "amount": 20},
            "bad_amount",
            'station s1: cash-in amount must be a decimal string such as "10.00", got 20',
        ),
        (
            {"type": "cash_in", "amount": "abc"},
            "bad_amount",
            "station s1: cash-in amount must be a decimal string such as \"10.00\", got 'abc'",
        ),
        (
            {"type": "cash_in", "amount": "0.00"},
            "bad_amount",
            "station s1: a cash-in must be more than 0.00",
        ),
        (
            {"type": "let_it_play", "box": 9},
            "invalid",
            "station s1, box 9: the table has boxes 1 to 3",
        ),
        (
            {"type": "undo", "extra": 1} | {"type": "decide", "action": "hit"},
            "not_your_turn",
            "station s1: no question is open for this station",
        ),
    ],
)
def test_bad_commands_get_a_specific_error_and_change_nothing(table, s1, message, code, text):
    writer.open_round(table)
    reply = send(s1, 1, **message)
    assert reply["ok"] is False
    assert reply["error"] == {"code": code, "message": text}
    assert bets(send(s1, 2, type="state")) == []
    assert ledger.balance(s1) == Decimal("50.00")


def test_a_message_without_a_client_id_is_refused(s1):
    reply = handle(s1, {"type": "state"})
    assert reply["ok"] is False and reply["error"]["code"] == "bad_message"


def test_rebet_adds_the_last_rounds_bets_again(table, s1):
    round = writer.open_round(table)
    send(s1, 1, type="place", box=2, bet="main", amount="5")
    from rounds.models import Round

    Round.objects.filter(pk=round.pk).update(phase="settled")
    writer.open_round(table)
    assert bets(send(s1, 2, type="rebet")) == [(2, "main", "5.00")]
    assert bets(send(s1, 3, type="rebet")) == [(2, "main", "10.00")]


def test_cash_out_only_with_no_bets_on_the_table(table, s1):
    writer.open_round(table)
    send(s1, 1, type="place", box=1, bet="main", amount="5")
    reply = send(s1, 2, type="cash_out")
    assert reply["error"]["code"] == "bets_on_table"
    send(s1, 3, type="clear")
    assert send(s1, 4, type="cash_out")["state"]["credits"] == "0.00"
    assert send(s1, 5, type="cash_in", amount="20")["state"]["credits"] == "20.00"


def test_repeat_last_and_bet_all(table, s1):
    writer.open_round(table)
    assert send(s1, 1, type="repeat_last")["error"]["code"] == "no_bets"
    send(s1, 2, type="place", box=1, bet="main", amount="2")
    assert bets(send(s1, 3, type="repeat_last")) == [(1, "main", "4.00")]
    reply = send(s1, 4, type="bet_all", box=2, amount="1")
    assert bets(reply) == [
        (1, "main", "4.00"),
        (2, "main", "1.00"),
        (2, "21+3", "1.00"),
        (2, "top_21+3", "1.00"),
    ]


def test_let_it_play_bets_the_last_win_up_to_the_cap(table, s1):
    from rounds.engine import CardDrawn, Decision, parse_card
    from tablehub.models import TableConfig

    round = writer.open_round(table)
    send(s1, 1, type="place", box=1, bet="main", amount="10")
    writer.expire(round.pk, "betting")
    for card in "TS 6C 9D 7H".split():  # 19 against the dealer's 13
        writer.record(round.pk, CardDrawn(parse_card(card)))
    writer.record(round.pk, Decision("s1", "stand"))
    writer.record(round.pk, CardDrawn(parse_card("KC")))  # dealer 23: bust
    writer.open_round(table)
    assert send(s1, 2, type="let_it_play", box=2)["error"]["code"] == "no_bets"
    assert bets(send(s1, 3, type="let_it_play", box=1)) == [(1, "main", "20.00")]
    TableConfig.objects.filter(table=table).update(
        limits={"main": ["1", "100"], "let_it_play": ["1", "15"]}
    )
    send(s1, 4, type="clear")
    reply = send(s1, 5, type="let_it_play", box=1)
    assert reply["error"] == {
        "code": "above_maximum",
        "message": "station s1, box 1: 20.00 is above the Let It Play cap 15.00",
    }


@pytest.mark.parametrize(
    "cards, action",
    [("TS 9C 9D TH", "stand"), ("TS 9C 6D TH", "surrender")],  # a push; a surrender
)
def test_let_it_play_only_after_a_win(table, s1, cards, action):
    """Seed 001 §3.5: only a hand that won may be let play; a push or a surrender returned
    money but won nothing (docs/protocol.md, ``let_it_play``)."""
    from rounds.engine import CardDrawn, Decision, parse_card

    round = writer.open_round(table)
    send(s1, 1, type="place", box=1, bet="main", amount="10")
    writer.expire(round.pk, "betting")
    for card in cards.split():
        writer.record(round.pk, CardDrawn(parse_card(card)))
    writer.record(round.pk, Decision("s1", action))
    round.refresh_from_db()
    assert round.phase == "settled"
    assert ledger.balance(s1) in (Decimal("50.00"), Decimal("45.00"))  # pushed; surrendered
    writer.open_round(table)
    reply = send(s1, 2, type="let_it_play", box=1)
    assert reply["error"] == {
        "code": "no_bets",
        "message": "station s1, box 1: this box won nothing in the last round",
    }
    assert bets(send(s1, 3, type="state")) == []


def test_place_many_is_checked_as_a_whole(table, s1):
    writer.open_round(table)
    one_by_one = send(s1, 1, type="place", box=1, bet="21+3", amount="5")
    assert one_by_one["error"]["message"] == "station s1, box 1: 21+3 needs a main bet on this box"
    reply = send(
        s1,
        2,
        type="place_many",
        bets=[
            {"box": 1, "bet": "21+3", "amount": "5"},
            {"box": 1, "bet": "main", "amount": "10"},
        ],
    )
    assert bets(reply) == [(1, "21+3", "5.00"), (1, "main", "10.00")]
    assert bets(send(s1, 3, type="undo")) == []
    bad = send(s1, 4, type="place_many", bets="all")
    assert bad["error"]["code"] == "bad_message"


def test_a_stations_bets_stay_in_its_state_and_replies_once_bets_close(table, s1):
    """Once bets close the engine holds them (stations/commands.station_states): each
    station's state and replies list its own bets by box, then as placed, to the cent."""
    s2 = Station.objects.create(table=table, name="s2")
    cash_in(s2, "50", key="start-s2")
    round = writer.open_round(table)
    send(s1, 1, type="place", box=2, bet="main", amount="5")
    send(s1, 2, type="place", box=1, bet="main", amount="10")
    send(s1, 3, type="place", box=1, bet="21+3", amount="2")
    send(s2, 1, type="place", box=3, bet="main", amount="7")
    writer.close_bets(round.pk)
    placed = [(1, "main", "10.00"), (1, "21+3", "2.00"), (2, "main", "5.00")]
    assert bets(send(s1, 4, type="state")) == placed
    # Boxes 1 and 2 (s1): 9 7 and T 7; box 3 (s2): 8 9; the dealer 6 up, 5 in the hole.
    for card in ("9C", "TC", "8D", "6S", "7H", "7D", "9S", "5H"):
        writer.record(round.pk, CardDrawn(parse_card(card)))
    decided = send(s1, 5, type="decide", action="stand")
    assert decided["ok"], decided
    assert bets(decided) == placed
    assert bets(send(s2, 2, type="state")) == [(3, "main", "7.00")]
