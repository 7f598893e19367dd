"""A whole round played with the keyboard alone (issue 19, point 7): the dealer logs in,
opens the table, closes bets and deals on the croupier tablet, and a player cashes in, picks
a chip, bets and answers a decision on the station page, each control reached with Tab and
pressed with Enter or Space; no mouse click anywhere. Run at the station's kiosk-size screen
and the tablet's. The round is stacked, so its outcome is known to the cent.
"""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import STATION, TABLET, stack

expect = pytest.importorskip("playwright.sync_api").expect

# The focused element's accessible name, as near as a test needs it: its aria-label, else
# its label's text, else its own text.
FOCUSED_NAME = """() => {
  const e = document.activeElement;
  if (!e || e === document.body) return "";
  const label = e.getAttribute("aria-label") || (e.labels?.[0]?.textContent ?? "") ||
    e.textContent;
  return label.replace(/\\s+/g, " ").trim();
}"""


def tab_to(page, name: str, most: int = 300) -> None:
    """Press Tab until the control named ``name`` (a regular expression, matched whole) has
    the focus: it is reachable with the keyboard. Fails when a whole turn does not reach it."""
    seen = []
    for _ in range(most):
        page.keyboard.press("Tab")
        focused = page.evaluate(FOCUSED_NAME)
        if re.fullmatch(name, focused):
            return
        seen.append(focused)
    raise AssertionError(f"Tab never reached {name!r}; it went through {seen[:60]}")


def press(page, name: str, key: str = "Enter") -> None:
    tab_to(page, name)
    page.keyboard.press(key)


def test_a_round_played_with_the_keyboard_alone(server, demo, station_page):
    table = demo.table
    # The dealer: log in, open the table, all from the keyboard.
    tablet = station_page(TABLET)
    tablet.goto(f"{server}/croupier/login/")
    tab_to(tablet, "Username")
    tablet.keyboard.type("dealer")
    tab_to(tablet, "Password")
    tablet.keyboard.type(demo.logins["dealer"])
    tablet.keyboard.press("Enter")
    expect(tablet.get_by_role("heading", name="Tables")).to_be_visible()
    press(tablet, re.escape(table.name))
    expect(tablet.locator("#connection")).to_have_text("Connected")
    press(tablet, "Open table")
    prompt = tablet.locator("#prompt")
    expect(prompt).to_have_text("close bets")

    # The player: cash in, choose the $5 chip (Space), bet on box 1's main bet (Enter).
    player = station_page(STATION)
    credential = demo.station_credentials["s1"]
    player.goto(f"{server}/tables/{table.pk}/stations/s1/#credential={credential}")
    expect(player.locator("#connection")).to_have_text("Connected")
    tab_to(player, "Cash-in amount")
    player.keyboard.type("100")
    player.keyboard.press("Enter")
    expect(player.locator("#credits")).to_have_text("$100.00")
    expect(player.locator("#phase")).to_have_text("Place your bets", timeout=10_000)
    press(player, r"\$5✓?", key="Space")
    expect(player.get_by_role("button", name="$5", exact=True)).to_have_attribute(
        "aria-pressed", "true"
    )
    press(player, "Box 1 main bet")
    expect(player.get_by_role("button", name="Box 1 main bet, $5.00 staked")).to_be_visible()
    expect(player.locator("#bet")).to_have_text("$5.00")

    # box 1: 9S 7H (16); the dealer's 6C up, QH in the hole, then TD: 26, bust.
    stack(table, ["9S", "6C", "7H", "QH", "TD"])
    expect(tablet.locator("#stations-info")).to_have_text("1 playing · 0 done", timeout=10_000)
    press(tablet, "Close bets")
    for next_prompt in [
        "deal the dealer's up card", "deal box 1", "deal the hole card", "wait for the stations",
    ]:
        expect(tablet.get_by_role("button", name="Deal card", exact=True)).to_be_enabled()
        press(tablet, "Deal card")
        expect(prompt).to_have_text(next_prompt)

    # The player stands on 16 with Space.
    expect(player.locator("#prompt-text")).to_have_text("Box 1: your decision")
    press(player, "Stand", key="Space")
    expect(prompt).to_have_text("reveal hole card, dealer draws")
    press(tablet, "Deal card")  # the hole card QH, then TD: 26, bust

    expect(player.locator("#dealer-total")).to_have_text("26, bust")
    expect(player.get_by_role("group", name="Your hand")).to_contain_text("Win · returned $10.00")
    expect(player.locator("#credits")).to_have_text("$105.00")  # 100 - 5 + 10, to the cent
    expect(prompt).to_have_text("close bets")  # the table is open: the next round's bets
