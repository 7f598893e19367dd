"""The reference station page in Chromium against the real server: it joins with the
credential from the URL fragment, cashes in, bets, and plays a round whose cards the test
scans like the card reader would (chosen cards, so the round is always the same); it tips
the dealer where the jurisdiction allows it.

Controls are found by role and accessible name, so the names are checked too. Waits are
Playwright's own (expect retries until its timeout); nothing sleeps.
"""

from __future__ import annotations

import re

import pytest
from django.utils import timezone

from croupier.services import current_shoe, scan
from rounds import writer
from stations.services import cash_in
from tablehub.models import Jurisdiction
from tests.browser.conftest import button, screenshot

expect = pytest.importorskip("playwright.sync_api").expect

DECISIONS = ["Hit", "Stand", "Double", "Split", "Surrender", "Insurance", "No insurance"]
PORTRAIT = {"width": 800, "height": 1280}


pytestmark = pytest.mark.usefixtures("played_by_the_test")  # tests/browser/conftest.py


def url(server, demo, station="s1", fragment=""):
    return f"{server}/tables/{demo.table.pk}/stations/{station}/{fragment}"


def watch_errors(page):
    """Every script error and console error of the page (a CSP refusal is one too)."""
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    return errors


def deal(table, *cards):
    """Scan cards as the card reader would, each with the reader's next sequence number."""
    for card in cards:
        seq = current_shoe(table).reader_seq + 1
        assert scan(table, seq, card)["duplicate"] is False


def expect_decisions(page, enabled):
    for name in DECISIONS:
        if name in enabled:
            expect(button(page, name)).to_be_enabled()
        else:
            expect(button(page, name)).to_be_disabled()


def test_a_station_joins_bets_and_plays_a_round(server, demo, station_page):
    table = demo.table
    page = station_page()
    errors = watch_errors(page)
    page.goto(url(server, demo, fragment=f"#credential={demo.station_credentials['s1']}"))
    expect(page.locator("#connection")).to_have_text("Connected")
    assert "credential" not in page.url  # taken out of the address bar at once
    expect(page.locator("#credits")).to_have_text("$0.00")
    expect(page.get_by_role("heading", name="Box 3")).to_be_visible()
    expect_decisions(page, enabled=[])  # no round, no question

    page.get_by_label("Cash-in amount").fill("100")
    button(page, "Cash in").click()
    expect(page.locator("#credits")).to_have_text("$100.00")
    expect(page.get_by_role("status")).to_have_text("Cashed in $100.00.")

    round = writer.open_round(table)
    # No event says a round opened: the page finds it on its own (it asks every 3 s).
    expect(page.locator("#phase")).to_have_text("Place your bets", timeout=10_000)
    expect(page.get_by_role("timer")).to_contain_text(re.compile(r"\b\d+ s"))

    five = button(page, "$5")
    five.click()
    expect(five).to_have_attribute("aria-pressed", "true")
    expect(button(page, "$1")).to_have_attribute("aria-pressed", "false")
    page.get_by_role("button", name="Box 1 main bet").click()
    expect(page.get_by_role("button", name="Box 1 main bet, $5.00 staked")).to_be_visible()
    expect(page.get_by_role("status")).to_have_text("$5.00 on box 1, main bet.")
    expect(page.locator("#bet")).to_have_text("$5.00")  # seed 001 §4: what is on the table
    # the betting buttons by seed 001 §3.1.1 and §4's names, each saying what it does
    for name, does in [
        ("Clear last bet", "Takes back the last chip"),
        ("Clear all bets", "Takes back every bet"),
        ("Double bet", "Doubles every bet"),
        ("Repeat last bet", "all the bets of your last round"),
        ("Repeat last chip", "your last chip"),
    ]:
        expect(button(page, name)).to_have_attribute("title", re.compile(does))
    # seed 001 §3.1.1: what one press of BET ALL wagers, under it: $5 on main and 4 specials
    expect(page.get_by_role("button", name="Bet all on box 1")).to_contain_text("$25.00")
    expect_decisions(page, enabled=[])  # betting: every decision is really disabled

    # A refused command is shown, not dropped: a special bet above the table's maximum.
    button(page, "$500").click()
    page.get_by_role("button", name="Box 1 pair").click()
    expect(page.get_by_role("status")).to_have_text(
        "That bet is above the table's maximum. The maximum is $100.00."
    )
    button(page, "$5").click()

    writer.close_bets(round.pk)
    expect(page.locator("#phase")).to_have_text("Dealing")
    expect(button(page, "Clear last bet")).to_be_disabled()
    # box 1: T 6 (16); the dealer's 6 up and 7 in the hole
    deal(table, "TS", "6C", "6D")
    expect(page.get_by_role("img", name="six of clubs")).to_be_visible()
    deal(table, "7H")
    expect(page.get_by_role("img", name="card face down")).to_be_visible()
    assert page.get_by_role("img", name="seven of hearts").count() == 0
    expect(page.locator("#prompt-text")).to_have_text("Box 1: your decision")
    expect_decisions(page, enabled=["Hit", "Stand", "Double", "Surrender"])
    expect(page.get_by_role("group", name="Your hand")).to_contain_text("16")
    screenshot(page, "station-s1-decision")

    button(page, "Hit").click()
    expect(page.locator("#prompt-text")).to_have_text("No question open")
    expect_decisions(page, enabled=[])
    deal(table, "3C")  # 19: no double or surrender on three cards
    expect_decisions(page, enabled=["Hit", "Stand"])
    expect(page.get_by_role("group", name="Your hand")).to_contain_text("19")

    button(page, "Stand").click()
    expect(page.get_by_role("img", name="seven of hearts")).to_be_visible()  # revealed
    deal(table, "9S")  # the dealer's 6 7 9: 22, bust
    expect(page.locator("#phase")).to_have_text("Round over")
    expect(page.locator("#dealer-total")).to_have_text("22, bust")
    expect(page.get_by_role("group", name="Your hand")).to_contain_text("Win · returned $10.00")
    expect(page.locator("#win")).to_have_text("You win $10.00")
    expect(page.locator("#credits")).to_have_text("$105.00")
    expect(page.locator("#last-bet")).to_have_text("$5.00")
    expect(page.locator("#last-win")).to_have_text("$10.00")
    expect_decisions(page, enabled=[])
    expect(page.get_by_role("listitem", name=f"Round {round.number}: 22, bust")).to_be_visible()
    expect(page.locator("#dealer-stats .stat")).to_contain_text(["Rounds1", "Bust100% (1)"])
    expect(page.locator("#player-history tr")).to_have_text(
        [re.compile(rf"{round.number}\s*\$5\.00\s*\$10\.00\s*\$5\.00")]
    )
    screenshot(page, "station-s1-end-of-round")
    assert errors == []

    # The same table on a portrait tablet, for station s2 (which sat the round out).
    tablet = station_page(PORTRAIT)
    tablet.goto(url(server, demo, "s2", f"#credential={demo.station_credentials['s2']}"))
    expect(tablet.locator("#connection")).to_have_text("Connected")
    expect(tablet.locator("#dealer-total")).to_have_text("22, bust")
    expect(tablet.locator("#last-bet")).to_have_text("–")
    screenshot(tablet, "station-s2-portrait")


