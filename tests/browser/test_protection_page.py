"""Player protection on the reference station page, in Chromium against the real server, at
a phone's size (390x844) and a kiosk's (1920x1080): the session bar (elapsed time and net
position, always in view), the limits a player sets (a higher one refused this session) and
a limit that stops betting, with the server's own refusal shown."""

from __future__ import annotations

import re
import time
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from payouts.models import LedgerEntry
from rounds import writer
from rounds.engine import CardDrawn, parse_card
from stations.commands import place_bets
from stations.models import PlayerSession, Station
from stations.services import cash_in
from tablehub.models import Jurisdiction
from tests.browser.conftest import button, screenshot
from tests.helpers import play

expect = pytest.importorskip("playwright.sync_api").expect

SIZES = {"phone": {"width": 390, "height": 844}, "kiosk": {"width": 1920, "height": 1080}}


pytestmark = pytest.mark.usefixtures("played_by_the_test")  # tests/browser/conftest.py


def in_view(page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    size = page.viewport_size
    return (
        box is not None
        and box["y"] >= 0
        and box["y"] + box["height"] <= size["height"]
        and box["x"] >= 0
        and box["x"] + box["width"] <= size["width"] + 1
    )


@pytest.mark.parametrize("size", list(SIZES))
def test_the_session_bar_and_the_limits_at_a_phone_and_a_kiosk(server, demo, station_page, size):
    table = demo.table
    page = station_page(SIZES[size])
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    credential = demo.station_credentials["s1"]
    page.goto(f"{server}/tables/{table.pk}/stations/s1/#credential={credential}")
    expect(page.locator("#connection")).to_have_text("Connected")
    expect(page.locator("#session-time")).to_have_text("No session")
    expect(page.locator("#limits-now")).to_have_text("Cash in to set limits for the session.")

    page.get_by_label("Cash-in amount").fill("100")
    button(page, "Cash in").click()
    expect(page.locator("#session-cash-in")).to_have_text("$100.00")
    expect(page.locator("#session-net")).to_have_text("$0.00")
    expect(page.locator("#session-time")).to_have_text(re.compile(r"^0:00:0\d$"))
    expect(page.locator("#session-time")).not_to_have_text("0:00:00", timeout=3000)  # it runs

    page.get_by_label("Loss limit").fill("50")
    page.get_by_label("Time limit (minutes)").fill("60")
    button(page, "Set limits").click()
    expect(page.locator("#limits-now")).to_have_text("Your limits: loss $50.00, 60 min.")
    page.get_by_label("Loss limit").fill("80")
    button(page, "Set limits").click()
    expect(page.locator("#status")).to_contain_text("A limit can only be lowered now")
    expect(page.locator("#limits-now")).to_have_text("Your limits: loss $50.00, 60 min.")

    # a round lost: 18 against the dealer's 19; the net position follows at once
    station = Station.objects.get(table=table, name="s1")
    play(table, [(station, 1, "main", "5")], "TS 9H 8D TC", [("s1", "stand")])
    expect(page.locator("#session-net")).to_have_text("−$5.00")
    expect(page.locator("#session-net")).to_have_attribute("data-sign", "down")
    expect(page.locator("#credits")).to_have_text("$95.00")

    # the bar is in view wherever the page is scrolled
    page.mouse.wheel(0, 5000)
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    assert in_view(page, "#session-bar"), size
    screenshot(page, f"protection-session-{size}")

    # an hour on: the time limit stops betting; the page says so and shows the refusal
    PlayerSession.objects.filter(station=station).update(
        opened_at=timezone.now() - timedelta(minutes=61)
    )
    writer.open_round(table)
    expect(page.locator("#phase")).to_have_text("Place your bets", timeout=10_000)
    expect(page.get_by_role("alert").filter(has_text="time limit")).to_have_text(
        "Betting stopped: the session's time limit is reached. Cash out to end it."
    )
    expect(page.locator("#session-time")).to_have_text(re.compile(r"^1:0[01]:\d\d$"))
    page.evaluate("window.scrollTo(0, 0)")
    button(page, "$5").click()
    page.get_by_role("button", name="Box 1 main bet").click()
    expect(page.locator("#status")).to_contain_text("time limit is reached")
    assert in_view(page, "#session-bar"), size
    screenshot(page, f"protection-stopped-{size}")
    assert errors == []


@pytest.mark.parametrize("size", list(SIZES))
def test_a_reality_check_covers_the_page_until_answered(server, demo, station_page, size):
    table = demo.table
    Jurisdiction.objects.filter(pk=table.jurisdiction_id).update(reality_check_minutes=60)
    page = station_page(SIZES[size])
    credential = demo.station_credentials["s1"]
    page.goto(f"{server}/tables/{table.pk}/stations/s1/#credential={credential}")
    expect(page.locator("#connection")).to_have_text("Connected")
    page.get_by_label("Cash-in amount").fill("100")
    button(page, "Cash in").click()
    expect(page.locator("#session-cash-in")).to_have_text("$100.00")
    expect(page.get_by_role("dialog")).to_be_hidden()

    # the check falls due in two seconds (the next state says so): the page asks for the
    # state then, unprompted
    station = Station.objects.get(table=table, name="s1")
    PlayerSession.objects.filter(station=station).update(
        opened_at=timezone.now() - timedelta(minutes=60) + timedelta(seconds=2)
    )
    page.get_by_label("Loss limit").fill("90")
    button(page, "Set limits").click()
    dialog = page.get_by_role("dialog", name="Reality check")
    expect(dialog).to_be_visible(timeout=10_000)
    expect(dialog).to_contain_text("You have played for 1:00:0")
    expect(page.locator("#reality-check-net")).to_have_text("$0.00")
    expect(page.locator("#reality-check-staked")).to_have_text("$0.00")
    expect(button(page, "Continue playing")).to_be_focused()
    screenshot(page, f"protection-reality-check-{size}")

    writer.open_round(table)
    expect(page.locator("#phase")).to_have_text("Place your bets", timeout=10_000)
    expect(dialog).to_be_visible()  # a new round does not dismiss it
    button(page, "See history").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("#history-heading")).to_be_in_viewport()
    button(page, "$5").click()
    page.get_by_role("button", name="Box 1 main bet").click()
    expect(page.locator("#status")).to_have_text("$5.00 on box 1, main bet.")


