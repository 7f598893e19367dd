"""The station page as players live it (issue 19, points 1, 3, 5 and 7), on a phone
(390x844), a tablet (1024x768) and a kiosk (1920x1080): nothing scrolls sideways, even with
credits in the thousands; when a question is open its buttons and the countdown are on
screen without scrolling, beside the hand they decide; every control is a finger's size
(44 px); the rules and paytables are there at any time; a refused bet says why in a player's
words; axe-core finds no serious or critical violation, and neither on the croupier tablet.
Screenshots go to artifacts/screenshots/, and with TABLEHUB_REFRESH_SCREENSHOTS=1 to
docs/screenshots/ too (listed in its README.md).
"""

from __future__ import annotations

import pytest

from croupier.services import current_shoe, scan
from rounds import writer
from stations.models import Station
from stations.services import cash_in
from tests.browser.conftest import button, keep, log_in

expect = pytest.importorskip("playwright.sync_api").expect
Axe = pytest.importorskip("axe_playwright_python.sync_playwright").Axe

LAYOUTS = {
    "phone": {"width": 390, "height": 844},
    "tablet": {"width": 1024, "height": 768},
    "kiosk": {"width": 1920, "height": 1080},
}
TARGET = 44  # px: a finger's size


pytestmark = pytest.mark.usefixtures("played_by_the_test")  # tests/browser/conftest.py


