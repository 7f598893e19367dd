"""Two languages (issue 19, point 6): every word of the station page and the croupier tablet,
templates and scripts, has its Spanish translation (no empty or fuzzy msgstr, the same
%(name)s fields), the committed .mo files say what the .po files say (a user's machine has
no msgfmt), and the page's language is the station's setting, else the browser's."""

from __future__ import annotations

import ast
import re
from gettext import GNUTranslations
from pathlib import Path

import pytest

from stations.models import Station
from tablehub.models import Jurisdiction, Table

ROOT = Path(__file__).resolve().parents[1]
CATALOGS = sorted(ROOT.glob("*/locale/es/LC_MESSAGES/*.po"))
FIELD = re.compile(r"%\(\w+\)s")


def entries(path: Path) -> list[dict]:
    """The .po file's entries: msgid, msgid_plural, msgstr (each form, joined from its lines)
    and flags."""
    found = []
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        entry: dict = {"flags": "", "msgid": None, "msgid_plural": None, "msgstr": {}}
        key = None
        for line in block.splitlines():
            if line.startswith("#,"):
                entry["flags"] += line
            elif line.startswith("#"):
                continue
            elif match := re.match(r"^(msgid|msgid_plural|msgstr(?:\[\d\])?) (\".*\")$", line):
                key = match.group(1)
                text = ast.literal_eval(match.group(2))
                if key.startswith("msgstr"):
                    entry["msgstr"][key] = text
                else:
                    entry[key] = text
            elif line.startswith('"') and key:
                text = ast.literal_eval(line)
                if key.startswith("msgstr"):
                    entry["msgstr"][key] += text
                else:
                    entry[key] += text
        if entry["msgid"]:  # the header's msgid is ""
            found.append(entry)
    return found


def test_the_catalogs_of_both_pages_are_there():
    apps = {path.parts[-5] for path in CATALOGS}
    assert {"stations", "croupier", "tablehub"} <= apps
    kinds = {(path.parts[-5], path.stem) for path in CATALOGS}
    assert {("stations", "django"), ("stations", "djangojs")} <= kinds
    assert {("croupier", "django"), ("croupier", "djangojs")} <= kinds


@pytest.mark.parametrize("path", CATALOGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_msgid_has_its_spanish_words(path):
    found = entries(path)
    assert found, f"{path} is empty"
    untranslated = [
        e["msgid"] for e in found if not e["msgstr"] or not all(
            text.strip() for text in e["msgstr"].values()
        )
    ]
    assert untranslated == []
    fuzzy = [e["msgid"] for e in found if "fuzzy" in e["flags"]]
    assert fuzzy == []
    fields = [
        e["msgid"]
        for e in found
        for text in e["msgstr"].values()
        if set(FIELD.findall(e["msgid"])) != set(FIELD.findall(text))
    ]
    assert fields == []  # every %(name)s of the English words is in the Spanish ones
    # The compiled catalog, as Django reads it, says the same.
    with path.with_suffix(".mo").open("rb") as mo:
        compiled = GNUTranslations(mo)
    stale = [
        e["msgid"]
        for e in found
        if (
            [compiled.ngettext(e["msgid"], e["msgid_plural"], n) for n in (1, 2)]
            if e["msgid_plural"]
            else [compiled.gettext(e["msgid"])]
        )
        != list(e["msgstr"].values())
    ]
    assert stale == []  # run compilemessages after editing the .po


@pytest.fixture
def station(db):
    jurisdiction = Jurisdiction.objects.create(code="xx", name="Test")
    table = Table.objects.create(name="Mesa 1", jurisdiction=jurisdiction, currency="EUR")
    station = Station(table=table, name="s1")
    station.set_credential("secret")
    station.save()
    return station


def page(client, station, accept: str | None) -> str:
    headers = {"HTTP_ACCEPT_LANGUAGE": accept} if accept else {}
    response = client.get(f"/tables/{station.table_id}/stations/{station.name}/", **headers)
    assert response.status_code == 200
    return response.content.decode()


def test_the_browser_chooses_unless_the_station_has_a_language(client, station):
    english = page(client, station, "en-US,en;q=0.9")
    assert '<html lang="en">' in english and ">Place your bets<" not in english
    assert "Playable credits" in english and 'src="/jsi18n/en/"' in english

    spanish = page(client, station, "es-ES,es;q=0.9")
    assert '<html lang="es">' in spanish and 'src="/jsi18n/es/"' in spanish
    assert "Créditos jugables" in spanish and "Playable credits" not in spanish
    assert "Puesto s1" in spanish and "Reglas y tablas de pagos" in spanish

    # The floor manager's setting wins over the browser, both ways.
    station.language = "es"
    station.save()
    assert "Créditos jugables" in page(client, station, "en-US,en;q=0.9")
    station.language = "en"
    station.save()
    assert "Playable credits" in page(client, station, "es-ES,es;q=0.9")


def test_the_scripts_catalog_is_in_the_language_the_page_names(client):
    spanish = client.get("/jsi18n/es/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert '"Place your bets": "Hagan sus apuestas"' in spanish
    english = client.get("/jsi18n/en/", HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert "Hagan sus apuestas" not in english
    assert client.get("/jsi18n/xx/").status_code == 404
