"""Human words (issue 19, points 5 and 8): every error code of the station protocol has a
player's message on the station page, and every code of the tablet's socket and of the card
reader a dealer's message on the tablet (the codes as docs/protocol.schema.json lists them,
which tests/test_protocol_contract.py keeps equal to the documents and the server)."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "docs" / "protocol.schema.json").read_text())["$defs"]
READER_CODES = {"unreadable_card", "sequence_gap", "card_not_expected", "impossible_card"}


def worded(path: str, table: str) -> dict[str, str]:
    """The codes and words of the JS module's table ``table``."""
    text = (ROOT / path).read_text()
    body = text.split(f"export const {table} = {{", 1)[1].split("\n};", 1)[0]
    # an entry is `code: "words",` or, translated, `code: gettext("words"),`
    return dict(re.findall(r'^\s+(\w+): (?:gettext\()?"([^"]+)"', body, flags=re.MULTILINE))


def test_every_station_error_code_has_a_players_words():
    words = worded("stations/static/stations/words.js", "PLAYER_ERRORS")
    assert set(SCHEMA["error_code"]["enum"]) <= set(words)
    assert all(not re.search(r"\b[a-z]+_[a-z_]+\b", text) for text in words.values())  # no codes


def test_every_tablet_and_reader_error_code_has_a_dealers_words():
    words = worded("croupier/static/croupier/words.js", "DEALER_ERRORS")
    assert set(SCHEMA["tablet_error_code"]["enum"]) | READER_CODES <= set(words)