def test_the_countdown_keeps_the_servers_clock_from_a_ping(server, demo, station_page):
    """The device's clock is a minute fast: the page takes the server's time from a ping
    (less half its round trip, docs/protocol.md) and counts down to the deadline on it."""
    page = station_page()
    page.add_init_script("{ const real = Date.now; Date.now = () => real() + 60000; }")
    page.goto(url(server, demo, fragment=f"#credential={demo.station_credentials['s1']}"))
    expect(page.locator("#connection")).to_have_text("Connected")
    trip = re.compile(r"^\d+(\.\d+)?$")  # milliseconds
    expect(page.locator("#timer")).to_have_attribute("data-round-trip", trip)
    round = writer.open_round(demo.table)
    expect(page.locator("#phase")).to_have_text("Place your bets", timeout=10_000)
    expect(page.get_by_role("timer")).to_contain_text(re.compile(r"\b\d+ s"))
    shown = int(page.locator("#timer-value").inner_text().split()[0])
    left = (round.deadline - timezone.now()).total_seconds()
    assert left - 1.5 <= shown <= left + 1.5, (shown, left)


def test_the_page_asks_for_the_credential_and_reconnects(server, demo, station_page):
    page = station_page()
    sockets = []  # the page's station sockets, passed through to the server

    def through(route):
        route.connect_to_server()
        sockets.append(route)

    page.route_web_socket("**/station/", through)
    page.goto(url(server, demo))
    credential = page.get_by_label("Device credential")
    expect(credential).to_be_visible()
    credential.fill("not-the-credential")
    button(page, "Connect").click()
    expect(page.get_by_role("alert").filter(has_text="did not accept")).to_be_visible()

    credential.fill(demo.station_credentials["s1"])
    button(page, "Connect").click()
    expect(page.locator("#connection")).to_have_text("Connected")
    expect(page.locator("#credits")).to_have_text("$0.00")
    assert demo.station_credentials["s1"] not in page.content()  # in sessionStorage only

    cash_in(demo.table.stations.get(name="s1"), "20", key="cashier-1")  # no event tells it
    sockets[-1].close()  # the connection drops
    expect(page.get_by_role("alert")).to_have_text("Connection lost — reconnecting…")
    expect(button(page, "Cash out")).to_be_disabled()
    expect(page.get_by_role("alert")).to_have_text(
        "Reconnected: credits and the round restored from the table."
    )
    # both said in the station's notices too, newest first
    page.get_by_text("Notices", exact=True).click()
    expect(page.locator("#notices li")).to_have_text(
        [
            re.compile("Reconnected: credits and the round restored from the table.$"),
            re.compile("Connection lost — reconnecting…$"),
        ]
    )
    expect(page.locator("#connection")).to_have_text("Connected")
    expect(page.locator("#credits")).to_have_text("$20.00")  # redrawn from the full state
    screenshot(page, "station-s1-reconnected")