def serious_violations(page) -> list[str]:
    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}"
        for v in results.response["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def sideways(page) -> int:
    return page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")


def small_targets(page) -> list[str]:
    """Every visible control smaller than a finger (44 x 44 px)."""
    return page.evaluate(
        """(size) => [...document.querySelectorAll("button, input, select, summary, a[href]")]
          .filter((el) => {
            const r = el.getBoundingClientRect();
            return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== "hidden";
          })
          .filter((el) => {
            const r = el.getBoundingClientRect();
            return r.width < size - 0.5 || r.height < size - 0.5;
          })
          .map((el) => `${el.tagName.toLowerCase()}#${el.id} '${el.textContent.trim()
            .slice(0, 20)}' ${Math.round(el.getBoundingClientRect().width)}x${
            Math.round(el.getBoundingClientRect().height)}`)""",
        TARGET,
    )


def on_screen(page, locator) -> bool:
    box = locator.bounding_box()
    size = page.viewport_size
    return (
        box is not None
        and box["y"] >= 0
        and box["y"] + box["height"] <= size["height"]
        and box["x"] >= 0
        and box["x"] + box["width"] <= size["width"]
    )


def comes_on_screen(page, locator, seconds: float = 2.0) -> bool:
    """Whether ``locator`` is on screen within ``seconds``, without anyone scrolling."""
    for _ in range(int(seconds / 0.05)):
        if on_screen(page, locator):
            return True
        page.wait_for_timeout(50)
    return on_screen(page, locator)


def scroll_state(page) -> dict:
    return page.evaluate(
        """() => ({scrollY: window.scrollY, height: document.documentElement.scrollHeight,
                   boxes: [...document.querySelectorAll(".box")].map(
                     (b) => Math.round(b.getBoundingClientRect().top))})"""
    )


def deal(table, *cards):
    for card in cards:
        assert scan(table, current_shoe(table).reader_seq + 1, card)["duplicate"] is False


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_the_station_fits_each_screen_and_keeps_the_question_in_view(
    server, demo, station_page, layout
):
    table = demo.table
    station = Station.objects.get(table=table, name="s1")
    cash_in(station, "12345.67", key="start")  # five digits of credits: still no sideways scroll
    page = station_page(LAYOUTS[layout])
    credential = demo.station_credentials["s1"]
    page.goto(f"{server}/tables/{table.pk}/stations/s1/#credential={credential}")
    expect(page.locator("#connection")).to_have_text("Connected")
    writer.open_round(table)
    expect(page.locator("#phase")).to_have_text("Place your bets", timeout=10_000)
    expect(page.locator("#round-number")).to_have_text("Round 1")

    # Betting: the table fits, every control is a finger's size, and axe finds nothing grave.
    assert sideways(page) <= 0
    assert small_targets(page) == []
    assert serious_violations(page) == []

    # A refused bet says why, in a player's words, with the amount.
    button(page, "$500").click()
    page.get_by_role("button", name="Box 1 pair").click()
    expect(page.get_by_role("status")).to_have_text(
        "That bet is above the table's maximum. The maximum is $100.00."
    )

    # The rules and paytables, at any time.
    page.get_by_text("Rules and paytables").click()
    rules = page.locator("#rules")
    expect(rules).to_contain_text("6 decks")
    expect(rules).to_contain_text("Blackjack pays 3:2.")
    expect(rules).to_contain_text("Main bet: $1.00 to $500.00")
    expect(rules).to_contain_text("Pair pays")
    expect(rules).to_contain_text("Return to player: 93.89 %")  # pair, 6 decks: its par sheet
    # the maximum win (GLI-19 §5.2.2): 500 split into four hands, each doubled and won
    expect(rules).to_contain_text("Main bet: up to $4,000.00 on one bet at the maximum")
    assert sideways(page) <= 0 and serious_violations(page) == []
    page.locator("#rules").scroll_into_view_if_needed()
    keep(page, f"station-{layout}-rules")
    page.get_by_text("Rules and paytables").click()

    button(page, "$5").click()
    page.get_by_role("button", name="Box 3 main bet").click()
    expect(page.get_by_role("button", name="Box 3 main bet, $5.00 staked")).to_be_visible()
    page.get_by_role("button", name="Box 3 pair").click()  # 9 7: no pair, it loses
    expect(page.get_by_role("button", name="Box 3 pair, $5.00 staked")).to_be_visible()
    writer.close_bets(table.rounds.get().pk)
    deal(table, "9S", "6C", "7H", "QH")  # box 3: 9 7 (16) against a 6 up

    # The question: its buttons and the countdown on screen, beside the hand, no scrolling.
    expect(button(page, "Hit")).to_be_enabled(timeout=10_000)
    hand = page.get_by_role("group", name="Your hand")
    keep(page, f"station-{layout}-question")
    for control in (button(page, "Hit"), button(page, "Stand"), page.get_by_role("timer"), hand):
        expect(control).to_be_visible()
        # On screen once the page has settled: in CI the phone's hand was seen off screen
        # once and in view a moment later (its box at y 146 of 844 in the failure's own
        # report): a re-render moving it for an instant, not a question left off screen.
        # The box and the scroll position say, on a failure, what moved.
        assert comes_on_screen(page, control), (
            control,
            control.bounding_box(),
            scroll_state(page),
        )
    expect(page.locator("#awaiting")).to_have_text("Your turn")
    assert sideways(page) <= 0
    assert small_targets(page) == []
    assert serious_violations(page) == []
    keep(page, f"station-{layout}-question")

    button(page, "Stand").click()
    expect(page.locator("#phase")).to_have_text("Dealer's turn")  # the stand is in
    deal(table, "TD")  # the dealer: 6 Q T, bust
    expect(hand).to_contain_text("Win · returned $10.00", timeout=10_000)
    pair = page.locator(".spot-result").filter(has_text="Lost")
    expect(pair).to_have_count(1)
    assert sideways(page) <= 0 and serious_violations(page) == []

    # Results stay: the next round's bets open, the last round's results are still shown.
    writer.open_round(table)
    expect(page.locator("#round-number")).to_have_text("Round 2", timeout=10_000)
    expect(page.locator("#round-caption")).to_have_text("Last round")
    expect(hand).to_contain_text("Win · returned $10.00")
    expect(pair).to_have_count(1)
    keep(page, f"station-{layout}-result")


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_the_croupier_tablet_has_no_serious_accessibility_violation(
    server, demo, station_page, layout
):
    page = station_page(LAYOUTS[layout])
    page.goto(f"{server}/croupier/login/")
    assert serious_violations(page) == []
    log_in(page, server, "dealer", demo.logins["dealer"])
    page.get_by_role("link", name=demo.table.name).click()
    expect(page.locator("#connection")).to_have_text("Connected")
    expect(page.locator("#prompt")).to_have_text("open bets")  # the tablet has its state
    button(page, "Open table").click()
    expect(page.locator("#prompt")).to_have_text("close bets", timeout=15_000)  # a loaded CI
    assert serious_violations(page) == []
    button(page, "Void round").click()
    dialog = page.get_by_role("dialog", name="Supervisor approval: Void round")
    expect(dialog).to_be_visible()
    assert serious_violations(page) == []
    keep(page, f"croupier-{layout}-void-dialog")


def test_the_front_door_has_no_serious_accessibility_violation(server, demo, station_page):
    for layout, size in LAYOUTS.items():
        page = station_page(size)
        page.goto(f"{server}/")
        expect(page.get_by_role("heading", name="Tables")).to_be_visible()
        assert sideways(page) <= 0
        assert serious_violations(page) == []
        keep(page, f"front-door-{layout}", whole=True)