@pytest.mark.parametrize("size", list(SIZES))
def test_inactivity_locks_betting_and_a_break_cashes_out(server, demo, station_page, size):
    table = demo.table
    Jurisdiction.objects.filter(pk=table.jurisdiction_id).update(idle_minutes=5)
    page = station_page(SIZES[size])
    credential = demo.station_credentials["s1"]
    page.goto(f"{server}/tables/{table.pk}/stations/s1/#credential={credential}")
    expect(page.locator("#connection")).to_have_text("Connected")
    page.get_by_label("Cash-in amount").fill("100")
    button(page, "Cash in").click()
    expect(page.locator("#session-cash-in")).to_have_text("$100.00")

    # idle for five minutes and a second from now: the page asks on its own, then locks
    station = Station.objects.get(table=table, name="s1")
    then = timezone.now() - timedelta(minutes=5) + timedelta(seconds=1)
    PlayerSession.objects.filter(station=station).update(opened_at=then)
    LedgerEntry.objects.filter(station=station).update(created_at=then)
    page.get_by_label("Loss limit").fill("90")  # any command: a state with the new times
    button(page, "Set limits").click()
    dialog = page.get_by_role("dialog", name="Are you still there?")
    expect(dialog).to_be_visible(timeout=10_000)
    expect(dialog).to_contain_text("Betting locks in a minute")
    then = timezone.now() - timedelta(minutes=6, seconds=5)
    PlayerSession.objects.filter(station=station).update(opened_at=then)
    LedgerEntry.objects.filter(station=station).update(created_at=then)
    writer.open_round(table)  # the new round's state shows the lock
    expect(dialog).to_contain_text("Betting is locked", timeout=10_000)
    expect(page.locator("#credits")).to_have_text("$100.00")
    screenshot(page, f"protection-inactivity-{size}")
    button(page, "I'm here").click()
    expect(dialog).to_be_hidden()

    # a break: the station cashes out and says until when
    page.get_by_label("Break for").select_option("60")
    button(page, "Take a break").click()
    expect(page.locator("#credits")).to_have_text("$0.00")
    expect(page.locator("#session-stopped")).to_contain_text("On a break until")
    expect(button(page, "Take a break")).to_be_disabled()
    page.get_by_label("Cash-in amount").fill("10")
    button(page, "Cash in").click()
    expect(page.locator("#status")).to_contain_text("This station is on a break")
    assert in_view(page, "#session-bar"), size
    screenshot(page, f"protection-break-{size}")


