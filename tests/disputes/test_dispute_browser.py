"""A dispute in Chromium against the real server, on the demo table: a player presses Dispute
on the station page, the round halts on both screens, and a supervisor corrects the misread
card from the tablet's dialog; the station redraws with the right card and plays on."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest

from payouts import ledger
from stations.commands import handle
from stations.models import Station
from tablehub.models import Jurisdiction
from tests.browser.conftest import (  # noqa: F401 (the browser tests' fixtures)
    TABLET,
    browser,
    button,
    demo,
    fresh_channel_layer_afterwards,
    keep,
    open_tablet,
    screenshot,
    server,
    stack,
    station_page,
)

expect = pytest.importorskip("playwright.sync_api").expect


def test_a_dispute_resolved_with_a_correction_on_the_tablet(server, demo, station_page):  # noqa: F811
    Jurisdiction.objects.filter(pk=demo.table.jurisdiction_id).update(
        disputes_allowed=True, dispute_window_seconds=60
    )
    tablet = open_tablet(station_page(TABLET), server, demo)
    expect(button(tablet, "Resolve dispute")).to_be_disabled()
    button(tablet, "Open table").click()
    expect(tablet.locator("#prompt")).to_have_text("close bets")

    station = Station.objects.get(table=demo.table, name="s1")
    for client_id, message in (
        ("cash", {"type": "cash_in", "amount": "100"}),
        ("bet", {"type": "place", "box": 1, "amount": "10"}),
    ):
        assert handle(station, {"client_id": client_id, **message})["ok"]
    player = station_page()
    credential = demo.station_credentials["s1"]
    player.goto(f"{server}/tables/{demo.table.pk}/stations/s1/#credential={credential}")
    expect(player.locator("#connection")).to_have_text("Connected")

    # The reader reads box 1's second card as 7H; the player saw a 2 of hearts.
    stack(demo.table, ["9S", "6C", "7H", "QH", "TD", "5S"])
    expect(tablet.locator("#stations-info")).to_have_text("1 playing · 0 done", timeout=10_000)
    button(tablet, "Close bets").click()
    for _ in range(4):
        button(tablet, "Deal card").click()
    expect(tablet.locator("#prompt")).to_have_text("wait for the stations")
    expect(player.locator("#prompt-text")).to_have_text("Box 1: your decision")

    dispute = button(player, "Dispute the round")
    expect(dispute).to_be_enabled()
    dispute.click()
    expect(player.locator("#halted")).to_contain_text("is halted: a dispute waits")
    expect(player.locator("#alert")).to_have_text(
        "Round 1 is halted: a dispute waits for the supervisor. No card is dealt and no "
        "decision taken until it is resolved."
    )
    expect(button(player, "Stand")).to_be_disabled()
    expect(dispute).to_be_disabled()
    expect(tablet.get_by_role("alert").filter(has_text="Dispute")).to_contain_text(
        "station s1 disputes round"
    )
    expect(tablet.locator("#prompt")).to_have_text("dispute: wait for a supervisor")
    expect(button(tablet, "Deal card")).to_be_disabled()
    screenshot(tablet, "croupier-dispute")

    button(tablet, "Resolve dispute").click()
    dialog = tablet.get_by_role("dialog", name="Supervisor approval: Resolve dispute")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Station s1 disputes round")
    dialog.get_by_label("Correct a card, then continue").check()
    dialog.get_by_label("Card to correct").select_option(label="3. 7♥ → box 1")
    dialog.get_by_label("Right card").select_option("2H")
    dialog.get_by_label("Supervisor username").fill("supervisor")
    dialog.get_by_label("Supervisor password").fill("wrong")
    button(dialog, "Approve").click()
    expect(dialog.get_by_role("alert")).to_contain_text("supervisor_required")
    dialog.get_by_label("Supervisor password").fill(demo.logins["supervisor"])
    button(dialog, "Approve").click()
    expect(dialog).to_be_hidden()

    cards = tablet.get_by_role("list", name=re.compile("Cards of round"))
    expect(cards.get_by_role("listitem").nth(2)).to_have_text("2♥ → box 1 (corrected; read as 7♥)")
    expect(tablet.locator("#dispute-alert")).to_be_hidden()
    expect(player.locator("#halted")).to_be_hidden()
    expect(player.get_by_role("img", name="two of hearts")).to_be_visible()
    expect(player.get_by_role("img", name="seven of hearts")).to_have_count(0)
    # The station is told what the correction changed, and that the round goes on (issue 19,
    # point 2): box 1's hand was 9♠ 7♥ (16), it is 9♠ 2♥ (11); its stake is unchanged.
    change = "Box 1: 9♠ 7♥, 16 → 9♠ 2♥, 11."
    expect(player.locator("#alert")).to_have_text(
        re.compile(
            r"^Round 1 goes on with the corrected cards: answer by \d{1,2}:\d\d:\d\d( [AP]M)?\. "
            + re.escape(change) + "$"
        )
    )
    player.get_by_text("Notices", exact=True).click()
    expect(player.locator("#notices li")).to_have_text(
        [
            re.compile("Round 1 goes on with the corrected cards: .*" + re.escape(change)),
            re.compile(re.escape("The supervisor corrected card 3 of round 1. " + change) + "$"),
            re.compile("Round 1 is halted: a dispute waits for the supervisor"),
        ]
    )
    keep(player, "notice-corrected-and-resumed")
    screenshot(player, "station-after-correction")

    button(player, "Double").click()  # 9S 2H: 11, doubled; TD: 21
    expect(tablet.locator("#prompt")).to_have_text("draw a card")
    button(tablet, "Deal card").click()
    # The dealer's turn: wait for the tablet to ask, or the second press may come too soon.
    expect(tablet.locator("#prompt")).to_have_text("reveal hole card, dealer draws")
    button(tablet, "Deal card").click()  # the dealer: 6C QH 5S = 21, a push
    expect(tablet.locator("#prompt")).to_have_text("close bets")
    assert ledger.balance(station) == Decimal("100.00")
