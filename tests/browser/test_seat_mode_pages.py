"""Seat mode on the pages (issue 22, point 4), in Chromium against the real server: station a
takes seat 1 on its page, station c (no page: the protocol) seat 3, and station b bets behind
seat 1 with "follow" on; the croupier tablet shows who sits where and the order of the deal;
in play a's page asks a its question while b's page says seat 1 is deciding; a doubles and
b's bet behind doubles with it, to the cent; refusals are said in a player's words; a leaves
the seat between rounds and every page sees it free. axe-core and the pages' own audit find
nothing in the seat view of either page, and both speak it in Spanish to a Spanish browser.

The round is scanned card by card (chosen cards, so it is always the same); waits are
Playwright's own (expect retries until its timeout); the timers are off, and a step's
timeout is fired by the test (tried again a tenth of a second later while it waits for a
frame stamped before it, as in test_protection_page.py).
"""

from __future__ import annotations

import re
import time
from decimal import Decimal

import pytest

from payouts import ledger
from rounds import writer
from stations.commands import handle
from stations.models import Station, TableSeat
from stations.services import cash_in
from tablehub.demo import ensure_demo_table
from tablehub.models import Play
from tests.browser.conftest import TABLET, button, keep, open_tablet
from tests.browser.test_accessibility import audit
from tests.browser.test_keyboard_only import press
from tests.browser.test_station_layouts import serious_violations, small_targets
from tests.browser.test_station_page import deal, url, watch_errors
from tests.browser.test_two_languages import page_in  # noqa: F401 (a fixture)

expect = pytest.importorskip("playwright.sync_api").expect


pytestmark = pytest.mark.usefixtures("played_by_the_test")  # tests/browser/conftest.py


@pytest.fixture
def seats(server):
    """A seat-mode demo table (3 seats, at most $50 behind a seat) with stations a, b and c,
    each with $100."""
    demo = ensure_demo_table(
        name="Seat table",
        stations=("a", "b", "c"),
        play=Play.SEAT,
        behind_cap=Decimal("50"),
        timers={"betting": 60, "insurance": 20, "decision": 20, "bonus": 20},
    )
    for station in demo.table.stations.all():
        cash_in(station, "100", key=f"start-{station.name}")
    return demo


def says(demo, name, client_id, **message):
    """Station ``name`` sends one message over the protocol's handler; it is accepted."""
    station = Station.objects.get(table=demo.table, name=name)
    reply = handle(station, {"client_id": client_id, **message})
    assert reply["ok"], reply
    return station


def station(page, server, demo, name):
    credential = demo.station_credentials[name]
    page.goto(url(server, demo, name, f"#credential={credential}"))
    expect(page.locator("#connection")).to_have_text("Connected")
    expect(page.locator("#credits")).to_have_text("$100.00")
    return page


