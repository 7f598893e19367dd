"""Every change is said at the station (issue 19, point 2), in Chromium: a restarted betting
window (the countdown goes on from the new deadline, never stays at 0), the table closing
and opening, a new shoe, a voided round with the stakes given back, and a cash-out's
receipt, each in the alert and the notice list. A screenshot of each at a phone's size
goes to artifacts/screenshots/ (and docs/screenshots/ with TABLEHUB_REFRESH_SCREENSHOTS=1).
"""

from __future__ import annotations

import re

import pytest

from croupier import tablet
from croupier.services import current_shoe, scan
from rounds import voids, writer
from rounds.models import Round
from stations.models import Station
from stations.services import cash_in
from tests.browser.conftest import button
from tests.browser.test_station_layouts import keep

expect = pytest.importorskip("playwright.sync_api").expect

PHONE = {"width": 390, "height": 844}


pytestmark = pytest.mark.usefixtures("played_by_the_test")  # tests/browser/conftest.py


def shot(page, name: str) -> None:
    keep(page, f"notice-{name}")


def test_each_change_is_said_at_the_station(server, demo, station_page):
    table = demo.table
    station = Station.objects.get(table=table, name="s1")
    cash_in(station, "100", key="start")
    page = station_page(PHONE)
    credential = demo.station_credentials["s1"]
    page.goto(f"{server}/tables/{table.pk}/stations/s1/#credential={credential}")
    expect(page.locator("#connection")).to_have_text("Connected")
    alert = page.locator("#alert")
    notices = page.locator("#notices li")

    tablet.open_table(table)
    expect(alert).to_have_text("The table is open: rounds follow each other again.")
    round = table.rounds.get()
    expect(page.locator("#phase")).to_have_text("Place your bets", timeout=10_000)

    # Nobody bets: the window restarts, and the countdown with it.
    Round.objects.filter(pk=round.pk).update(deadline=None)  # as if it had run out
    writer.expire(round.pk, "betting")
    expect(alert).to_contain_text(re.compile(r"Nobody bet in time: bets are open again until "))
    expect(page.get_by_role("timer")).to_have_text(re.compile(r"\b[1-9]\d* s"))
    shot(page, "betting-restarted")

    tablet.new_shoe(table)
    expect(alert).to_have_text("The dealer started a new shoe (6 decks, freshly shuffled).")
    shot(page, "new-shoe")

    # A bet, the deal, then a supervisor voids the round: the stakes come back, said.
    button(page, "$5").click()
    page.get_by_role("button", name="Box 1 main bet").click()
    expect(page.get_by_role("button", name="Box 1 main bet, $5.00 staked")).to_be_visible()
    writer.close_bets(round.pk)
    for card in ("9S", "6C"):
        assert scan(table, current_shoe(table).reader_seq + 1, card)["duplicate"] is False
    expect(page.locator("#credits")).to_have_text("$95.00", timeout=10_000)
    voids.void_round(round.pk, by="supervisor", reason="a misdeal")
    expect(alert).to_have_text(
        "Round 1 was voided (a misdeal). Your stakes of $5.00 are given back: $5.00 "
        "returned. Credits now $100.00."
    )
    expect(page.locator("#credits")).to_have_text("$100.00", timeout=10_000)
    shot(page, "void-refund")

    tablet.close_table(table, by="dealer")
    expect(alert).to_contain_text("The table is closing: no new round after this one.")
    shot(page, "table-closed")

    button(page, "Cash out").click()
    expect(alert).to_contain_text(
        re.compile(r"^Receipt: \$100\.00 paid out to station s1 at Demo table, ")
    )
    expect(page.locator("#credits")).to_have_text("$0.00")
    shot(page, "receipt")

    # Every notice stays in the list, newest first.
    page.get_by_text("Notices", exact=True).click()
    expect(notices).to_have_count(6)
    expect(notices.first).to_contain_text("Receipt: $100.00")
