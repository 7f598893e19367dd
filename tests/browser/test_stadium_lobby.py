"""The stadium lobby on the station page (issue 22, point 5), in Chromium against the real
server: the "Tables" panel lists both demo tables with their rules, limits and players, its
"Move here" is disabled (and says why) while the station has a bet on the open round, and
after the move the page is the station's page at the other table, with the same credits (and
another screen of the station at the old table says that it moved).
"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest

from payouts import ledger
from rounds import writer
from stations.models import Station
from stations.services import cash_in
from tablehub.demo import ensure_demo_stadium, ensure_demo_table
from tablehub.models import Table
from tests.browser.conftest import button
from tests.browser.test_accessibility import audit
from tests.browser.test_station_layouts import keep

expect = pytest.importorskip("playwright.sync_api").expect


@pytest.fixture
def stadium(server, demo, settings):
    settings.TABLEHUB_TIMERS = "none"  # the test opens the round itself; nothing deals
    video = ensure_demo_table(name="Video demo table", stations=("v1", "v2"), mode="video")
    Table.objects.filter(pk__in=[demo.table.pk, video.table.pk]).update(is_open=True)
    ensure_demo_stadium([demo, video])
    return demo.table, video.table


def test_the_lobby_lists_the_tables_and_moves_the_station_with_its_credits(
    server, demo, stadium, station_page
):
    live, video = stadium
    station = Station.objects.get(table=live, name="s1")
    cash_in(station, "123.45", key="start")
    writer.open_round(live)
    page = station_page()
    credential = demo.station_credentials["s1"]
    page.goto(f"{server}/tables/{live.pk}/stations/s1/#credential={credential}")
    expect(page.locator("#connection")).to_have_text("Connected")
    expect(page.locator("#credits")).to_have_text("$123.45")

    # A bet on the open round: the other table's "Move here" is disabled, and says why.
    expect(page.locator("#phase")).to_have_text("Place your bets")
    button(page, "$5").click()
    page.get_by_role("button", name="Box 1 main bet").click()
    expect(page.get_by_role("button", name="Box 1 main bet, $5.00 staked")).to_be_visible()
    page.get_by_text("Tables of Demo stadium").click()
    tables = page.locator("#lobby-tables > li")
    expect(tables).to_have_count(2)
    live_line = page.get_by_role("listitem", name="Demo table", exact=True)
    video_line = page.get_by_role("listitem", name="Video demo table")
    expect(live_line).to_contain_text("Live dealer, common draw · Open")
    expect(live_line).to_contain_text("6 decks, blackjack pays 3:2")
    expect(live_line).to_contain_text("Main bet $1.00 to $500.00, special bets $1.00 to $100.00")
    expect(live_line).to_contain_text("1 player")
    expect(live_line).to_contain_text("You are playing here.")
    expect(video_line).to_contain_text("Video, common draw · Open")
    expect(video_line).to_contain_text("0 players")
    move = video_line.get_by_role("button", name="Move here")
    expect(move).to_be_disabled()
    expect(page.locator("#lobby-note")).to_have_text(
        "You can move to another table once your bets are settled."
    )
    keep(page, "lobby-bets-open", whole=True)

    # The bet taken back: the move is possible.
    button(page, "Clear all bets").click()
    expect(page.locator("#bet")).to_have_text(re.compile(r"\$0\.00|–"))
    expect(move).to_be_enabled()
    assert audit(page) == []
    keep(page, "lobby", whole=True)
    # A second screen of the station at the old table (another tab) is told when it moves.
    other = station_page()
    other.goto(f"{server}/tables/{live.pk}/stations/s1/#credential={credential}")
    expect(other.locator("#connection")).to_have_text("Connected")
    move.click()

    # The station's page at the other table, joined, with the same credits.
    expect(page).to_have_url(f"{server}/tables/{video.pk}/stations/s1/")
    expect(page.locator("#connection")).to_have_text("Connected")
    expect(page.locator("#table-name")).to_have_text("Video demo table")
    expect(page.locator("#credits")).to_have_text("$123.45")
    expect(other.locator("#connection")).to_have_text("This station moved to another table.")
    station.refresh_from_db()
    assert station.table_id == video.pk
    assert ledger.balance(station) == Decimal("123.45")
    assert ledger.check() == []
    page.get_by_text("Tables of Demo stadium").click()
    expect(page.get_by_role("listitem", name="Video demo table")).to_contain_text(
        "You are playing here."
    )
    expect(
        page.get_by_role("listitem", name="Demo table", exact=True).get_by_role(
            "button", name="Move here"
        )
    ).to_be_enabled()
