"""tablehub/rows.py: ``insert_rows`` writes exactly the rows Django's ``bulk_create`` writes
(every column, read back: decimals to the cent, JSON, an ``auto_now_add`` time, foreign
keys), gives each object its key, and an upsert updates the row that is there."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import DataError, connection, transaction
from django.utils import timezone

from payouts.models import StationCredits
from rounds import writer
from rounds.engine import RuleSet
from rounds.models import Bet, RoundEvent
from stations.models import BetSlip, Station, StationCommand
from tablehub.models import Jurisdiction, TableConfig
from tablehub.rows import insert_rows, insert_values
from tablehub.setup import create_stations, create_table

pytestmark = pytest.mark.django_db

REPLY = {"type": "reply", "client_id": "c1", "ok": True, "state": {"credits": "12.50", "n": [1]}}


@pytest.fixture
def round_and_stations():
    Jurisdiction.objects.create(code="nv", name="Nevada")
    table = create_table(
        "rows", "nv", {"rules": RuleSet().to_dict(), "limits": {"main": ["1", "100"]}}
    )
    create_stations(table, ["s1", "s2"])
    assert TableConfig.objects.filter(table=table).exists()
    return writer.open_round(table), list(table.stations.order_by("name"))


def _columns(queryset) -> list[dict]:
    """The rows as stored, without their keys (the two ways give different ones)."""
    return [{k: v for k, v in row.items() if k != "id"} for row in queryset.order_by("pk").values()]


def test_the_rows_are_those_bulk_create_writes(round_and_stations):
    round, (s1, s2) = round_and_stations
    bets = [
        Bet(round=round, station=s1, box=1, code="main", stake=Decimal("10.05")),
        Bet(round=round, station=s2, box=2, code="21+3", stake=Decimal("0.10"), returned=None),
    ]
    django = Bet.objects.bulk_create([Bet(**_fields(b)) for b in bets])
    before = _columns(Bet.objects.filter(pk__in=[b.pk for b in django]))
    Bet.objects.filter(pk__in=[b.pk for b in django]).delete()

    ours = insert_rows(Bet, bets)

    assert [b.pk for b in ours] == sorted(b.pk for b in ours) and all(b.pk for b in ours)
    assert all(not b._state.adding for b in ours)
    assert _columns(Bet.objects.filter(pk__in=[b.pk for b in ours])) == before
    assert Bet.objects.get(pk=ours[0].pk).stake == Decimal("10.05")


def test_json_and_the_time_of_insert(round_and_stations):
    _round, (s1, s2) = round_and_stations
    start = timezone.now()
    ours = insert_rows(
        StationCommand,
        [
            StationCommand(station=s1, client_id="c1", reply=REPLY),
            StationCommand(station=s2, client_id="c2", reply={}),
        ],
    )
    stored = {c.client_id: c for c in StationCommand.objects.filter(pk__in=[c.pk for c in ours])}
    assert stored["c1"].reply == REPLY and stored["c2"].reply == {}
    assert stored["c1"].station_id == s1.pk
    assert start <= stored["c1"].created_at <= timezone.now()  # auto_now_add, as on save
    assert ours[0].created_at == stored["c1"].created_at


def test_events_keep_their_payload_and_key(round_and_stations):
    round, _stations = round_and_stations
    seq = round.last_seq
    at = timezone.now()
    (event,) = insert_rows(
        RoundEvent,
        [RoundEvent(round=round, seq=seq + 1, kind="bets", payload={"a": [1, "x"]}, created_at=at)],
    )
    stored = RoundEvent.objects.get(pk=event.pk)
    assert (stored.seq, stored.kind, stored.payload, stored.created_at) == (
        seq + 1,
        "bets",
        {"a": [1, "x"]},
        at,
    )


def test_an_upsert_updates_the_row_that_is_there(round_and_stations):
    round, (s1, s2) = round_and_stations
    insert_rows(
        BetSlip,
        [BetSlip(round=round, station=s1, groups=[[{"box": 1}]])],
        update_on=["round", "station"],
        update=["groups"],
    )
    insert_rows(
        BetSlip,
        [
            BetSlip(round=round, station=s1, groups=[]),
            BetSlip(round=round, station=s2, groups=[[{"box": 2}]]),
        ],
        update_on=["round", "station"],
        update=["groups"],
    )
    slips = dict(BetSlip.objects.filter(round=round).values_list("station_id", "groups"))
    assert slips == {s1.pk: [], s2.pk: [[{"box": 2}]]}


def test_many_rows_each_get_their_own_key(round_and_stations):
    round, (s1, _s2) = round_and_stations
    bets = [
        Bet(round=round, station=s1, box=n % 7 + 1, code=f"c{n}", stake=Decimal(n) / 100)
        for n in range(1, 701)
    ]
    insert_rows(Bet, bets)
    assert len({b.pk for b in bets}) == 700
    # Each object has its own row's key: the keys come back in the rows' order.
    assert dict(Bet.objects.filter(round=round).values_list("pk", "code")) == {
        b.pk: b.code for b in bets
    }
    stored = dict(Bet.objects.filter(round=round).values_list("code", "stake"))
    assert stored == {f"c{n}": Decimal(n) / 100 for n in range(1, 701)}


def test_an_object_with_a_key_is_refused(round_and_stations):
    round, (s1, _s2) = round_and_stations
    (bet,) = insert_rows(Bet, [Bet(round=round, station=s1, box=1, code="main", stake=Decimal(1))])
    with pytest.raises(AssertionError, match="new rows only"):
        insert_rows(Bet, [bet])
    assert Bet.objects.count() == 1


def _fields(bet: Bet) -> dict:
    return {
        f.attname: getattr(bet, f.attname) for f in Bet._meta.concrete_fields if not f.primary_key
    }


def test_nothing_to_insert_is_no_statement(django_assert_num_queries):
    with django_assert_num_queries(0):
        assert insert_rows(Station, []) == []


def test_value_rows_are_the_rows_of_their_objects(round_and_stations):
    round, (s1, s2) = round_and_stations
    objects = insert_rows(
        Bet,
        [
            Bet(round=round, station=s1, box=1, code="main", stake=Decimal("10.05")),
            Bet(round=round, station=s2, box=2, code="21+3", stake=Decimal("0.10")),
        ],
    )
    by_objects = _columns(Bet.objects.filter(pk__in=[b.pk for b in objects]))
    Bet.objects.all().delete()

    insert_values(
        Bet,
        [
            {
                "round_id": round.pk,
                "station_id": s1.pk,
                "box": 1,
                "code": "main",
                "stake": Decimal("10.05"),
            },
            {
                "round_id": round.pk,
                "station_id": s2.pk,
                "box": 2,
                "code": "21+3",
                "stake": Decimal("0.10"),
            },
        ],
    )
    assert _columns(Bet.objects.all()) == by_objects  # left-out fields took their defaults
    assert by_objects[0]["combination"] == "" and by_objects[0]["returned"] is None


def test_a_value_row_is_stamped_when_inserted_as_auto_now_add_says(round_and_stations):
    _round, (s1, _s2) = round_and_stations
    start = timezone.now()
    long_ago = start - timedelta(days=3)
    insert_values(
        StationCommand,
        [{"station_id": s1.pk, "client_id": "c9", "reply": REPLY, "created_at": long_ago}],
    )
    stored = StationCommand.objects.get(client_id="c9")
    assert stored.reply == REPLY and start <= stored.created_at <= timezone.now()


def test_value_rows_upsert(round_and_stations):
    round, (s1, s2) = round_and_stations
    rows = [{"round_id": round.pk, "station_id": s1.pk, "groups": [[{"box": 1}]]}]
    insert_values(BetSlip, rows, update_on=["round", "station"], update=["groups"])
    rows = [
        {"round_id": round.pk, "station_id": s1.pk, "groups": []},
        {"round_id": round.pk, "station_id": s2.pk, "groups": [[{"box": 3}]]},
    ]
    insert_values(BetSlip, rows, update_on=["round", "station"], update=["groups"])
    slips = dict(BetSlip.objects.filter(round=round).values_list("station_id", "groups"))
    assert slips == {s1.pk: [], s2.pk: [[{"box": 3}]]}


def test_awkward_text_and_json_are_stored_as_they_are(round_and_stations):
    """Quotes, backslashes, control characters, non-ASCII text, SQL and JSON's own null
    inside a JSON column, and text that looks like JSON in a text column."""
    _round, (s1, _s2) = round_and_stations
    awkward = {"q": 'say "hi"', "b": "C:\\x\\", "n": "a\nb\tc", "u": "♣ 7C ñ"}
    awkward |= {"sql": "'); --", "z": None}
    (command,) = insert_rows(
        StationCommand, [StationCommand(station=s1, client_id='{"not": "json"}', reply=awkward)]
    )
    stored = StationCommand.objects.get(pk=command.pk)
    assert stored.reply == awkward and stored.client_id == '{"not": "json"}'


def test_a_text_too_long_for_its_column_is_refused_not_cut(round_and_stations):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite keeps text of any length in a varchar column")
    _round, (s1, _s2) = round_and_stations
    with pytest.raises(DataError), transaction.atomic():
        insert_rows(StationCommand, [StationCommand(station=s1, client_id="x" * 65, reply={})])
    assert not StationCommand.objects.filter(station=s1, client_id__startswith="x").exists()


AMOUNTS = [Decimal("10.05"), Decimal("-0.10"), Decimal("7"), Decimal("1E+2"), "2.50", 3, None]


def test_decimals_are_stored_as_bulk_create_stores_them(round_and_stations):
    """A finite Decimal goes to the driver as it is (rows._prepared), anything else through
    its field: either way the row is the one ``bulk_create`` writes."""
    round, (s1, _s2) = round_and_stations
    Bet.objects.bulk_create(
        Bet(round=round, station=s1, box=n, code="main", stake="1", returned=amount)
        for n, amount in enumerate(AMOUNTS, start=1)
    )
    by_django = _columns(Bet.objects.all())
    Bet.objects.all().delete()
    rows = [
        {"round_id": round.pk, "station_id": s1.pk, "box": n, "code": "main", "stake": "1"}
        | {"returned": amount}
        for n, amount in enumerate(AMOUNTS, start=1)
    ]
    insert_values(Bet, rows)
    stored = _columns(Bet.objects.all())
    assert stored == by_django
    assert [row["returned"] for row in stored] == [
        Decimal("10.05"),
        Decimal("-0.10"),
        Decimal("7"),
        Decimal("100"),
        Decimal("2.50"),
        Decimal("3"),
        None,
    ]


@pytest.mark.parametrize("amount", [Decimal("NaN"), Decimal("Infinity"), "ten"])
def test_a_decimal_that_is_no_amount_is_refused_as_its_field_refuses_it(round_and_stations, amount):
    round, (s1, _s2) = round_and_stations
    row = {"round_id": round.pk, "station_id": s1.pk, "box": 1, "code": "main", "stake": amount}
    with pytest.raises(ValidationError), transaction.atomic():
        insert_values(Bet, [row])
    assert not Bet.objects.exists()


def test_an_upsert_adds_to_the_counts_of_the_row_that_is_there(round_and_stations):
    """``add=``: a row already there has the new row's counts added to its own (the meters'
    and the kept credits' way), a new key is inserted as it is."""
    _round, (s1, s2) = round_and_stations
    StationCredits.objects.filter(station__in=[s1, s2]).delete()
    insert_values(StationCredits, [{"station_id": s1.pk, "cents": 500}])
    insert_values(
        StationCredits,
        [{"station_id": s1.pk, "cents": -120}, {"station_id": s2.pk, "cents": 7}],
        update_on=["station_id"],
        add=["cents"],
    )
    kept = dict(StationCredits.objects.values_list("station_id", "cents"))
    assert kept == {s1.pk: 380, s2.pk: 7}
