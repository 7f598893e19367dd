"""RowsJSONField (tablehub/fields.py): a bulk insert writes its JSON as rows of values, never
as arrays unnested on PostgreSQL (where a plain JSONField's are: the control), and the JSON
comes back exactly as it went in, quotes, backslashes and all."""

import json

from django.db import connection
from django.test.utils import CaptureQueriesContext

from stations.models import ProtectionEvent, Station, StationCommand
from tablehub.jsontext import JSONText
from tablehub.models import Jurisdiction, Table
from tablehub.rows import insert_values

AWKWARD = {
    "said": 'a "quoted" word, a back\\slash, {braces}, commas, NULL',
    "nested": [{"box": 1, "amount": "10.00"}, None, True, 1.5],
    "unicode": "café, 18 € ",
}


def inserts(captured: CaptureQueriesContext, table: str) -> list[str]:
    return [
        q["sql"]
        for q in captured.captured_queries
        if q["sql"].startswith("INSERT") and table in q["sql"]
    ]


def test_a_bulk_insert_writes_rows_of_values_and_the_json_comes_back_unchanged(db) -> None:
    table = Table.objects.create(name="t1", jurisdiction=Jurisdiction.objects.create(code="wa"))
    stations = [Station.objects.create(table=table, name=f"s{n}") for n in range(3)]
    with CaptureQueriesContext(connection) as captured:
        StationCommand.objects.bulk_create(
            StationCommand(station=s, client_id="c", reply=AWKWARD | {"n": n})
            for n, s in enumerate(stations)
        )
        ProtectionEvent.objects.bulk_create(
            ProtectionEvent(station=s, kind="limit_set", detail=AWKWARD) for s in stations
        )
    (ours,) = inserts(captured, "stations_stationcommand")
    (plain,) = inserts(captured, "stations_protectionevent")
    assert "UNNEST" not in ours and "VALUES" in ours
    if connection.vendor == "postgresql":  # the control: a plain JSONField's are unnested
        assert "UNNEST" in plain
    stored = StationCommand.objects.order_by("station__name").values_list("reply", flat=True)
    assert list(stored) == [AWKWARD | {"n": n} for n in range(3)]


def test_json_encoded_already_is_stored_as_its_value_not_as_a_string(db) -> None:
    """A ``JSONText`` (a batch's stored reply, encoded once for its row and its station) is
    written as the JSON it holds: read back, the value, not a string of it."""
    table = Table.objects.create(name="t1", jurisdiction=Jurisdiction.objects.create(code="wa"))
    first, second = (Station.objects.create(table=table, name=f"s{n}") for n in range(2))
    insert_values(
        StationCommand,
        [{"station_id": first.pk, "client_id": "c", "reply": JSONText(json.dumps(AWKWARD))}],
    )
    StationCommand.objects.create(station=second, client_id="c", reply=JSONText(json.dumps([1])))
    stored = StationCommand.objects.order_by("station__name").values_list("reply", flat=True)
    assert list(stored) == [AWKWARD, [1]]
