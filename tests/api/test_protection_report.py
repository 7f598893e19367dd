"""The floor manager's player-protection report per table and shift
(GET /api/tables/{id}/protection/, stations/protection.py): reality checks and their answers,
limits set and reached, breaks, read from the protection log."""

from datetime import timedelta
from decimal import Decimal
from urllib.parse import urlencode

import pytest
from django.utils import timezone

from rounds import writer
from rounds.engine import EngineError
from stations import protection
from stations.commands import handle, place_bets
from stations.models import PlayerSession

pytestmark = pytest.mark.django_db


def test_the_shifts_protection_events_by_kind(api, users, table):
    s1, s2 = table.stations.get(name="s1"), table.stations.get(name="s2")
    protection.set_limits(s1, {"stake_limit": Decimal("5")})
    writer.open_round(table)
    with pytest.raises(EngineError):
        place_bets(s1, [(1, "main", Decimal("10"))])  # above the player's 5.00
    assert handle(s2, {"type": "take_break", "client_id": "b1", "minutes": 30})["ok"]
    table.jurisdiction.reality_check_minutes = 30
    table.jurisdiction.save()
    PlayerSession.objects.filter(station=s1).update(
        opened_at=timezone.now() - timedelta(minutes=31)
    )
    assert handle(s1, {"type": "state", "client_id": "q"})["state"]["session"]["reality_check"][
        "open"
    ]
    assert handle(s1, {"type": "reality_check", "client_id": "r", "answer": "history"})["ok"]

    now = timezone.now()
    query = urlencode(
        {
            "start": (now - timedelta(hours=8)).isoformat(),
            "end": (now + timedelta(minutes=1)).isoformat(),
        }
    )
    url = f"/api/tables/{table.pk}/protection/?{query}"
    response = api(users["floor_manager"], "get", url)
    assert response.status_code == 200, response.content
    report = response.json()
    assert report["sessions"] == {"started": 2, "ended": 1}
    assert report["limits"] == {"set": 1, "reached": {"stake_limit_reached": 1}}
    assert report["breaks"] == {"started": 1, "ended": 0}
    assert report["reality_checks"] == {"shown": 1, "answers": {"history": 1}}
    assert report["automatic_hands"] == 0
    assert [e["kind"] for e in report["events"]][:2] == [
        "reality_check_answered",
        "reality_check_shown",
    ]
    assert api(users["auditor"], "get", url).status_code == 200
    assert api(users["dealer"], "get", url).status_code == 403
    earlier = urlencode(
        {
            "start": (now - timedelta(days=2)).isoformat(),
            "end": (now - timedelta(days=1)).isoformat(),
        }
    )
    quiet = api(users["floor_manager"], "get", f"/api/tables/{table.pk}/protection/?{earlier}")
    assert quiet.json()["sessions"] == {"started": 0, "ended": 0} and quiet.json()["events"] == []
    bad = api(users["floor_manager"], "get", f"/api/tables/{table.pk}/protection/?start=x")
    assert bad.status_code == 400
