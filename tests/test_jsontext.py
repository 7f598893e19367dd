"""tablehub/jsontext.py: the text of a reply or an event frame is the JSON value
``json.dumps`` writes, integer keys as strings, non-ASCII text as it is; a value JSON has
no type for is refused as ``json.dumps`` refuses it."""

import json
from decimal import Decimal

import pytest

from tablehub.jsontext import JSONText, encode

VALUES = [
    {"type": "reply", "ok": True, "client_id": "c1", "state": {"credits": "12.50"}},
    {"boxes": {1: ["TH", "7D"], 2: []}, "n": -3, "none": None, "deep": [[{"a": [1.5]}]]},
    {"station": "café ♣ 18 €", "said": 'a "quoted" word, a back\\slash\n\t'},
    [],
    "text",
]


@pytest.mark.parametrize("value", VALUES)
def test_the_text_holds_the_value_json_dumps_writes(value):
    text = encode(value)
    assert isinstance(text, JSONText)
    assert json.loads(text) == json.loads(json.dumps(value))


def test_the_text_is_compact_and_keeps_non_ascii_text_as_it_is():
    assert encode({"a": [1, "é"]}) == '{"a":[1,"é"]}'


@pytest.mark.parametrize("value", [{"stake": Decimal("10.00")}, {"when": object()}])
def test_a_value_json_has_no_type_for_is_refused(value):
    with pytest.raises(TypeError):
        json.dumps(value)
    with pytest.raises(TypeError):
        encode(value)
