"""Statistics per dealer and shift (issue 21, point 5): the dealer recorded on each round,
the log of dealer changes, a report's figures to the last digit for known rounds, and an
outlier flagged for a rigged set of cards (command, API, admin)."""

import json
import math
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from fractions import Fraction

import pytest
from django.core.management import CommandError
from django.utils import timezone

from croupier import dealers
from croupier.models import DealerChange
from croupier.tablet import handle as tablet
from payouts import dealer_stats
from payouts.rtp import main_sheet
from rounds import writer
from rounds.engine import Decision, RuleSet
from rounds.models import Round
from stations.commands import place_bets
from stations.services import cash_in
from tablehub import roles
from tablehub.models import DealerReport
from tests.helpers import make_staff, play

from .conftest import PASSWORD

pytestmark = pytest.mark.django_db


def ok(table, user, n, **message):
    reply = tablet(table, user, {"client_id": f"c{n}", **message})
    assert reply["ok"], reply
    return reply


def test_each_round_records_its_dealer_and_a_change_is_logged(
    table, users, django_capture_on_commit_callbacks
):
    """Dealer A opens the table and deals round 1 through the tablet's commands; round 2
    opens with A on duty; dealer B's first dealing command (close bets, mid-shoe) takes the
    table over: logged, and round 2 (its bets closing) is B's. A supervisor's reading of the
    state changes nothing."""
    a, b = users["dealer"], make_staff("dealer-b", roles.DEALER, PASSWORD)
    s1 = table.stations.get(name="s1")
    ok(table, a, 1, type="open_table")
    first = Round.objects.get(table=table)
    place_bets(s1, [(1, "main", Decimal("10"))])
    ok(table, a, 2, type="close_bets")
    for n, card in enumerate(["TS", "9C", "9D", "8H"], start=3):
        ok(table, a, n, type="manual_card", card=card)
    with django_capture_on_commit_callbacks(execute=True):  # the next round opens on commit
        writer.record(first.pk, Decision("s1", "stand"))
    first.refresh_from_db()
    assert (first.phase, first.dealer) == ("settled", a)
    second = Round.objects.get(table=table, number=2)
    assert second.dealer == a  # the dealer on duty when it opened

    ok(table, users["supervisor"], 10, type="state")
    place_bets(s1, [(1, "main", Decimal("10"))])
    ok(table, b, 11, type="close_bets")
    second.refresh_from_db()
    assert second.phase != "betting"
    assert second.dealer == b
    first.refresh_from_db()
    assert first.dealer == a  # a settled round keeps its dealer
    changes = list(DealerChange.objects.filter(table=table).order_by("pk"))
    assert [(c.previous, c.dealer, c.how, c.command, c.mid_shoe, c.round_id) for c in changes] == [
        (None, a, "command", "open_table", False, first.pk),
        (a, b, "command", "close_bets", True, second.pk),
    ]
    table.refresh_from_db()
    assert table.dealer == b
    # The same dealer again: nothing logged.
    ok(table, b, 12, type="state")
    assert dealers.take_over(table.pk, b, DealerChange.How.COMMAND, "deal") is None
    assert DealerChange.objects.filter(table=table).count() == 2
    # A deleted user leaves their rounds without a dealer; the log keeps the names.
    b.delete()
    second.refresh_from_db()
    assert second.dealer is None
    assert [
        (c.previous_name, c.dealer_name, c.dealer_id)
        for c in DealerChange.objects.filter(table=table).order_by("pk")
    ] == [("", "dealer", a.pk), ("dealer", "dealer-b", None)]


def test_a_refused_command_takes_nothing_over(table, users):
    reply = tablet(table, users["dealer"], {"client_id": "x", "type": "close_bets"})
    assert reply["error"]["code"] == "no_round"
    assert not DealerChange.objects.exists()
    table.refresh_from_db()
    assert table.dealer is None


def known_rounds(table, dealer):
    """Four rounds of 10 on box 1, dealt by ``dealer``: the player's 19 beats 17; the dealer
    busts (6 T 9); the dealer's blackjack (K up, A in the hole); the player's blackjack."""
    dealers.take_over(table.pk, dealer, DealerChange.How.COMMAND, "open_table")
    s1 = table.stations.get(name="s1")
    rounds = [
        play(table, [(s1, 1, "main", "10")], cards, [("s1", "stand")])
        for cards in ("TS 9C 9D 8H", "8S 6D 8H TC 9S", "9S KD 8H AC", "AS 7D KH 9C")
    ]
    assert [r.phase for r in rounds] == ["settled"] * 4
    assert {r.dealer_id for r in rounds} == {dealer.pk}
    return rounds


