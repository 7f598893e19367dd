"""Each placement rule a station breaks comes back with its own error code
(docs/protocol.md, "Error codes"); the message is the engine's line, unchanged."""

from decimal import Decimal

import pytest

from payouts import ledger
from payouts.specials import parse_paytables
from payouts.specials.defaults import default_paytable_rows
from rounds import writer
from rounds.engine import RuleSet
from stations.commands import handle
from stations.models import Station
from stations.services import cash_in
from tablehub.models import Jurisdiction, Table, TableConfig

pytestmark = pytest.mark.django_db

OFFERED = (
    "21+3",
    "top_21+3",
    "pair",
    "7s",
    "bust",
    "kk",
    "qq",
    "jj",
    "suits",
    "lucky_lucky",
    "19+",
    "poker_3",
    "blackjack_bonus",
)


def make_station(special_without_main: int, offered=OFFERED) -> Station:
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction)
    TableConfig.objects.create(
        table=table,
        version=1,
        rules=RuleSet(special_without_main=special_without_main).to_dict(),
        limits={"main": ["1", "100"], "special": ["1", "25"]},
        special_bets={code: default_paytable_rows()[code]["pays"] for code in offered},
    )
    station = Station.objects.create(table=table, name="s1")
    cash_in(station, "100", key="start")
    writer.open_round(table)
    return station


def bet(box, code, amount):
    return {"box": box, "bet": code, "amount": amount}


def refused(station, bets, code, message):
    """``bets`` put down as one group are refused with ``code`` and ``message``, and
    nothing is on the table or taken from the credits."""
    reply = handle(station, {"client_id": "c1", "type": "place_many", "bets": bets})
    assert reply["ok"] is False
    assert reply["error"] == {"code": code, "message": message}
    state = handle(station, {"client_id": "c2", "type": "state"})
    assert state["state"]["bets"] == []
    assert ledger.balance(station) == Decimal("100.00")


def test_a_bet_code_that_is_not_a_bet():
    s1 = make_station(1)
    refused(
        s1,
        [bet(1, "main", "5"), bet(1, "fly", "5")],
        "unknown_bet",
        ("station s1, box 1: unknown bet code 'fly'"),
    )


def test_a_special_bet_the_table_does_not_offer():
    s1 = make_station(1, offered=("21+3",))
    refused(
        s1,
        [bet(1, "main", "5"), bet(1, "pair", "5")],
        "special_not_offered",
        "station s1, box 1: special bet 'pair' is not offered at this table",
    )


def test_at_most_nine_special_bets_per_box():
    s1 = make_station(1)
    ten = [c for c in OFFERED if c not in ("top_21+3", "bust")][:10]
    assert len(ten) == 10
    refused(
        s1,
        [bet(1, "main", "10")] + [bet(1, code, "1") for code in ten],
        "too_many_special_bets",
        "station s1, box 1: at most 9 special bets per box",
    )
    nine = handle(
        s1,
        {
            "client_id": "c3",
            "type": "place_many",
            "bets": [bet(1, "main", "10")] + [bet(1, code, "1") for code in ten[:9]],
        },
    )
    assert nine["ok"] is True, nine


def test_special_without_main_0_needs_a_main_bet_on_the_box():
    s1 = make_station(0)
    refused(
        s1,
        [bet(1, "main", "5"), bet(2, "21+3", "5")],
        "special_needs_main",
        "station s1, box 2: 21+3 needs a main bet on this box",
    )


@pytest.mark.parametrize("mode", [1, 2])
def test_special_without_main_1_and_2_allow_a_special_bet_alone(mode):
    s1 = make_station(mode)
    reply = handle(s1, {"client_id": "c1", "type": "place", **bet(2, "21+3", "5")})
    assert reply["ok"] is True, reply


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("code", ["7s", "bust"])
def test_7s_and_bust_always_need_a_main_bet(mode, code):
    s1 = make_station(mode)
    refused(
        s1,
        [bet(1, "main", "5"), bet(2, code, "5")],
        "needs_main_bet",
        f"station s1, box 2: {code} needs a main bet on this box",
    )


