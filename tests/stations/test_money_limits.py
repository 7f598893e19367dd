"""The most money one cash-in and one balance may hold (issue 17, finding 8): 1100 cash-ins
of 1e9 made a cash-out too large for a ledger entry, and the station's ledger answered 500
from then on. A cash-in above TABLEHUB_MAX_CASH_IN is refused with ``amount_too_large``, one
that would take the balance above TABLEHUB_MAX_BALANCE with ``balance_limit``, before
anything is written; what is in is cashed out and read back whole. Runs on the embedded
default and on PostgreSQL (DATABASE_URL)."""

from decimal import Decimal as D

import pytest
from django.urls import reverse

from payouts import ledger
from payouts.models import LedgerEntry
from rounds.engine import RuleSet
from stations.commands import handle
from stations.models import Station
from tablehub.models import Jurisdiction, Table, TableConfig
from tests.helpers import make_staff

pytestmark = pytest.mark.django_db


@pytest.fixture
def s1(settings):
    settings.TABLEHUB_MAX_CASH_IN = D("1000000.00")
    settings.TABLEHUB_MAX_BALANCE = D("2500000.00")
    jurisdiction = Jurisdiction.objects.create(code="wa", name="Washington")
    table = Table.objects.create(name="t1", jurisdiction=jurisdiction)
    TableConfig.objects.create(table=table, version=1, rules=RuleSet().to_dict())
    return Station.objects.create(table=table, name="s1")


def cash_in(station, client_id, amount):
    return handle(station, {"type": "cash_in", "client_id": client_id, "amount": amount})


def test_a_cash_in_above_the_maximum_is_refused_with_a_code(s1):
    for amount in ("1000000.01", "1000000000", "999999999999"):
        reply = cash_in(s1, f"big-{amount}", amount)
        assert reply["ok"] is False
        assert reply["error"]["code"] == "amount_too_large", reply
        assert "1000000.00" in reply["error"]["message"]
    assert not LedgerEntry.objects.exists()
    assert cash_in(s1, "max", "1000000.00")["state"]["credits"] == "1000000.00"


def test_a_balance_never_goes_above_its_maximum_and_is_cashed_out_and_read_whole(s1, client):
    for n in range(2):
        assert cash_in(s1, f"in-{n}", "1000000")["ok"]
    over = cash_in(s1, "in-2", "1000000")
    assert over["ok"] is False and over["error"]["code"] == "balance_limit", over
    assert "2500000.00" in over["error"]["message"]
    assert ledger.balance(s1) == D("2000000.00")
    assert cash_in(s1, "in-3", "500000")["state"]["credits"] == "2500000.00"  # up to it
    assert cash_in(s1, "in-4", "0.01")["error"]["code"] == "balance_limit"
    # A resent cash-in already credited is answered as before, not refused.
    assert cash_in(s1, "in-3", "500000")["resent"] is True
    out = handle(s1, {"type": "cash_out", "client_id": "out"})
    assert out["ok"] and out["state"]["credits"] == "0.00"
    assert LedgerEntry.objects.get(station=s1, kind="cash_out").amount == D("-2500000.00")
    client.force_login(make_staff("floor", "floor_manager"))
    response = client.get(reverse("api-station-ledger", args=[s1.pk]))
    assert response.status_code == 200
    assert response.json()["balance"] == "0.00"
    assert ledger.check() == []
