"""Table reports per shift: drop, win, hold by bet against the par sheets, CSV, Celery."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from payouts.models import LedgerEntry
from payouts.reports import report_csv, reports_csv, table_report
from payouts.rtp import special_sheet
from rounds import writer
from rounds.engine import CardDrawn, RuleSet, parse_card
from rounds.models import Round
from rounds.voids import void_round
from stations.commands import place_bets
from stations.models import Station
from stations.services import cash_in
from tablehub.configuration import save_version
from tablehub.models import Report, Table
from tests.helpers import play

from .conftest import default_pays, wa_config

pytestmark = pytest.mark.django_db


@pytest.fixture
def shift(table):
    """Three rounds settled now, one voided, one settled yesterday (outside the shift)."""
    s1, s2 = table.stations.get(name="s1"), table.stations.get(name="s2")
    # v1: both win 19 against 17; the pair bet (T 9) loses.
    play(
        table,
        [(s1, 1, "main", "10"), (s1, 1, "pair", "5"), (s2, 1, "main", "20")],
        "TS 9C 9D 8H",
        [("s1", "stand"), ("s2", "stand")],
    )
    # v1: 8S 8H 8D is three of a kind for 21+3 (30 to 1); 16 loses to 17.
    play(table, [(s1, 1, "main", "10"), (s1, 1, "21+3", "5")], "8S 8D 8H 9C", [("s1", "stand")])
    # v2 pays a pair 7 to 1: 8S 8H is a pair (not suited); 16 loses to 17.
    cheaper_pair = {"suited_pair": 25, "pair": 7}
    save_version(
        table, wa_config(special_bets={"21+3": default_pays("21+3"), "pair": cheaper_pair})
    )
    play(table, [(s2, 2, "main", "10"), (s2, 2, "pair", "5")], "8S 8D 8H 9C", [("s2", "stand")])
    voided = writer.open_round(table)
    place_bets(s1, [(1, "main", Decimal("50"))])
    writer.close_bets(voided.pk)
    writer.record(voided.pk, CardDrawn(parse_card("2S")))
    void_round(voided.pk, by="sup", reason="shoe fault")
    old = play(table, [(s1, 1, "main", "30")], "TS 9C 9D 8H", [("s1", "stand")])
    Round.objects.filter(pk=old.pk).update(settled_at=timezone.now() - timedelta(days=1))
    now = timezone.now()
    return table, now - timedelta(hours=8), now + timedelta(minutes=1)


def line(report, bet):
    return next(row for row in report["lines"] if row["bet"] == bet)


def test_a_shift_report_by_bet_to_the_cent(shift):
    table, start, end = shift
    report = table_report(table, start, end)
    assert (report["rounds_played"], report["rounds_voided"], report["stations"]) == (3, 1, 2)
    assert report["config_versions"] == [1, 2]
    assert [row["bet"] for row in report["lines"]] == ["main", "21+3", "pair"]
    main = line(report, "main")
    assert (main["rounds"], main["bets"], main["drop"], main["paid"], main["win"]) == (
        3, 4, "50.00", "60.00", "-10.00",
    )  # fmt: skip
    assert main["hold_pct"] == "-20.00"
    assert main["rtp_theoretical_pct"] == "99.64"  # the main game's par sheet, 8 decks S17
    assert (main["win_expected"], main["win_difference"]) == ("0.18", "-10.18")
    trips = line(report, "21+3")
    assert (trips["drop"], trips["paid"], trips["win"], trips["hold_pct"]) == (
        "5.00", "155.00", "-150.00", "-3000.00",
    )  # fmt: skip
    assert (trips["rtp_theoretical_pct"], trips["hold_theoretical_pct"]) == ("96.30", "3.70")
    pair = line(report, "pair")
    assert (pair["rounds"], pair["drop"], pair["paid"], pair["win"], pair["hold_pct"]) == (
        2, "10.00", "40.00", "-30.00", "-300.00",
    )  # fmt: skip
    # a stake-weighted mean of the two paytables: 95.90 % (v1) and the v2 table's return
    v1 = special_sheet("pair", default_pays("pair"), RuleSet())["rtp"]  # 95.9036 %
    v2 = special_sheet("pair", {"suited_pair": 25, "pair": 7}, RuleSet())["rtp"]
    assert f"{(v1 + v2) / 2:.2%}" == "93.01%"
    assert pair["rtp_theoretical_pct"] == "93.01"
    assert (pair["win_expected"], pair["win_difference"]) == ("0.70", "-30.70")
    total = report["total"]
    assert (total["rounds"], total["drop"], total["paid"], total["win"]) == (
        3, "65.00", "255.00", "-190.00",
    )  # fmt: skip
    assert total["rtp_theoretical_pct"] == "98.37"  # (50 x 99.64 + 5 x 96.30 + 10 x 93.01) / 65
    assert report["ledger"] == {
        "staked": "65.00",
        "paid": "255.00",
        "balanced": True,
        "house_loss": "0.00",
    }


def test_the_report_as_csv(api, users, shift):
    table, start, end = shift
    url = f"/api/tables/{table.pk}/report/?start={start.isoformat()}&end={end.isoformat()}"
    response = api(users["auditor"], "get", url.replace("+", "%2B") + "&format=csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith('attachment; filename="report-table')
    rows = [r.split(",") for r in response.content.decode().splitlines()]
    assert rows[0][:6] == ["table", "start", "end", "bet", "rounds", "bets"]
    assert [r[3] for r in rows[1:]] == ["main", "21+3", "pair", "total"]
    assert rows[1][6:9] == ["50.00", "60.00", "-10.00"]
    assert response.content.decode() == report_csv(table_report(table, start, end))


@pytest.fixture
def tasks_run_here():
    """The report task runs in this process, also where REDIS_URL points Celery at a broker
    with no worker (CI); tests/test_scale_out.py runs a real worker."""
    from tablehub.celery import app

    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = before


def test_a_long_report_runs_as_a_celery_task(
    api, users, shift, django_capture_on_commit_callbacks, tasks_run_here
):
    table, start, end = shift
    with django_capture_on_commit_callbacks(execute=True):
        response = api(
            users["floor_manager"],
            "post",
            f"/api/tables/{table.pk}/reports/",
            {"start": (start - timedelta(days=60)).isoformat(), "end": end.isoformat()},
        )
    assert response.status_code == 202 and response.json()["status"] == "pending"
    job = Report.objects.get(pk=response.json()["id"])
    assert job.status == "done" and job.requested_by == users["floor_manager"]
    data = api(users["auditor"], "get", f"/api/reports/{job.pk}/").json()
    assert data["status"] == "done"
    assert data["result"]["rounds_played"] == 4  # yesterday's round is in this range
    assert data["result"]["total"]["drop"] == "95.00"
    csv = api(users["auditor"], "get", f"/api/reports/{job.pk}/?format=csv")
    assert csv.status_code == 200 and csv.content.decode().count("\n") == 5


@pytest.mark.parametrize(
    "query, message",
    [
        ("", "start is required: an ISO 8601 date-time such as 2025-01-28T08:00:00Z"),
        ("start=yesterday&end=2025-01-02T00:00:00Z",
         "start must be an ISO 8601 date-time such as 2025-01-28T08:00:00Z, got 'yesterday'"),
        ("start=2025-01-02T00:00:00Z&end=2025-01-01T00:00:00Z", "start must be before end"),
        ("start=2025-01-01T00:00:00Z&end=2025-03-01T00:00:00Z",
         "the range may be at most 31 days"),
        ("start=2025-02-30T00:00:00Z&end=2025-03-01T00:00:00Z",
         "start must be an ISO 8601 date-time such as 2025-01-28T08:00:00Z, got "
         "'2025-02-30T00:00:00Z'"),
    ],
)  # fmt: skip
def test_bad_ranges_are_400_with_a_reason(api, users, table, query, message):
    response = api(users["auditor"], "get", f"/api/tables/{table.pk}/report/?{query}")
    assert response.status_code == 400
    assert response.json() == {"error": {"code": "invalid", "message": message}}


def test_reports_need_the_report_permission(api, users, table):
    url = f"/api/tables/{table.pk}/report/?start=2025-01-01T00:00:00Z&end=2025-01-02T00:00:00Z"
    assert api(users["dealer"], "get", url).status_code == 403
    assert api(users["floor_manager"], "get", url).status_code == 200
    body = {"start": "2025-01-01T00:00:00Z", "end": "2025-01-02T00:00:00Z"}
    assert (
        api(users["supervisor"], "post", f"/api/tables/{table.pk}/reports/", body).status_code
        == 403
    )


def test_a_replay_table_is_left_out_of_reports(login, table):
    """The same round on a normal table and on a replay table (play_scenario --live): the
    normal table's figures have it, the replay table's report counts nothing, and the
    report of both tables (the admin's CSV) leaves the replay table out."""
    replay = Table.objects.create(name="replay-1", jurisdiction=table.jurisdiction, is_replay=True)
    save_version(replay, wa_config())
    cash_in(Station.objects.create(table=replay, name="s1"), "100", key="start")
    rounds = [
        play(t, [(t.stations.get(name="s1"), 1, "main", "10")], "TS 9C 9D 8H", [("s1", "stand")])
        for t in (table, replay)
    ]
    assert [r.phase for r in rounds] == ["settled", "settled"]
    assert LedgerEntry.objects.filter(round=rounds[1], station__isnull=False).count() == 2
    start, end = timezone.now() - timedelta(hours=1), timezone.now() + timedelta(minutes=1)

    normal = table_report(table, start, end)
    assert (normal["rounds_played"], normal["stations"], normal["table"]["is_replay"]) == (
        1, 1, False,
    )  # fmt: skip
    assert (normal["total"]["drop"], normal["total"]["paid"]) == ("10.00", "20.00")
    assert normal["ledger"] == {
        "staked": "10.00",
        "paid": "20.00",
        "balanced": True,
        "house_loss": "0.00",
    }

    left_out = table_report(replay, start, end)
    assert left_out["table"] == {
        "id": replay.pk, "name": "replay-1", "currency": "USD", "is_replay": True,
    }  # fmt: skip
    assert (left_out["rounds_played"], left_out["rounds_voided"], left_out["stations"]) == (
        0, 0, 0,
    )  # fmt: skip
    assert [(r["bet"], r["bets"], r["drop"], r["paid"]) for r in left_out["lines"]] == [
        ("main", 0, "0.00", "0.00")
    ]
    assert left_out["ledger"] == {
        "staked": "0.00",
        "paid": "0.00",
        "balanced": True,
        "house_loss": "0.00",
    }

    assert reports_csv([left_out, normal]) == report_csv(normal)
    response = login("floor_manager").post(
        "/admin/tablehub/table/",
        {"action": "report_last_day", "_selected_action": [str(table.pk), str(replay.pk)]},
    )
    assert response.status_code == 200 and response["Content-Type"] == "text/csv"
    rows = [line.split(",") for line in response.content.decode().splitlines()[1:]]
    assert [(r[0], r[3], r[4]) for r in rows] == [("WA 1", "main", "1"), ("WA 1", "total", "1")]