def test_a_seat_a_bet_behind_that_follows_the_double_and_leaving(seats, server, station_page):
    demo, table = seats, seats.table
    round = writer.open_round(table)
    a = station(station_page(), server, demo, "a")
    b = station(station_page(), server, demo, "b")
    errors_a, errors_b = watch_errors(a), watch_errors(b)
    expect(a.locator("#phase")).to_have_text("Place your bets")

    # a takes seat 1 from its page; every page learns who sits where from the seats event.
    expect(a.get_by_role("heading", name="Seat 1")).to_be_visible()
    expect(a.locator("#seat-mine")).to_have_text(
        "You have no seat: take a free seat, or bet behind a seated player."
    )
    expect(a.get_by_role("button", name="Seat 1 main bet")).to_be_disabled()  # empty seat
    button(a, "Take seat 1").click()
    expect(a.get_by_role("status")).to_have_text("You sit at seat 1.")
    expect(a.locator("#seat-mine")).to_have_text("You sit at seat 1: you decide for it.")
    expect(a.locator("[data-box='1'] .box-seat")).to_have_text("Your seat")
    expect(button(a, "Take seat 2")).to_be_hidden()  # one seat a station
    expect(b.locator("[data-box='1'] .box-seat")).to_have_text("a sits here: you may bet behind")
    expect(button(b, "Take seat 1")).to_be_hidden()
    expect(button(b, "Take seat 2")).to_be_visible()
    says(demo, "c", "sit", type="take_seat", box=3)
    expect(b.locator("[data-box='3'] .box-seat")).to_have_text("c sits here: you may bet behind")
    expect(button(b, "Take seat 3")).to_be_hidden()

    # a bets on its seat; a refusal in words: leaving a seat with bets on it.
    button(a, "$5").click()
    a.get_by_role("button", name="Seat 1 main bet").click()
    a.get_by_role("button", name="Seat 1 main bet").click()
    expect(a.get_by_role("button", name="Seat 1 main bet, $10.00 staked")).to_be_visible()
    button(a, "Leave seat").click()
    expect(a.get_by_role("status")).to_have_text(
        "Take your bets off your seat before you leave it."
    )
    says(demo, "c", "bet", type="place", box=3, amount="10")

    # b follows doubles and splits, and bets behind seat 1, within the cap.
    follow = b.get_by_label("Follow doubles and splits behind a seat")
    expect(follow).not_to_be_checked()  # the default: no
    follow.check()
    expect(b.get_by_role("status")).to_have_text(
        "Your bets behind a seat follow its doubles and splits."
    )
    assert Station.objects.get(table=table, name="b").follow_behind is True
    expect(b.locator("#behind-cap")).to_have_text(
        "All bets behind one seat together: at most $50.00."
    )
    button(b, "$100").click()
    b.get_by_role("button", name="Bet behind seat 1, main bet").click()
    expect(b.get_by_role("status")).to_have_text(
        "That would take the bets behind this seat above the table's cap. The cap is $50.00."
    )
    button(b, "$5").click()
    b.get_by_role("button", name="Bet behind seat 1, main bet").click()
    expect(b.get_by_role("status")).to_have_text("$5.00 behind seat 1, main bet.")
    expect(
        b.get_by_role("button", name="Bet behind seat 1, main bet, $5.00 staked")
    ).to_be_visible()

    # The tablet: who sits where, which seats bet, and the order of the deal.
    tablet = station_page(TABLET)
    open_tablet(tablet, server, demo)
    boxes = tablet.locator("#boxes > li")
    expect(boxes).to_have_text(
        [
            re.compile(r"^Seat 1 · bet\s*a"),
            re.compile(r"^Seat 2\s*empty"),
            re.compile(r"^Seat 3 · bet\s*c"),
        ]
    )
    order = tablet.locator("#deal-order")
    expect(order).to_have_text("Deal: seat 1, seat 3, dealer, seat 1, seat 3, hole")
    expect(order.locator(".next")).to_have_text("seat 1")

    writer.close_bets(round.pk)
    expect(tablet.locator("#prompt")).to_have_text("deal seat 1")
    # seat 1: 5 6 (11); seat 3: T 7 (17); the dealer's 6 up, T in the hole
    deal(table, "5S", "TH", "6C")
    expect(order.locator(".next")).to_have_text("seat 1")
    expect(tablet.locator("#card-list li")).to_have_text(
        ["5♠ → seat 1", "10♥ → seat 3", "6♣ → dealer up"]
    )
    expect(order.locator(".dealt")).to_have_count(3)
    deal(table, "6D", "7C", "TD")
    expect(order.locator(".dealt")).to_have_count(6)
    assert "10♦" not in tablet.content()  # the hole card, face down

    # Seat 1's turn: a is asked, b is told who decides; the tablet shows whose turn it is.
    expect(a.locator("#prompt-text")).to_have_text("Seat 1: your decision")
    expect(button(a, "Double")).to_be_enabled()
    expect(a.locator("#awaiting")).to_have_text("Your turn")
    expect(b.locator("#awaiting")).to_have_text("Seat 1 (a) is deciding")
    expect(b.locator("#prompt-text")).to_have_text("No question open")
    expect(button(b, "Double")).to_be_disabled()
    expect(b.locator("[data-box='1']")).to_have_class(re.compile(r"\bturn\b"))
    expect(tablet.locator("#seat-turn")).to_have_text("Turn: seat 1 (a)")
    expect(boxes.nth(0)).to_have_attribute("aria-current", "true")
    behind = b.get_by_role("group", name="Your bet behind seat 1")
    expect(behind).to_contain_text("11")
    expect(behind).to_contain_text("Stake $5.00")
    keep(b, "station-seat-mode-behind", whole=True)
    keep(tablet, "croupier-seat-mode")

    # a doubles: b's bet behind doubles with it (b follows, and has the credits).
    button(a, "Double").click()
    expect(behind).to_contain_text("Seat 1 doubled: your bet behind doubled too.")
    expect(behind).to_contain_text("Stake $10.00")
    expect(b.locator("#credits")).to_have_text("$90.00")  # the double's 5.00 is staked now
    assert ledger.balance(Station.objects.get(table=table, name="b")) == Decimal("90.00")
    deal(table, "9H")  # seat 1: 20
    expect(behind).to_contain_text("20")
    expect(b.locator("#awaiting")).to_have_text("Seat 3 (c) is deciding")
    expect(a.locator("#awaiting")).to_have_text("Seat 3 (c) is deciding")
    expect(tablet.locator("#seat-turn")).to_have_text("Turn: seat 3 (c)")
    says(demo, "c", "stand", type="decide", action="stand")
    deal(table, "8S")  # the dealer's 6 T 8: 24, bust

    expect(b.locator("#phase")).to_have_text("Round over")
    expect(behind).to_contain_text("Win · returned $20.00")
    expect(b.locator("#credits")).to_have_text("$110.00")  # 100 - 5 - 5 + 20
    expect(a.locator("#credits")).to_have_text("$120.00")  # 100 - 10 - 10 + 40
    by_name = {s.name: s for s in table.stations.all()}
    assert ledger.balance(by_name["a"]) == Decimal("120.00")
    assert ledger.balance(by_name["b"]) == Decimal("110.00")
    assert ledger.balance(by_name["c"]) == Decimal("110.00")  # 17 beats a bust
    expect(tablet.locator("#seat-turn")).to_be_hidden()

    # Between rounds a leaves the seat: every page sees it free.
    button(a, "Leave seat").click()
    expect(a.get_by_role("status")).to_have_text("You left your seat.")
    expect(button(a, "Take seat 1")).to_be_visible()
    expect(b.locator("[data-box='1'] .box-seat")).to_have_text("Empty seat")
    expect(button(b, "Take seat 1")).to_be_visible()
    expect(boxes.nth(0)).to_contain_text("empty")
    assert list(TableSeat.objects.filter(table=table).values_list("box", flat=True)) == [3]
    assert errors_a == [] and errors_b == []