def test_top_21_3_needs_a_21_3_bet_on_the_same_box():
    s1 = make_station(1)
    refused(
        s1,
        [bet(1, "main", "5"), bet(2, "main", "5"), bet(2, "21+3", "5"), bet(1, "top_21+3", "5")],
        "top_needs_twenty_one_plus_three",
        "station s1, box 1: top_21+3 needs a 21+3 bet on the same box",
    )


def test_bust_stake_at_most_the_sum_of_the_stations_main_stakes():
    s1 = make_station(1)
    refused(
        s1,
        [bet(1, "main", "5"), bet(2, "main", "10"), bet(1, "bust", "16")],
        "bust_above_main",
        "station s1, box 1: bust stake 16.00 is above the sum of the main stakes 15.00",
    )
    reply = handle(
        s1,
        {
            "client_id": "c3",
            "type": "place_many",
            "bets": [bet(1, "main", "5"), bet(2, "main", "10"), bet(1, "bust", "15")],
        },
    )
    assert reply["ok"] is True, reply


def test_special_without_main_2_caps_a_special_stake_at_the_main_stake_of_its_box():
    s1 = make_station(2)
    refused(
        s1,
        [bet(1, "main", "5"), bet(1, "pair", "6")],
        "special_above_main",
        "station s1, box 1: pair stake 6.00 is above the main stake 5.00 of its box",
    )


def test_stake_limits_keep_their_codes():
    s1 = make_station(1)
    refused(
        s1,
        [bet(1, "main", "5"), bet(1, "pair", "26")],
        "above_maximum",
        "station s1, box 1: pair stake 26.00 is above the table maximum 25",
    )


def test_a_special_bet_with_limits_of_its_own():
    s1 = make_station(1)
    config = s1.table.current_config()
    config.limits = {"main": ["1", "100"], "special": ["1", "25"], "pair": ["2", "10"]}
    config.save()
    refused(
        s1,
        [bet(1, "main", "5"), bet(1, "pair", "11")],
        "above_maximum",
        "station s1, box 1: pair stake 11.00 is above the table maximum 10",
    )
    low = {
        "client_id": "c3",
        "type": "place_many",
        "bets": [bet(1, "main", "5"), bet(1, "pair", "1")],
    }
    assert handle(s1, low)["error"] == {
        "code": "below_minimum",
        "message": "station s1, box 1: pair stake 1.00 is below the table minimum 2",
    }
    reply = handle(s1, {"client_id": "ok", "type": "place_many", "bets": [
        bet(1, "main", "5"), bet(1, "pair", "10"), bet(1, "21+3", "25")]})  # fmt: skip
    assert reply["ok"] is True, reply


def test_the_round_holds_each_special_bet_to_its_own_limits():
    """The engine checks the limits again when bets close, per bet code."""
    from rounds.engine import Bet, Round
    from rounds.engine.errors import EngineError

    pays = {code: default_paytable_rows()[code]["pays"] for code in ("pair", "21+3")}
    paytables = parse_paytables(pays)
    limits = {"pair": (Decimal("2"), Decimal("10")), "21+3": (Decimal("1"), Decimal("25"))}
    credits = {"s1": Decimal("100")}
    bets = [Bet("s1", 1, "main", Decimal("5")), Bet("s1", 1, "21+3", Decimal("20"))]
    Round(RuleSet(), bets, credits, paytables=paytables, special_limits=limits)  # accepted
    with pytest.raises(EngineError) as refused:
        Round(
            RuleSet(),
            bets + [Bet("s1", 1, "pair", Decimal("11"))],
            credits,
            paytables=paytables,
            special_limits=limits,
        )
    assert refused.value.code == "above_maximum"
    assert refused.value.line() == "station s1, box 1: pair stake 11 is above the table maximum 10"
