"""The croupier tablet in Chromium against the real server, on the demo table: the dealer
logs in, opens the table, closes bets on a station's bet and deals a whole round from the
virtual shoe (stacked, so the round is always the same), reading the prompts and the list
of cards on the page; a supervisor voids a round from the dialog; a dealer never reaches
the admin; the tablet shows a station's tip.

Controls are found by role and accessible name; waits are Playwright's own (expect retries
until its timeout); nothing sleeps.
"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest

from croupier.consumers import scan_reply
from payouts import ledger
from stations.commands import handle
from stations.models import Station
from tests.browser.conftest import TABLET, button, log_in, open_tablet, screenshot, stack

expect = pytest.importorskip("playwright.sync_api").expect


def station_says(demo, client_id, **message):
    station = Station.objects.get(table=demo.table, name="s1")
    reply = handle(station, {"client_id": client_id, **message})
    assert reply["ok"], reply
    return station


def test_the_dealer_deals_a_round_from_the_tablet(server, demo, station_page):
    page = station_page(TABLET)
    open_tablet(page, server, demo)
    prompt = page.locator("#prompt")
    expect(prompt).to_have_text("open bets")
    expect(button(page, "Deal card")).to_be_disabled()

    button(page, "Open table").click()
    expect(prompt).to_have_text("close bets")
    expect(page.locator("#round-info")).to_contain_text("betting")
    expect(page.locator("#table-status")).to_contain_text("Open")
    expect(page.get_by_role("timer")).to_have_text(re.compile(r"^\d+:\d\d$"))

    station = station_says(demo, "cash", type="cash_in", amount="100")
    station_says(demo, "bet", type="place", box=1, amount="10")
    # box 1: 9S 7H (16); dealer 6C up, QH in the hole, then TD: 26, bust.
    stack(demo.table, ["9S", "6C", "7H", "QH", "TD"])
    # A bet is no table event: the tablet looks again every 3 s while bets are open.
    expect(page.locator("#stations-info")).to_have_text("1 playing · 0 done", timeout=10_000)

    button(page, "Close bets").click()
    expect(prompt).to_have_text("deal box 1")
    cards = page.get_by_role("list", name=re.compile("Cards of round"))
    for n, next_prompt in enumerate(
        ["deal the dealer's up card", "deal box 1", "deal the hole card", "wait for the stations"],
        start=1,
    ):
        button(page, "Deal card").click()
        expect(prompt).to_have_text(next_prompt)
        expect(cards.get_by_role("listitem")).to_have_count(n)
    expect(cards.get_by_role("listitem")).to_have_text(
        ["9♠ → box 1", "6♣ → dealer up", "7♥ → box 1", "face down → hole (face down)"]
    )
    expect(page.locator("#dealer-cards")).to_have_text("6♣face down")
    # the step's count: who answered, who is still deciding
    expect(page.locator("#stations-info")).to_have_text(
        re.compile(r"^1 playing · step \d+: 0 answered · 1 deciding$")
    )
    expect(button(page, "Deal card")).to_be_disabled()  # the station decides first
    assert "Q♥" not in page.content()

    station_says(demo, "stand", type="decide", action="stand")
    expect(prompt).to_have_text("reveal hole card, dealer draws")
    button(page, "Deal card").click()

    # The round is over; the table is open, so the next round's bets are open at once.
    expect(prompt).to_have_text("close bets")
    expect(page.locator("#last-round")).to_have_text(
        re.compile(r"dealer 26 \(bust\)\. Pay and clear")
    )
    expect(
        page.get_by_role("heading", name=re.compile(r"Cards of round \d+ \(last round\)"))
    ).to_be_visible()
    expect(cards.get_by_role("listitem")).to_have_text(
        ["9♠ → box 1", "6♣ → dealer up", "7♥ → box 1", "Q♥ → hole (shown)", "10♦ → dealer"]
    )
    assert ledger.balance(station) == Decimal("110.00")  # 16 beats a bust: 10 staked, 20 back
    screenshot(page, "croupier-end-of-round")


def test_a_supervisor_voids_a_round_from_the_dialog(server, demo, station_page):
    page = station_page(TABLET)
    open_tablet(page, server, demo)
    button(page, "Open table").click()
    expect(page.locator("#prompt")).to_have_text("close bets")
    station = station_says(demo, "cash", type="cash_in", amount="100")
    station_says(demo, "bet", type="place", box=2, amount="25")
    expect(page.locator("#stations-info")).to_have_text("1 playing · 0 done", timeout=10_000)
    button(page, "Close bets").click()
    button(page, "Deal card").click()
    expect(page.locator("#prompt")).to_have_text("deal the dealer's up card")
    assert ledger.balance(station) == Decimal("75.00")

    # A reader error is shown at once, as an alert.
    scan_reply(demo.table, {"seq": 99, "card": "9S"})
    alert = page.locator("#reader-error")
    expect(alert).to_be_visible()
    expect(alert).to_contain_text("sequence_gap")
    button(page, "Dismiss").click()
    expect(alert).to_be_hidden()

    # Each supervisor action's dialog shows its own fields only.
    button(page, "Correct card").click()
    correct = page.get_by_role("dialog", name="Supervisor approval: Correct card")
    expect(correct.get_by_label("Card to correct")).to_be_visible()
    expect(correct.get_by_label("Discarded card")).to_be_hidden()
    expect(correct.get_by_role("group", name="Resolution")).to_be_hidden()
    button(correct, "Cancel").click()
    expect(correct).to_be_hidden()
    button(page, "Discard card").click()
    discard = page.get_by_role("dialog", name="Supervisor approval: Discard card")
    expect(discard.get_by_label("Discarded card")).to_be_visible()
    expect(discard.get_by_label("Card to correct")).to_be_hidden()
    button(discard, "Cancel").click()

    button(page, "Void round").click()
    dialog = page.get_by_role("dialog", name="Supervisor approval: Void round")
    expect(dialog).to_be_visible()
    # only the void's fields: no card to correct or discard, no dispute's resolution
    expect(dialog.get_by_label("Reason")).to_be_visible()
    for other in ("Card to correct", "Right card", "Discarded card"):
        expect(dialog.get_by_label(other)).to_be_hidden()
    expect(dialog.get_by_role("group", name="Resolution")).to_be_hidden()
    screenshot(page, "croupier-void-dialog")
    dialog.get_by_label("Supervisor username").fill("supervisor")
    dialog.get_by_label("Supervisor password").fill("wrong")
    dialog.get_by_label("Reason").fill("misdeal")
    button(dialog, "Approve").click()
    expect(dialog.get_by_role("alert")).to_contain_text("supervisor_required")
    expect(dialog.get_by_label("Supervisor password")).to_have_value("")
    dialog.get_by_label("Supervisor password").fill(demo.logins["supervisor"])
    button(dialog, "Approve").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("#last-round")).to_have_text(re.compile(r"void: misdeal"))
    expect(page.locator("#prompt")).to_have_text("close bets")  # the next round is open
    assert ledger.balance(station) == Decimal("100.00")


def test_a_dealer_cannot_reach_the_admin(server, demo, station_page):
    page = station_page(TABLET)
    page.goto(f"{server}/admin/")
    expect(page).to_have_url(re.compile(r"/admin/login/\?next=/admin/$"))
    page.get_by_label("Username").fill("dealer")
    page.get_by_label("Password").fill(demo.logins["dealer"])
    page.get_by_role("button", name="Log in").click()
    expect(
        page.get_by_text(re.compile("correct username and password for a staff account"))
    ).to_be_visible()
    expect(page).to_have_url(re.compile(r"/admin/login/"))

    log_in(page, server, "dealer", demo.logins["dealer"])  # the tablet is theirs
    expect(page.get_by_role("heading", name="Tables")).to_be_visible()
    page.goto(f"{server}/admin/")
    expect(page).to_have_url(re.compile(r"/admin/login/\?next=/admin/$"))


def test_the_tablet_shows_a_stations_tip(server, demo, station_page):
    page = station_page(TABLET)
    open_tablet(page, server, demo)
    expect(page.locator("#prompt")).to_have_text("open bets")  # connected, with its state
    station_says(demo, "cash", type="cash_in", amount="20")
    station = station_says(demo, "tip", type="tip", amount="2.50")  # the demo allows tips
    expect(page.locator("#command-status")).to_have_text("Station s1 tipped the dealer 2.50 USD")
    assert ledger.balance(station) == Decimal("17.50")