def test_bets_behind_a_split_follow_it_or_stay_on_the_first_hand(seats, server, station_page):
    """a splits 8 8 at seat 1: b, who follows, splits behind it (a second 5.00); c, who does
    not, keeps its 5.00 on the first hand. Each page says which."""
    demo, table = seats, seats.table
    says(demo, "a", "sit", type="take_seat", box=1)
    says(demo, "b", "follow", type="set_follow", follow=True)
    round = writer.open_round(table)
    says(demo, "a", "bet", type="place", box=1, amount="10")
    says(demo, "b", "bet", type="place", box=1, amount="5")
    says(demo, "c", "bet", type="place", box=1, amount="5")
    b = station(station_page(), server, demo, "b")
    c = station(station_page(), server, demo, "c")
    expect(c.locator("#follow-behind")).not_to_be_checked()
    expect(b.locator("#follow-behind")).to_be_checked()
    writer.close_bets(round.pk)
    deal(table, "8S", "6C", "8D", "TD")  # seat 1: 8 8; the dealer's 6 up, T in the hole
    expect(b.locator("#awaiting")).to_have_text("Seat 1 (a) is deciding")

    says(demo, "a", "split", type="decide", action="split")
    expect(b.get_by_role("group", name="Your bet behind seat 1, hand 2 of 2")).to_contain_text(
        "Seat 1 split: your bet behind split too."
    )
    first = b.get_by_role("group", name="Your bet behind seat 1, hand 1 of 2")
    expect(first).to_contain_text("Seat 1 split: your bet behind split too.")
    expect(b.locator("#credits")).to_have_text("$90.00")  # a second 5.00, for the new hand
    b_station = Station.objects.get(table=table, name="b")
    assert ledger.balance(b_station) == Decimal("90.00")  # staked at the split, not later
    expect(c.get_by_role("group", name="Your bet behind seat 1")).to_contain_text(
        "Seat 1 split: your bet behind stays on the first hand."
    )
    expect(c.locator("#credits")).to_have_text("$95.00")

    deal(table, "3C")  # the first hand: 8 3
    says(demo, "a", "stand-1", type="decide", action="stand")
    deal(table, "2H")  # the second hand: 8 2
    says(demo, "a", "stand-2", type="decide", action="stand")
    deal(table, "9S")  # the dealer's 6 T 9: 25, bust
    expect(b.locator("#phase")).to_have_text("Round over")
    expect(b.locator("#credits")).to_have_text("$110.00")  # 100 - 5 - 5 + 10 + 10
    expect(c.locator("#credits")).to_have_text("$105.00")  # 100 - 5 + 10
    by_name = {s.name: s for s in table.stations.all()}
    assert ledger.balance(by_name["a"]) == Decimal("120.00")  # two hands of 10 won
    assert ledger.balance(by_name["b"]) == Decimal("110.00")
    assert ledger.balance(by_name["c"]) == Decimal("105.00")


