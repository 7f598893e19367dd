"""A whole round at the demo table, with nothing driven from Python: the dealer works the
croupier tablet (opens the table, closes bets, enters every card by hand) and two players
use their station pages (cash in, bet, insure, split, double). Station s2 lets the
insurance timer run out; s1's page is reloaded in the middle of the round. Each page is
checked for what it shows, and greyed-out buttons are shown to do nothing when pressed.

The round (six decks, S17, peek, DAS): box 1 (s1) 8S 8C, box 2 (s2) 5H 6C, the dealer's
AD up and 7S in the hole (soft 18, no blackjack). s1 insures for 5.00, s2 says nothing
(timeout: no insurance). s1 splits the eights, s2 doubles 11. The drawn 3D goes to s1's
first hand (11) and to s2's double (14); s1 stands; TD gives s1's second hand 18; s1
stands. The dealer's 18 stands: s1 loses 10 + 5 insurance and pushes 10 (85.00 left of
100), s2 loses 20 (80.00).
"""

from __future__ import annotations

import pytest

from payouts import ledger
from rounds.models import Round
from tablehub.models import TableConfig
from tests.browser.conftest import TABLET, button, open_tablet, screenshot

expect = pytest.importorskip("playwright.sync_api").expect

INSURANCE_SECONDS = 3  # s2's timeout; everyone else answers long before their timers


@pytest.fixture
def table(demo, settings):
    TableConfig.objects.filter(table=demo.table).update(
        timers={"betting": 120, "insurance": INSURANCE_SECONDS, "decision": 60, "bonus": 20}
    )
    yield demo
    settings.TABLEHUB_TIMERS = "none"  # nothing fires from the server after the test


def open_station(station_page, server, demo, name):
    page = station_page()
    credential = demo.station_credentials[name]
    page.goto(f"{server}/tables/{demo.table.pk}/stations/{name}/#credential={credential}")
    expect(page.locator("#connection")).to_have_text("Connected")
    return page


def cash_in_and_bet(page, box, chips):
    page.get_by_label("Cash-in amount").fill("100")
    button(page, "Cash in").click()
    expect(page.locator("#credits")).to_have_text("$100.00")
    button(page, "$5").click()
    for _ in range(chips):
        page.get_by_role("button", name=f"Box {box} main bet").click()
    staked = f"${5 * chips}.00"
    expect(page.get_by_role("button", name=f"Box {box} main bet, {staked} staked")).to_be_visible()


def enter_card(tablet, card, expected_prompt, goes_to):
    """The dealer reads the tablet's prompt, enters the card by hand, and sees it listed
    with where it went (the hole card face down)."""
    expect(tablet.locator("#prompt")).to_have_text(expected_prompt)
    listed = tablet.locator("#card-list li")
    before = listed.count()
    tablet.get_by_label("Rank").select_option(card[0])
    tablet.get_by_label("Suit").select_option(card[1])
    button(tablet, "Enter card").click()
    expect(listed).to_have_count(before + 1)
    expect(listed.last).to_contain_text(goes_to)


def press_disabled(page, name):
    """A greyed-out button is really disabled: a forced click sends nothing."""
    target = button(page, name)
    expect(target).to_be_disabled()
    status = page.get_by_role("status").text_content()
    target.click(force=True)
    expect(page.get_by_role("status")).to_have_text(status or "")