def test_a_report_exact_for_known_rounds(table, users):
    known_rounds(table, users["dealer"])
    now = timezone.now()
    report = dealer_stats.dealer_report(now - timedelta(hours=1), now + timedelta(minutes=1))
    [row] = report["rows"]
    assert row["dealer"] == {"id": users["dealer"].pk, "username": "dealer"}
    assert (row["hands"], row["dealer_busts"], row["bust_rate_pct"]) == (4, 1, "25.00")
    assert (row["dealer_blackjacks"], row["box_blackjacks"]) == (1, 1)
    ranks = row["ranks"]
    # 17 cards: A 2, 6 1, 7 1, 8 4, 9 5, T 2, K 2, the six other ranks none.
    assert ranks["counts"] == {
        "A": 2, "2": 0, "3": 0, "4": 0, "5": 0, "6": 1, "7": 1,
        "8": 4, "9": 5, "T": 2, "J": 0, "Q": 0, "K": 2,
    }  # fmt: skip
    assert ranks["cards"] == 17
    # chi-square = sum of (13 O - 17)^2 / (13 x 17) over the ranks:
    # (81 + 4 x 289 + 16 + 16 + 1225 + 2304 + 81 + 2 x 289 + 81) / 221 = 5538 / 221
    assert ranks["chi_square"] == round(float(Fraction(5538, 221)), 6) == 25.058824
    half = 5538 / 221 / 2
    p = math.exp(-half) * sum(half**k / math.factorial(k) for k in range(6))
    assert ranks["p_value"] == pytest.approx(p, rel=1e-12)
    assert ranks["p_value"] == pytest.approx(0.0145466, abs=1e-7)  # the integral, numerically
    assert ranks["enough_cards"] is False  # 17 < 65: flags nothing
    # Hold: 40 staked, 20 + 20 + 0 + 25 returned: the house lost 25.
    hold = row["hold"]
    assert (hold["drop"], hold["win"], hold["win_with_theory"]) == ("40.00", "-25.00", "-25.00")
    sheet = main_sheet(RuleSet.from_dict(table.current_config().rules))
    edge = Decimal(1) - Decimal(str(sheet["rtp"]))
    expected = Decimal(40) * edge
    assert hold["win_expected"] == str(expected.quantize(Decimal("0.01")))
    sd = math.sqrt(4 * (10 * math.sqrt(dealer_stats.MAIN_GAME_VARIANCE)) ** 2)
    assert hold["standard_deviation"] == f"{sd:.2f}" == "22.98"
    assert hold["z"] == pytest.approx(float(Decimal(-25) - expected) / sd, abs=1e-4)
    assert (row["flags"], row["outlier"]) == ([], False)


def test_the_closed_form_p_value_matches_the_tables():
    # Critical values of the chi-square distribution with 12 degrees of freedom.
    for x, p in ((21.026, 0.05), (26.217, 0.01), (32.909, 0.001), (11.340, 0.5)):
        assert dealer_stats.chi_square_sf(x) == pytest.approx(p, rel=2e-3)
    assert dealer_stats.chi_square_sf(3.0, 2) == pytest.approx(math.exp(-1.5))
    assert dealer_stats.chi_square_sf(0.0) == 1.0
    assert dealer_stats.chi_square_sf(5000.0) < 1e-300  # not 0 x infinity
    with pytest.raises(ValueError):
        dealer_stats.chi_square_sf(3.0, 3)


def rigged_rounds(table, dealer, n=20):
    """The same cards every round: 9 8 against the dealer's T T, the player stands on 17."""
    dealers.take_over(table.pk, dealer, DealerChange.How.COMMAND, "open_table")
    s1 = table.stations.get(name="s1")
    cash_in(s1, "500", key="rigged")
    for _ in range(n):
        assert play(table, [(s1, 1, "main", "10")], "9S TC 8D TH", [("s1", "stand")]).phase == (
            "settled"
        )