def test_a_player_who_leaves_mid_round(seats, server, station_page):
    """a gets up while seat 1's question is open: the table answers for the seat at once by
    the jurisdiction's rule (17 stands), the bet behind follows, and the tablet says who
    left; the round plays on to the cent."""
    demo, table = seats, seats.table
    says(demo, "a", "sit", type="take_seat", box=1)
    round = writer.open_round(table)
    says(demo, "a", "bet", type="place", box=1, amount="10")
    says(demo, "b", "bet", type="place", box=1, amount="5")
    a = station(station_page(), server, demo, "a")
    b = station(station_page(), server, demo, "b")
    tablet = station_page(TABLET)
    open_tablet(tablet, server, demo)
    writer.close_bets(round.pk)
    deal(table, "TS", "6C", "7H", "TD")  # seat 1: T 7 (17); the dealer's 6 up, T in the hole
    expect(a.locator("#prompt-text")).to_have_text("Seat 1: your decision")
    expect(button(a, "Leave seat")).to_be_visible()

    button(a, "Leave seat").click()
    expect(a.get_by_role("status")).to_have_text("You left your seat.")
    expect(tablet.locator("#command-status")).to_have_text(
        "a left seat 1: the table answers for the seat"
    )
    expect(tablet.locator("#boxes > li").nth(0)).to_contain_text("a left: the table plays the seat")
    # The seat's step times out at once (deadline now): fired here, as the timer would.
    round.refresh_from_db()
    step = round.step_key
    for _ in range(50):  # the expiry waits a moment for a frame stamped before it
        writer.expire(round.pk, step)
        round.refresh_from_db()
        if round.step_key != step:
            break
        time.sleep(0.1)
    expect(tablet.locator("#prompt")).to_have_text("reveal hole card, dealer draws")
    expect(b.get_by_role("group", name="Your bet behind seat 1")).to_contain_text("Seat 1 stood.")
    expect(b.locator("[data-box='1'] .box-seat")).to_have_text("Empty seat")
    deal(table, "9S")  # the dealer's 6 T 9: 25, bust
    expect(b.locator("#phase")).to_have_text("Round over")
    by_name = {s.name: s for s in table.stations.all()}
    assert ledger.balance(by_name["a"]) == Decimal("110.00")  # 17 stood for a, and won
    assert ledger.balance(by_name["b"]) == Decimal("105.00")
    assert not TableSeat.objects.filter(table=table).exists()


@pytest.mark.parametrize("page_name", ["station", "tablet"])
def test_the_seat_view_is_accessible(seats, server, station_page, page_name):
    demo, table = seats, seats.table
    says(demo, "a", "sit", type="take_seat", box=1)
    says(demo, "a", "follow", type="set_follow", follow=True)
    writer.open_round(table)
    says(demo, "a", "bet", type="place", box=1, amount="10")
    if page_name == "station":
        page = station(station_page(), server, demo, "b")
        expect(page.locator("#seating")).to_be_visible()
        expect(page.get_by_role("button", name="Bet behind seat 1, main bet")).to_be_enabled()
        expect(button(page, "Take seat 2")).to_be_visible()
        assert small_targets(page) == []
    else:
        page = station_page(TABLET)
        open_tablet(page, server, demo)
        expect(page.locator("#deal-order")).to_have_text("Deal: seat 1, dealer, seat 1, hole")
    assert audit(page) == []
    assert serious_violations(page) == []


