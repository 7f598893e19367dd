"""Two languages (issue 19, point 6), in Chromium: a browser set to Spanish gets the station
page in Spanish (its notices, a refused bet's words, the rules panel, and amounts written as
Spanish writes them, in the table's currency), and a station the floor manager set to Spanish
speaks Spanish to an English browser. Screenshots as the other browser tests keep them.
"""

from __future__ import annotations

import pytest

from croupier import tablet
from stations.models import Station
from stations.services import cash_in
from tests.browser.conftest import STATION, TABLET, button, keep
from tests.browser.test_station_layouts import LAYOUTS, sideways, small_targets

expect = pytest.importorskip("playwright.sync_api").expect


pytestmark = pytest.mark.usefixtures("played_by_the_test")  # tests/browser/conftest.py


@pytest.fixture
def page_in(browser):
    """A page of a browser whose language is ``locale`` (its Accept-Language too)."""
    contexts = []

    def open_page(locale: str, size: dict | None = None):
        context = browser.new_context(viewport=size or STATION, locale=locale)
        contexts.append(context)
        return context.new_page()

    yield open_page
    for context in contexts:
        context.close()


def test_the_station_speaks_spanish_to_a_spanish_browser(server, demo, page_in):
    table = demo.table
    station = Station.objects.get(table=table, name="s1")
    cash_in(station, "12345.5", key="start")
    page = page_in("es-ES")
    credential = demo.station_credentials["s1"]
    page.goto(f"{server}/tables/{table.pk}/stations/s1/#credential={credential}")
    expect(page.locator("html")).to_have_attribute("lang", "es")
    expect(page.locator("#connection")).to_have_text("Conectado")
    # An amount as Spanish writes it, in the table's currency (USD): 12.345,50 US$
    expect(page.locator("#credits")).to_have_text("12.345,50\xa0US$")

    # A notice.
    tablet.open_table(table)
    expect(page.locator("#alert")).to_have_text(
        "La mesa está abierta: las rondas vuelven a sucederse."
    )
    expect(page.locator("#phase")).to_have_text("Hagan sus apuestas", timeout=10_000)

    # A refused bet's words, with the amount.
    button(page, "500\xa0US$").click()
    page.get_by_role("button", name="Casilla 1 pareja").click()
    expect(page.get_by_role("status")).to_have_text(
        "Esa apuesta supera el máximo de la mesa. El máximo es 100,00\xa0US$."
    )

    # The rules panel.
    page.get_by_text("Reglas y tablas de pagos").click()
    rules = page.locator("#rules")
    expect(rules).to_contain_text("6 barajas, mezcladas para cada zapato.")
    expect(rules).to_contain_text("El blackjack paga 3:2.")
    expect(rules).to_contain_text("Apuesta principal: de 1,00\xa0US$ a 500,00\xa0US$")
    expect(rules).to_contain_text(
        "Apuesta principal: hasta 4000,00\xa0US$ con una apuesta al máximo"
    )
    expect(rules).to_contain_text("Retorno al jugador: 93,89 %")
    expect(rules).to_contain_text("Pagos de Pareja")
    combinations = rules.locator("table.paytable th")
    expect(combinations.filter(has_text="Pareja del mismo palo")).to_have_count(1)
    rules.scroll_into_view_if_needed()
    keep(page, "station-es-rules")


def test_the_station_setting_wins_over_the_browser(server, demo, page_in):
    table = demo.table
    Station.objects.filter(table=table, name="s2").update(language="es")
    page = page_in("en-US")
    credential = demo.station_credentials["s2"]
    page.goto(f"{server}/tables/{table.pk}/stations/s2/#credential={credential}")
    expect(page.locator("html")).to_have_attribute("lang", "es")
    expect(page.locator("#connection")).to_have_text("Conectado")
    expect(page.locator("#credits")).to_have_text("0,00\xa0US$")
    expect(button(page, "Cargar")).to_be_visible()


def test_the_tablet_speaks_spanish_to_a_spanish_browser(server, demo, page_in):
    page = page_in("es-ES", TABLET)
    page.goto(f"{server}/croupier/login/")
    expect(page.locator("html")).to_have_attribute("lang", "es")
    page.get_by_label("Usuario").fill("dealer")
    page.get_by_label("Contraseña").fill(demo.logins["dealer"])
    button(page, "Iniciar sesión").click()
    expect(page.get_by_role("heading", name="Mesas")).to_be_visible()
    expect(page.locator("ul.tables li").first).to_contain_text(
        "crupier en vivo (reparte el crupier) · 3 casillas · cerrada"
    )
    page.get_by_role("link", name=demo.table.name).click()
    expect(page.locator("#connection")).to_have_text("Conectado")
    expect(page.locator("#table-status")).to_have_text("Cerrada · crupier · USD")

    # A notice: the table opens.
    button(page, "Abrir la mesa").click()
    expect(page.locator("#command-status")).to_have_text("Mesa abierta")
    expect(page.locator("#round-info")).to_have_text("Ronda 1 · apuestas")
    expect(page.locator("#prompt")).to_have_text("cerrar apuestas")  # the dealer's next action
    # An error's words: nobody has bet, so bets cannot close.
    button(page, "Cerrar apuestas").click()
    expect(page.locator("#command-error")).to_have_text(
        "Ningún puesto ha apostado aún: las apuestas siguen abiertas. [no_bets]"
    )
    # The supervisor dialog, in Spanish too.
    button(page, "Anular ronda").click()
    dialog = page.get_by_role("dialog", name="Aprobación del supervisor: Anular ronda")
    expect(dialog).to_contain_text(
        "Anular la ronda 1: todas las apuestas vuelven a los puestos."
    )
    keep(page, "croupier-es-void-dialog")
    button(dialog, "Cancelar").click()


def test_spanish_words_fit_a_phone(server, demo, page_in):
    """Spanish words are longer than English ones: the phone still does not scroll sideways,
    and every control stays a finger's size."""
    table = demo.table
    cash_in(Station.objects.get(table=table, name="s1"), "12345.67", key="start")
    page = page_in("es-ES", LAYOUTS["phone"])
    credential = demo.station_credentials["s1"]
    page.goto(f"{server}/tables/{table.pk}/stations/s1/#credential={credential}")
    expect(page.locator("#credits")).to_have_text("12.345,67\xa0US$")
    tablet.open_table(table)
    expect(page.locator("#phase")).to_have_text("Hagan sus apuestas", timeout=10_000)
    assert sideways(page) <= 0
    assert small_targets(page) == []
    keep(page, "station-es-phone")