def test_insurance_and_a_big_win_at_an_open_table(server, demo, station_page):
    """At an open table the next round opens as soon as one settles: the page keeps the last
    round's cards and win on screen while the new bets go down."""
    table = demo.table
    table.is_open = True
    table.save(update_fields=["is_open"])
    table.current_config().__class__.objects.filter(table=table).update(
        win_thresholds={"nice": "1.5", "big": "2"}
    )
    cash_in(table.stations.get(name="s1"), "200", key="cashier-1")
    page = station_page(PORTRAIT)
    errors = watch_errors(page)
    page.goto(url(server, demo, fragment=f"#credential={demo.station_credentials['s1']}"))
    expect(page.locator("#credits")).to_have_text("$200.00")

    round = writer.open_round(table)
    button(page, "$25").click()
    page.get_by_role("button", name="Box 2 main bet").click()
    expect(page.get_by_role("button", name="Box 2 main bet, $25.00 staked")).to_be_visible()
    writer.close_bets(round.pk)
    deal(table, "TS", "AH", "9D", "6C")  # box 2: T 9; the dealer's ace up: insurance?
    expect(page.locator("#prompt-text")).to_have_text("Box 2: insurance?")
    expect_decisions(page, enabled=["Insurance", "No insurance"])
    expect(button(page, "Even money")).to_be_disabled()
    button(page, "No insurance").click()
    expect_decisions(page, enabled=["Hit", "Stand", "Double", "Surrender"])
    button(page, "Stand").click()  # the dealer's A 6: soft 17, stands; 19 wins 25

    expect(page.locator("#phase")).to_have_text("Place your bets")  # the next round
    expect(page.locator("#round-caption")).to_have_text("Last round")
    expect(page.get_by_role("group", name="Your hand")).to_contain_text("Win · returned $50.00")
    expect(page.locator("#dealer-total")).to_have_text("17")
    expect(page.locator("#win")).to_have_text("Big win! $50.00")  # 50 / 25 = 2: big here
    expect(page.locator("#credits")).to_have_text("$225.00")
    expect(page.get_by_role("button", name="Box 2 main bet")).to_be_enabled()
    screenshot(page, "station-s1-big-win-portrait")
    assert errors == []


def test_a_station_tips_the_dealer_where_the_jurisdiction_allows_it(server, demo, station_page):
    page = station_page()
    errors = watch_errors(page)
    page.goto(url(server, demo, fragment=f"#credential={demo.station_credentials['s1']}"))
    expect(page.locator("#connection")).to_have_text("Connected")
    page.get_by_label("Cash-in amount").fill("25")
    button(page, "Cash in").click()
    expect(page.locator("#credits")).to_have_text("$25.00")
    page.get_by_label("Tip for the dealer").fill("30")  # more than the credits
    button(page, "Tip the dealer").click()
    expect(page.get_by_role("status")).to_have_text("Not enough credits for that.")
    page.get_by_label("Tip for the dealer").fill("2.50")
    button(page, "Tip the dealer").click()
    expect(page.get_by_role("status")).to_have_text("You tipped the dealer $2.50. Thank you!")
    expect(page.locator("#credits")).to_have_text("$22.50")
    assert errors == []

    Jurisdiction.objects.filter(pk=demo.table.jurisdiction_id).update(tips_allowed=False)
    again = station_page()  # a new join: the table's set-up says tips are off
    again.goto(url(server, demo, fragment=f"#credential={demo.station_credentials['s1']}"))
    expect(again.locator("#connection")).to_have_text("Connected")
    expect(again.locator("#credits")).to_have_text("$22.50")
    expect(again.get_by_label("Tip for the dealer")).to_be_hidden()