def test_the_seat_view_in_spanish(seats, server, page_in):  # noqa: F811 (the fixture)
    demo, table = seats, seats.table
    says(demo, "a", "sit", type="take_seat", box=1)
    writer.open_round(table)
    says(demo, "a", "bet", type="place", box=1, amount="10")
    page = page_in("es-ES")
    page.goto(url(server, demo, "b", f"#credential={demo.station_credentials['b']}"))
    expect(page.locator("#connection")).to_have_text("Conectado")
    expect(page.get_by_role("heading", name="Asiento 1")).to_be_visible()
    expect(page.locator("[data-box='1'] .box-seat")).to_have_text(
        "Aquí se sienta a: puede apostar detrás"
    )
    expect(page.locator("[data-box='2'] .box-seat")).to_have_text("Asiento libre")
    expect(button(page, "Tomar el asiento 2")).to_be_visible()
    expect(page.get_by_label("Seguir dobles y separaciones detrás de un asiento")).to_be_visible()
    button(page, "100\xa0US$").click()
    page.get_by_role("button", name="Apostar detrás del asiento 1, apuesta principal").click()
    expect(page.get_by_role("status")).to_have_text(
        "Eso llevaría las apuestas detrás de este asiento por encima del tope de la mesa. "
        "El tope es 50,00\xa0US$."
    )

    tablet = page_in("es-ES", TABLET)
    tablet.goto(f"{server}/croupier/login/")
    tablet.get_by_label("Usuario").fill("dealer")
    tablet.get_by_label("Contraseña").fill(demo.logins["dealer"])
    button(tablet, "Iniciar sesión").click()
    tablet.get_by_role("link", name=table.name).click()
    expect(tablet.locator("#connection")).to_have_text("Conectado")
    expect(tablet.locator("#deal-order")).to_have_text(
        "Reparto: asiento 1, crupier, asiento 1, carta tapada"
    )
    expect(tablet.locator("#boxes > li").nth(1)).to_contain_text("libre")


def test_the_seat_view_with_the_keyboard_alone(seats, server, station_page):
    """Take a seat, set the follow choice, bet behind a seat and leave the seat: each control
    reached with Tab and pressed with Enter or Space, no click."""
    demo, table = seats, seats.table
    writer.open_round(table)
    a = station(station_page(), server, demo, "a")
    b = station(station_page(), server, demo, "b")
    expect(a.locator("#phase")).to_have_text("Place your bets")
    press(a, "Take seat 1")
    expect(a.get_by_role("status")).to_have_text("You sit at seat 1.")
    expect(b.locator("[data-box='1'] .box-seat")).to_have_text("a sits here: you may bet behind")
    press(a, r"\$5✓?", key="Space")
    press(a, "Seat 1 main bet")
    expect(a.get_by_role("button", name="Seat 1 main bet, $5.00 staked")).to_be_visible()

    press(b, "Follow doubles and splits behind a seat", key="Space")
    expect(b.get_by_label("Follow doubles and splits behind a seat")).to_be_checked()
    press(b, r"\$5✓?", key="Space")
    press(b, "Bet behind seat 1, main bet")
    expect(b.get_by_role("status")).to_have_text("$5.00 behind seat 1, main bet.")
    assert Station.objects.get(table=table, name="b").follow_behind is True
    assert ledger.balance(Station.objects.get(table=table, name="b")) == Decimal("100.00")

    press(a, "Clear last bet")
    expect(a.get_by_role("button", name="Seat 1 main bet", exact=True)).to_be_visible()
    press(a, "Leave seat")
    expect(a.get_by_role("status")).to_have_text("You left your seat.")
    assert not TableSeat.objects.filter(table=table).exists()
