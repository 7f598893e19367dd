"""Round numbers count per table (issue 19, point 10): Round 1, 2, ... at each table, in the
API, game recall, the station's state and the tablet's, beside the id that counts across
tables."""

import pytest

from croupier.tablet_state import croupier_state
from stations.commands import station_state
from tests.helpers import play

pytestmark = pytest.mark.django_db


def test_each_table_counts_its_rounds_from_one(api, users, table, other_table):
    s1 = table.stations.get(name="s1")
    first = play(table, [(s1, 1, "main", "10")], "TS 9C 9D 8H", [("s1", "stand")])
    elsewhere = play(other_table, [], "")
    second = play(table, [(s1, 1, "main", "10")], "TS 9C 9D 8H", [("s1", "stand")])
    assert (first.number, elsewhere.number, second.number) == (1, 1, 2)
    assert second.pk - first.pk == 2  # the id counts across tables, the number does not

    auditor = users["auditor"]
    rows = api(auditor, "get", f"/api/tables/{table.pk}/rounds/").json()["results"]
    assert [(r["id"], r["number"]) for r in rows] == [(second.pk, 2), (first.pk, 1)]
    rows = api(auditor, "get", f"/api/stations/{s1.pk}/rounds/").json()["results"]
    assert [r["number"] for r in rows] == [2, 1]
    recalled = api(auditor, "get", f"/api/rounds/{second.pk}/").json()["round"]
    assert (recalled["id"], recalled["number"]) == (second.pk, 2)
    status = api(users["floor_manager"], "get", f"/api/tables/{table.pk}/status/").json()
    assert (status["round"]["id"], status["round"]["number"]) == (second.pk, 2)

    state = station_state(s1)
    assert (state["round"]["id"], state["round"]["number"]) == (second.pk, 2)
    assert [(h["round"], h["number"]) for h in state["player_history"]] == [
        (second.pk, 2),
        (first.pk, 1),
    ]
    assert [(h["round"], h["number"]) for h in state["dealer_history"]] == [
        (second.pk, 2),
        (first.pk, 1),
    ]
    assert croupier_state(table)["round"]["number"] == 2