def test_a_whole_round_on_the_tablet_and_two_station_pages(server, table, station_page):
    demo = table
    tablet = open_tablet(station_page(TABLET), server, demo)
    button(tablet, "Open table").click()
    expect(tablet.locator("#prompt")).to_have_text("close bets")

    s1 = open_station(station_page, server, demo, "s1")
    s2 = open_station(station_page, server, demo, "s2")
    expect(s1.locator("#phase")).to_have_text("Place your bets")
    cash_in_and_bet(s1, box=1, chips=2)
    cash_in_and_bet(s2, box=2, chips=2)
    press_disabled(s1, "Hit")  # betting: no decision can be made
    expect(tablet.locator("#round-info")).to_contain_text("betting")

    button(tablet, "Close bets").click()
    expect(s1.locator("#phase")).to_have_text("Dealing")
    enter_card(tablet, "8S", "deal box 1", "8♠ → box 1")
    enter_card(tablet, "5H", "deal box 2", "5♥ → box 2")
    enter_card(tablet, "AD", "deal the dealer's up card", "A♦ → dealer up")
    enter_card(tablet, "8C", "deal box 1", "8♣ → box 1")
    enter_card(tablet, "6C", "deal box 2", "6♣ → box 2")
    enter_card(tablet, "7S", "deal the hole card", "face down → hole")
    # The hole card is on no page: the stations and the tablet show it face down.
    for page in (s1, s2, tablet):
        assert page.get_by_role("img", name="seven of spades").count() == 0
    expect(s1.get_by_role("img", name="card face down")).to_be_visible()

    # Insurance: s1 insures, s2 says nothing and its timer answers "no insurance".
    expect(s1.locator("#prompt-text")).to_have_text("Box 1: insurance?")
    expect(s2.locator("#prompt-text")).to_have_text("Box 2: insurance?")
    expect(button(s2, "Insurance")).to_be_enabled()
    button(s1, "Insurance").click()
    expect(s1.locator("#credits")).to_have_text("$85.00")  # 100 - 10 bet - 5 insurance
    press_disabled(s1, "Insurance")  # answered: it cannot insure twice
    expect(s1.locator("#credits")).to_have_text("$85.00")
    expect(s2.locator("#prompt-text")).to_have_text("Box 2: your decision", timeout=15_000)
    expect(s2.locator("#credits")).to_have_text("$90.00")  # no insurance was taken

    # Player step: s1 splits its eights, s2 doubles 11; greyed-out buttons do nothing.
    expect(button(s1, "Split")).to_be_enabled()
    press_disabled(s2, "Split")
    button(s1, "Split").click()
    button(s2, "Double").click()
    expect(s2.locator("#credits")).to_have_text("$80.00")
    expect(s1.locator("#credits")).to_have_text("$75.00")
    expect(tablet.locator("#prompt")).to_have_text("draw a card")

    # s1's page is reloaded mid-round: it joins again and draws the round from the state.
    s1.reload()
    expect(s1.locator("#connection")).to_have_text("Connected")
    expect(s1.locator("#credits")).to_have_text("$75.00")
    hands = s1.get_by_role("group", name="Your hand")
    expect(hands).to_have_count(2)

    enter_card(tablet, "3D", "draw a card", "3♦ →")
    expect(s1.locator("#prompt-text")).to_have_text("Box 1: your decision")
    press_disabled(s1, "Split")  # 8 3 is no pair
    button(s1, "Stand").click()
    enter_card(tablet, "TD", "draw a card", "10♦ →")
    button(s1, "Stand").click()

    # The dealer's soft 18 stands: the round is over, and at an open table the next one
    # opens at once; each page keeps the last round on screen beside the new bets.
    for page in (s1, s2):
        expect(page.locator("#phase")).to_have_text("Place your bets")
        expect(page.locator("#round-caption")).to_have_text("Last round")
        expect(page.locator("#dealer-total")).to_have_text("18")
    expect(s1.locator("#credits")).to_have_text("$85.00")
    expect(s2.locator("#credits")).to_have_text("$80.00")
    expect(s1.locator("#last-bet")).to_have_text("$25.00")  # 10 + 10 split + 5 insurance
    expect(s1.locator("#last-win")).to_have_text("$10.00")  # the push
    expect(s2.locator("#last-win")).to_have_text("$0.00")
    expect(tablet.locator("#last-round")).to_contain_text("Pay and clear")
    expect(tablet.locator("#card-list li").nth(5)).to_contain_text("7♠ → hole")  # now shown

    round, following = Round.objects.filter(table=demo.table).order_by("pk")
    assert (round.phase, following.phase) == (Round.Phase.SETTLED, Round.Phase.BETTING)
    stations = {s.name: s for s in demo.table.stations.all()}
    assert ledger.balance(stations["s1"]) == 85 and ledger.balance(stations["s2"]) == 80
    assert round.events.filter(kind="timeout").count() == 1  # s2's insurance

    screenshot(tablet, "whole-round-croupier")
    screenshot(s1, "whole-round-s1")
    screenshot(s2, "whole-round-s2")
