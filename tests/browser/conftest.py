"""Browser tests: Playwright drives Debian's Chromium (/usr/bin/chromium, headless; never a
downloaded browser) against the real server, started in this process on 127.0.0.1.

Locally these tests skip when Chromium is not installed; with CI=true they fail instead
(.ci/run installs it with apt). Screenshots go to artifacts/screenshots/.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from channels.layers import channel_layers

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
TABLET = {"width": 1280, "height": 800}  # a 10-inch tablet in landscape
STATION = {"width": 1024, "height": 768}  # a station's touch screen


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


@pytest.fixture(scope="module", autouse=True)
def fresh_channel_layer_afterwards():
    """The server thread has its own event loop; channels_redis lets one layer instance
    receive on one loop only. The server's consumers get a layer of their own (not one an
    async test made on its loop), and so do later tests."""
    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


@pytest.fixture(scope="module")
def browser() -> Iterator:
    if not Path(CHROMIUM).exists():
        message = f"{CHROMIUM} is missing (apt-get install chromium; .ci/run does it)"
        if _in_ci():
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop running in this thread, which Django takes
    # for an async context; the test's own database calls are still plain sync calls.
    # Set for this module only (Playwright's documented way with Django).
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
            yield browser
            browser.close()
    finally:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.fixture
def server(in_process_timers) -> str:
    """The real ASGI server (daphne, in this process, on a free port): its http:// URL.
    Its timers run on its own event loop, as in the embedded single-process server."""
    from rounds.live_replay import in_process_server

    return in_process_server().replace("ws://", "http://", 1)


@pytest.fixture
def played_by_the_test(server, settings) -> Iterator[None]:
    """The test plays every step itself: no timer may time out a step on a slow machine,
    answer for a seat, or fire from a thread of this process after the test's database is
    gone (deadlines are still set, and shown). The cache (dealer outcomes by round) is
    emptied before and after: the database is new for each test."""
    # Local: this conftest loads before Django is set up.
    from django.core.cache import cache

    settings.TABLEHUB_TIMERS = "none"
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def demo(server):
    """The demo table, as the README's run command sets it up (short timers for tests)."""
    from tablehub.demo import ensure_demo_table

    return ensure_demo_table(timers={"betting": 60, "insurance": 20, "decision": 20, "bonus": 20})


@pytest.fixture
def station_page(browser):
    """Open a page at a station's screen size; screenshots of every page are saved."""
    contexts = []

    def open_page(size: dict | None = None):
        context = browser.new_context(viewport=size or STATION)
        contexts.append(context)
        return context.new_page()

    yield open_page
    for context in contexts:
        context.close()
    _until_no_command_is_handled()


def _until_no_command_is_handled(most: float = 10.0) -> None:
    """After the pages closed: until the server has finished the station commands they sent
    last (their registers in rounds/receipts.py are empty), so that the test database is not
    flushed under a batch still writing (on PostgreSQL the flush then fails)."""
    # Local: this conftest loads before Django is set up; the models only once tests run.
    from django.utils import timezone

    from rounds import receipts
    from tablehub.models import Table

    tables = list(Table.objects.values_list("pk", flat=True))
    since = timezone.now()  # commands received until the pages closed
    until = time.monotonic() + most
    while time.monotonic() < until:
        now = timezone.now()
        if not any(receipts.waiting_before(table, since, now) for table in tables):
            return
        time.sleep(0.05)


def screenshot(page, name: str) -> Path:
    """Save a screenshot of the page as a test artifact."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def keep(page, name: str, whole: bool = False) -> None:
    """A screenshot, a test artifact (what is on the screen, or the whole page), copied to
    docs/screenshots/ when TABLEHUB_REFRESH_SCREENSHOTS is set."""
    if whole:
        path = screenshot(page, name)
    else:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path))
    if os.environ.get("TABLEHUB_REFRESH_SCREENSHOTS"):
        DOCS.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, DOCS / f"{name}.png")


# -- helpers of the browser tests (plain functions, imported by the test modules) ------------


def button(page, name):
    return page.get_by_role("button", name=name, exact=True)


def log_in(page, server: str, username: str, password: str) -> None:
    page.goto(f"{server}/croupier/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    button(page, "Log in").click()


def open_tablet(page, server: str, demo):
    """The dealer logged in on ``page`` with the demo table open and connected."""
    from playwright.sync_api import expect

    log_in(page, server, "dealer", demo.logins["dealer"])
    expect(page.get_by_role("heading", name="Tables")).to_be_visible()
    page.get_by_role("link", name=demo.table.name).click()
    expect(page.locator("#connection")).to_have_text("Connected")
    return page


def stack(table, cards) -> None:
    """The virtual shoe's next cards (the rest of its decks after them)."""
    from croupier.services import current_shoe
    from rounds.engine import ALL_CARDS

    shoe = current_shoe(table)
    rest = [str(c) for c in ALL_CARDS for _ in range(shoe.decks)]
    for card in cards:
        rest.remove(card)
    shoe.virtual_order = {"cards": list(cards) + rest, "start": shoe.reader_seq}
    shoe.save(update_fields=["virtual_order"])
