"""The virtual shoe's commitment on the pages (docs/integrity.md): the tablet and a station
show it once the dealer's first "Deal card" shuffled the demo table's virtual shoe, the same
commitment the server stored, and never the server's seed."""

from __future__ import annotations

import pytest

from stations.commands import handle
from stations.models import Station
from tablehub.models import VirtualShuffle
from tests.browser.conftest import TABLET, button, open_tablet

expect = pytest.importorskip("playwright.sync_api").expect


def test_the_tablet_and_a_station_show_the_shoes_commitment(server, demo, station_page):
    tablet = station_page(TABLET)
    open_tablet(tablet, server, demo)
    commitment = tablet.locator("#commitment-info")
    expect(commitment).to_have_text("none (no virtual shoe dealing)")
    station = station_page()
    credential = demo.station_credentials["s1"]
    station.goto(f"{server}/tables/{demo.table.pk}/stations/s1/#credential={credential}")
    expect(station.locator("#connection")).to_have_text("Connected")
    shown = station.locator("#shoe-commitment")
    expect(shown).to_have_text("none (no virtual shoe dealing)")

    button(tablet, "Open table").click()
    expect(tablet.locator("#prompt")).to_have_text("close bets")
    s1 = Station.objects.get(table=demo.table, name="s1")
    for client_id, message in (
        ("cash", {"type": "cash_in", "amount": "100"}),
        ("bet", {"type": "place", "box": 1, "amount": "10"}),
    ):
        reply = handle(s1, {"client_id": client_id, **message})
        assert reply["ok"], reply
    expect(tablet.locator("#stations-info")).to_have_text("1 playing · 0 done", timeout=10_000)
    button(tablet, "Close bets").click()
    expect(tablet.locator("#prompt")).to_have_text("deal box 1")
    button(tablet, "Deal card").click()  # the virtual shoe's first card: shuffled, committed
    expect(tablet.locator("#prompt")).to_have_text("deal the dealer's up card")

    shuffle = VirtualShuffle.objects.get()
    expected = f"shuffle {shuffle.pk}: {shuffle.commitment}"
    expect(commitment).to_have_text(expected)
    expect(shown).to_have_text(expected)  # from the shoe_committed event
    station.get_by_text("Provably fair shoe").click()
    expect(shown).to_be_visible()
    station.reload()  # and from the state, after joining again
    expect(station.locator("#connection")).to_have_text("Connected")
    expect(shown).to_have_text(expected)
    for page in (tablet, station):
        assert shuffle.server_seed not in page.content()


def test_a_video_tables_station_adds_its_seed_to_the_next_shoe(server, station_page):
    from tablehub.demo import ensure_demo_table
    from tablehub.models import StationSeed, Table

    video = ensure_demo_table(
        "Video demo table", ("v1", "v2"), mode=Table.Mode.VIDEO, timers={"betting": 600}
    )
    page = station_page()
    credential = video.station_credentials["v1"]
    page.goto(f"{server}/tables/{video.table.pk}/stations/v1/#credential={credential}")
    expect(page.locator("#connection")).to_have_text("Connected")
    page.get_by_text("Provably fair shoe").click()
    seed = page.get_by_label("Your seed for the next shoe")
    seed.fill("two words")  # refused by the page itself: nothing sent
    button(page, "Add my seed").click()
    expect(page.locator("#status")).to_contain_text("1 to 64 letters, digits or signs")
    assert StationSeed.objects.count() == 0
    seed.fill("lucky-7")
    button(page, "Add my seed").click()
    expect(page.locator("#seed-given")).to_have_text("Your seed for the next shoe: lucky-7")
    assert list(StationSeed.objects.values_list("station__name", "seed")) == [("v1", "lucky-7")]