def test_a_rigged_shoe_is_flagged_in_the_command_api_and_admin(
    table, users, login, api, run_command
):
    honest, rigged = users["dealer"], make_staff("rigged", roles.DEALER, PASSWORD)
    known_rounds(table, honest)
    rigged_rounds(table, rigged)
    now = timezone.now()
    start, end = (now - timedelta(hours=1)).isoformat(), (now + timedelta(minutes=1)).isoformat()

    status, out, _ = run_command("dealer_report", "--start", start, "--end", end)
    assert status == 0
    rows = {row["dealer"]["username"]: row for row in json.loads(out)["rows"]}
    bad = rows["rigged"]
    assert bad["hands"] == 20 and bad["dealer_busts"] == 0
    assert bad["ranks"]["counts"]["T"] == 40 and bad["ranks"]["cards"] == 80
    # 80 cards: T 40, 9 20, 8 20: (13x40-80)^2 + 2 (13x20-80)^2 + 10 x 80^2 over 13 x 80.
    chi = Fraction(440**2 + 2 * 180**2 + 10 * 80**2, 13 * 80)
    assert bad["ranks"]["chi_square"] == round(float(chi), 6)
    assert bad["ranks"]["p_value"] < 1e-6
    # 200 staked and lost: z = (200 - 200 x edge) / (10 x sqrt(20 x 1.32)) ~ 3.9
    assert bad["hold"]["win"] == "200.00" and bad["hold"]["z"] > 3
    assert (bad["flags"], bad["outlier"]) == (["hold", "ranks"], True)
    assert rows["dealer"]["outlier"] is False
    kept = {r.dealer.username: r for r in DealerReport.objects.select_related("dealer")}
    assert (kept["rigged"].outlier, kept["dealer"].outlier) == (True, False)
    assert kept["rigged"].hands == 20 and kept["rigged"].flags == ["hold", "ranks"]

    # The same range again replaces its rows.
    assert run_command("dealer_report", "--start", start, "--end", end)[0] == 0
    assert DealerReport.objects.count() == 2

    # The admin: read only for auditors and floor managers, outliers in a filter and a column.
    for role in ("auditor", "floor_manager"):
        page = login(role).get("/admin/tablehub/dealerreport/?outlier__exact=1")
        assert page.status_code == 200
        text = page.content.decode()
        assert "rigged" in text and "hold, ranks" in text
        assert f"/admin/tablehub/dealerreport/{kept['dealer'].pk}/" not in text
        assert login(role).get("/admin/tablehub/dealerreport/add/").status_code == 403
        assert login(role).get("/admin/croupier/dealerchange/").status_code == 200
    assert login("dealer").get("/admin/tablehub/dealerreport/").status_code == 302

    # The API: the same figures, for one dealer.
    url = f"/api/dealer-report/?start={start[:19]}Z&end={end[:19]}Z&dealer=rigged"
    url = url.replace("+", "%2B")
    answer = api(users["auditor"], "get", url)
    assert answer.status_code == 200, answer.content
    [row] = answer.json()["rows"]
    assert row["ranks"] == bad["ranks"] and row["outlier"] is True
    assert api(users["dealer"], "get", url).status_code == 403
    assert api(users["supervisor"], "get", url).status_code == 403


def test_a_stricter_jurisdiction_flags_less(table, users):
    rigged_rounds(table, users["dealer"])
    jurisdiction = table.jurisdiction
    jurisdiction.dealer_z_threshold = Decimal("10")
    jurisdiction.dealer_p_threshold = Decimal("0.000001")
    jurisdiction.save()
    now = timezone.now()
    [row] = dealer_stats.dealer_report(now - timedelta(hours=1), now + timedelta(minutes=1))["rows"]
    assert row["thresholds"] == {"z": "10.00", "p": "0.000001"}
    assert row["flags"] == ["ranks"]  # p ~ 1e-40 is still below; z ~ 3.9 no longer beyond


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        ("shift=lunch&date=2026-11-26", 400, "unknown shift 'lunch' (known: day, night, swing)"),
        ("shift=day&date=2026-13-01", 400,
         "date must be a date such as 2025-01-28, got '2026-13-01'"),
        ("start=2026-11-26T00:00:00Z", 400, None),
        ("shift=day&date=2026-11-26&dealer=nobody", 404, "no such dealer"),
        ("shift=day&date=2026-11-26&table=x", 400, "table must be a table's id, got 'x'"),
        ("shift=day&date=2026-11-26&dealer=a%00b", 400, "dealer must be a username"),
        ("shift=day%00&date=2026-11-26", 400, None),
        ("shift=night&date=2026-11-26", 200, None),
    ],
)  # fmt: skip
def test_the_api_refuses_bad_input_with_a_reason(api, users, table, query, status, message):
    answer = api(users["auditor"], "get", f"/api/dealer-report/?{query}")
    assert answer.status_code == status, answer.content
    if message:
        assert answer.json()["error"]["message"] == message
    if status == 200:
        assert answer.json() == {
            "shift": "night",
            "start": "2026-11-26T22:00:00+00:00",
            "end": "2026-11-27T06:00:00+00:00",
            "rows": [],
        }


def test_shifts_cross_midnight_and_the_command_refuses_bad_input(run_command, settings):
    settings.TABLEHUB_SHIFTS = {"early": ("05:30", "13:30"), "late": ("21:00", "05:30")}
    assert dealer_stats.shift_range("late", date(2026, 2, 28)) == (
        datetime(2026, 2, 28, 21, 0, tzinfo=UTC),
        datetime(2026, 3, 1, 5, 30, tzinfo=UTC),
    )
    status, out, _ = run_command("dealer_report", "--shift", "early", "--date", "2026-11-26")
    assert status == 0 and json.loads(out)["start"] == "2026-11-26T05:30:00+00:00"
    for args in (
        ("--shift", "day"),
        ("--start", "2026-11-26"),
        ("--start", "2026-11-27", "--end", "2026-11-26"),
        ("--shift", "early", "--dealer", "nobody"),
    ):
        with pytest.raises(CommandError) as refused:
            run_command("dealer_report", *args)
        assert refused.value.returncode == 2, args