@pytest.mark.parametrize("size", list(SIZES))
def test_an_automatic_play_is_shown_on_the_station(server, demo, station_page, size):
    table = demo.table
    Jurisdiction.objects.filter(pk=table.jurisdiction_id).update(abandoned_hands="basic_strategy")
    page = station_page(SIZES[size])
    credential = demo.station_credentials["s1"]
    page.goto(f"{server}/tables/{table.pk}/stations/s1/#credential={credential}")
    expect(page.locator("#connection")).to_have_text("Connected")
    station = Station.objects.get(table=table, name="s1")
    cash_in(station, "100", key="start")
    round = writer.open_round(table)
    place_bets(station, [(1, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    for card in "5H 3C 6D TS".split():  # box 1: 11 against the dealer's 3
        writer.record(round.pk, CardDrawn(parse_card(card)))
    round.refresh_from_db()
    step = round.step_key
    for _ in range(50):  # nobody answers: the chart doubles
        # (the expiry waits while a message of the page received before the deadline is
        # still on its way, rounds/receipts.py: then it is tried again)
        writer.expire(round.pk, step)
        round.refresh_from_db()
        if round.step_key != step:
            break
        time.sleep(0.1)
    expect(page.locator("#automatic-play")).to_have_text(
        "Played for you (automatic): Double on box 1."
    )
    assert in_view(page, "#automatic-play"), size
    screenshot(page, f"protection-automatic-{size}")


@pytest.mark.parametrize("size", list(SIZES))
def test_recall_shows_the_last_games_under_the_recall_banner(server, demo, station_page, size):
    table = demo.table
    station = Station.objects.get(table=table, name="s1")
    cash_in(station, "100", key="start")
    play(table, [(station, 1, "main", "5")], "TS 9H 8D TC", [("s1", "stand")])  # lost
    play(table, [(station, 1, "main", "10")], "TS 7H 9D TC", [("s1", "stand")])  # won
    page = station_page(SIZES[size])
    credential = demo.station_credentials["s1"]
    page.goto(f"{server}/tables/{table.pk}/stations/s1/#credential={credential}")
    expect(page.locator("#connection")).to_have_text("Connected")
    button(page, "Recall last games").click()
    dialog = page.get_by_role("dialog", name="Your last games")
    expect(dialog).to_be_visible()
    expect(page.locator("#recall-banner")).to_have_text(
        "Recall mode: a record of your last games. No bet can be placed from here."
    )
    games = page.locator(".recall-game")
    expect(games).to_have_count(2)
    expect(games.nth(0)).to_contain_text("Credits $95.00 → $105.00")
    expect(games.nth(0)).to_contain_text("Decisions: stand by you")
    expect(games.nth(1)).to_contain_text("Credits $100.00 → $95.00")
    expect(button(page, "Close recall")).to_be_focused()
    assert in_view(page, "#recall-banner"), size
    screenshot(page, f"protection-recall-{size}")
    button(page, "Close recall").click()
    expect(dialog).to_be_hidden()
