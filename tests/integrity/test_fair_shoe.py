"""The provably fair virtual shoe (issue 21, point 2; docs/integrity.md): a shuffle's
commitment reaches the stations before its first card, its seed and order only once it has
ended, and anyone can check every card dealt against the commitment: ``verify_shoe``, and the
recipe of docs/integrity.md run as written, with nothing but hashlib and hmac."""

from __future__ import annotations

import io
import json
import re
from decimal import Decimal
from pathlib import Path

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.core.management import CommandError, call_command
from django.db import connection, connections
from django.urls import reverse

from croupier.services import face_down_card
from croupier.tablet import close_table, new_shoe
from croupier.tablet_state import croupier_state
from croupier.virtual_shoe import deal_next
from rounds import writer
from rounds.engine import RuleSet, Timeout
from rounds.models import IN_PLAY, Round, RoundEvent
from rounds.recall import recall
from stations.commands import handle, place_bets, station_state
from stations.models import Station
from stations.services import cash_in
from tablehub import fairness
from tablehub.asgi import application
from tablehub.models import Jurisdiction, Shoe, StationSeed, Table, TableConfig, VirtualShuffle
from tests.helpers import ask, drain
from tests.test_protocol_contract import STATION_FRAME, TABLET_FRAME, assert_valid

ROOT = Path(__file__).resolve().parents[2]
ORIGIN = [(b"origin", b"http://127.0.0.1")]
CARD_EVENTS = (RoundEvent.Kind.CARD, RoundEvent.Kind.BURN)


def make_table(name: str, shuffler: str, mode: str = Table.Mode.DEALER) -> Table:
    jurisdiction, _ = Jurisdiction.objects.get_or_create(code="wa", name="Washington")
    table = Table.objects.create(
        name=name, jurisdiction=jurisdiction, shuffler=shuffler, mode=mode, is_open=True
    )
    TableConfig.objects.create(table=table, version=1, rules=RuleSet(decks=1).to_dict())
    for station_name in ("s1", "s2"):
        station = Station(table=table, name=station_name)
        station.set_credential(f"{station_name}-secret")
        station.save()
        cash_in(station, "1000", key="start")
    return table


def play_round(table: Table) -> Round:
    """One round dealt by the virtual shoe: s1 bets, every question times out (stand)."""
    table = Table.objects.get(pk=table.pk)
    round = writer.open_round(table)
    place_bets(table.stations.get(name="s1"), [(1, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    for _ in range(100):
        round.refresh_from_db()
        if round.phase == Round.Phase.SETTLED:
            return round
        if writer.state(round.pk).awaiting_card:
            deal_next(table)
        else:
            writer.record(round.pk, Timeout())
    raise AssertionError("the round never settled")


def dealt_by_the_rounds(rounds: list[Round]) -> list[str]:
    """Every card the rounds' event logs dealt, round after round, in order."""
    return [
        e.payload["card"]
        for r in rounds
        for e in r.events.filter(kind__in=CARD_EVENTS).order_by("seq")
    ]


def recipe():
    """The code block of docs/integrity.md's "Checking a shoe in plain Python", as written."""
    text = (ROOT / "docs" / "integrity.md").read_text()
    section = text[text.index("### Checking a shoe in plain Python") :]
    code = re.search(r"```python\n(.*?)```", section, flags=re.DOTALL).group(1)
    assert "tablehub" not in code and "import hashlib, hmac" in code
    namespace: dict = {}
    exec(compile(code, "docs/integrity.md", "exec"), namespace)  # noqa: S102 - the doc's code
    return namespace["verify"]


def verify_shoe(target: str, stdin: str | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        if stdin is not None:
            import sys

            real, sys.stdin = sys.stdin, io.StringIO(stdin)
            try:
                call_command("verify_shoe", target, stdout=out, stderr=err)
            finally:
                sys.stdin = real
        else:
            call_command("verify_shoe", target, stdout=out, stderr=err)
    except CommandError as exc:
        return exc.returncode, out.getvalue(), err.getvalue() + str(exc)
    return 0, out.getvalue(), err.getvalue()


def alter_card(event: RoundEvent, card: str) -> None:
    """Change a logged card behind the server's back, as someone with the database could."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "UPDATE rounds_roundevent SET payload = jsonb_set(payload, '{card}', "
                "to_jsonb(%s::text)) WHERE id = %s",
                [card, event.pk],
            )
        else:
            cursor.execute(
                "UPDATE rounds_roundevent SET payload = json_set(payload, '$.card', %s) "
                "WHERE id = %s",
                [card, event.pk],
            )


def events_of(frames: list[dict]) -> list[dict]:
    return [f["event"] for f in frames if f.get("type") == "event"]


async def joined(table: Table, name: str) -> tuple[WebsocketCommunicator, list[dict], dict]:
    ws = WebsocketCommunicator(application, f"/ws/tables/{table.pk}/station/", headers=ORIGIN)
    assert (await ws.connect())[0]
    frames: list[dict] = []
    reply = await ask(
        ws,
        frames,
        {"type": "join", "client_id": "j", "station": name, "credential": f"{name}-secret"},
    )
    assert reply["ok"], reply
    return ws, frames, reply


# -- a whole shoe, through the table ---------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_a_virtual_shoe_is_committed_before_its_first_card_and_revealed_when_it_ends():
    db = database_sync_to_async
    table = await db(make_table)("cut", Table.Shuffler.CUT_CARD)
    ws, frames, joined_reply = await joined(table, "s2")  # sits out: sees the table's events
    assert joined_reply["state"]["virtual_shoe"] is None  # nothing shuffled yet

    rounds = [await db(play_round)(table)]
    await drain(ws, frames, 0.1)
    events = events_of(frames)
    kinds = [e["type"] for e in events]
    first_card = min(kinds.index(k) for k in ("card", "burn", "hole_card_dealt") if k in kinds)
    assert kinds.count("shoe_committed") == 1 and kinds.index("shoe_committed") < first_card
    committed = events[kinds.index("shoe_committed")]
    shuffle = await db(VirtualShuffle.objects.get)()
    assert committed["commitment"] == shuffle.commitment and committed["shuffle"] == shuffle.pk
    assert committed["decks"] == 1 and committed["station_seeds"] == []
    # The commitment is what SHA-256 makes of the order and the seed, kept secret meanwhile.
    assert shuffle.commitment == fairness.commitment(shuffle.order, shuffle.server_seed)

    # The state and the tablet show it while the shoe deals.
    state = (await ask(ws, frames, {"type": "state", "client_id": "s"}))["state"]
    shown = {k: v for k, v in committed.items() if k != "type"}
    assert state["virtual_shoe"] == shown
    assert (await db(croupier_state)(table))["virtual_shoe"] == shown
    assert_valid(TABLET_FRAME, {"type": "state", "state": await db(croupier_state)(table)})

    rounds += [await db(play_round)(table), await db(play_round)(table)]
    await drain(ws, frames, 0.1)
    everything = json.dumps(frames)
    assert shuffle.server_seed not in everything  # never sent before the shoe ends
    assert "shoe_revealed" not in everything
    in_play = await db(recall)(rounds[-1])
    assert "server_seed" not in json.dumps(in_play["virtual_shoe"])  # nor readable
    assert in_play["virtual_shoe"][0]["commitment"] == shuffle.commitment

    # The shoe ends: the order and the seed are revealed, to the stations and in recall.
    await db(new_shoe)(table)
    await drain(ws, frames, 0.1)
    revealed = [e for e in events_of(frames) if e["type"] == "shoe_revealed"]
    assert len(revealed) == 1
    reveal = revealed[0]
    await db(shuffle.refresh_from_db)()
    assert reveal["server_seed"] == shuffle.server_seed and reveal["order"] == shuffle.order
    dealt = await db(dealt_by_the_rounds)(rounds)
    assert [card for _, card in reveal["dealt"]] == dealt  # every card, from the game's log
    assert [position for position, _ in reveal["dealt"]] == list(range(len(dealt)))
    assert shuffle.order[: len(dealt)] == dealt  # dealt from the top of the committed order
    recalled = (await db(recall)(rounds[0]))["virtual_shoe"]
    assert recalled[0]["revealed"] is True and recalled[0]["order"] == shuffle.order

    # Anyone checks it: the docs' recipe, as written, and verify_shoe.
    assert recipe()(reveal) == f"verifies: {len(dealt)} cards dealt from the committed order"
    shoe_id = shuffle.shoe_id
    code, out, err = await db(verify_shoe)(str(shoe_id))
    assert code == 0, err
    assert out.strip() == (
        f"shoe {shoe_id} shuffle {shuffle.pk}: verifies: {len(dealt)} card(s) dealt from the "
        "committed order, in order"
    )
    for frame in frames:
        assert_valid(STATION_FRAME, frame)
    await ws.disconnect()
    await db(connections.close_all)()


@pytest.mark.django_db
def test_verify_shoe_names_an_altered_card_and_an_altered_seed():
    table = make_table("cut", Table.Shuffler.CUT_CARD)
    rounds = [play_round(table), play_round(table)]
    new_shoe(table)
    shuffle = VirtualShuffle.objects.get()
    assert shuffle.revealed_at is not None
    assert verify_shoe(str(shuffle.shoe_id))[0] == 0

    # A dealt card changed in the log: named with its position and both cards.
    third = rounds[0].events.filter(kind__in=CARD_EVENTS).order_by("seq")[2]
    was = third.payload["card"]
    other = next(c for c in shuffle.order if c != was)
    alter_card(third, other)
    code, _, err = verify_shoe(str(shuffle.shoe_id))
    assert code == 1
    assert (
        f"shoe {shuffle.shoe_id} shuffle {shuffle.pk}: position 2: {other} was dealt, the "
        f"committed order has {was}"
    ) in err
    alter_card(third, was)
    assert verify_shoe(str(shuffle.shoe_id))[0] == 0

    # The seed changed: the commitment no longer matches.
    seed = shuffle.server_seed
    altered = ("0" if seed[0] != "0" else "1") + seed[1:]
    VirtualShuffle.objects.filter(pk=shuffle.pk).update(server_seed=altered)
    code, _, err = verify_shoe(str(shuffle.shoe_id))
    assert code == 1
    assert "commitment: not the SHA-256 of this order and server seed" in err

    # The order swapped around with its commitment recomputed: the seeds do not make it.
    order = list(shuffle.order)
    order[0], order[1] = order[1], order[0]
    VirtualShuffle.objects.filter(pk=shuffle.pk).update(
        server_seed=seed, order=order, commitment=fairness.commitment(order, seed)
    )
    code, _, err = verify_shoe(str(shuffle.shoe_id))
    assert code == 1 and "order: not the one the server seed and the station seeds make" in err


@pytest.mark.django_db
def test_verify_shoe_reads_a_revealed_shuffle_from_a_file_or_stdin(tmp_path):
    table = make_table("cut", Table.Shuffler.CUT_CARD)
    play_round(table)
    new_shoe(table)
    shuffle = VirtualShuffle.objects.get()
    record = recall(Round.objects.get())["virtual_shoe"][0]
    path = tmp_path / "shoe.json"
    path.write_text(json.dumps(record))
    code, out, _ = verify_shoe(str(path))
    assert code == 0 and out.startswith(f"shuffle {shuffle.pk}: verifies: ")
    assert verify_shoe("-", stdin=json.dumps([record]))[0] == 0
    assert recipe()(record).startswith("verifies: ")

    position, card = record["dealt"][1]
    other = next(c for c in record["order"] if c != card)
    bad = {**record, "dealt": [*record["dealt"][:1], [position, other], *record["dealt"][2:]]}
    path.write_text(json.dumps(bad))
    code, _, err = verify_shoe(str(path))
    assert code == 1
    assert f"position {position}: {other} was dealt, the committed order has {card}" in err
    assert "not the committed order's next card" in recipe()(bad)
    backwards = {**record, "dealt": [record["dealt"][1], record["dealt"][0]]}
    path.write_text(json.dumps(backwards))
    assert verify_shoe(str(path))[0] == 1  # out of order
    path.write_text(json.dumps({"order": record["order"]}))
    code, _, err = verify_shoe(str(path))
    assert code == 1 and "commitment, server_seed, station_seeds, dealt missing" in err
    path.write_text("{not json")
    assert verify_shoe(str(path))[0] == 1


@pytest.mark.django_db
def test_a_card_readers_shoe_has_no_commitment():
    table = make_table("live", Table.Shuffler.CUT_CARD)
    round = writer.open_round(table)
    place_bets(table.stations.get(name="s1"), [(1, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    from croupier.tablet import manual_card  # the reader's input, typed in

    for card in ("9S", "6C", "TD", "QH"):
        manual_card(table, card)
    assert VirtualShuffle.objects.count() == 0
    assert croupier_state(table)["virtual_shoe"] is None
    assert station_state(table.stations.get(name="s1"))["virtual_shoe"] is None
    code, _, err = verify_shoe(str(Shoe.objects.get().pk))
    assert code == 1 and "no virtual shuffle (a card reader's shoe has none)" in err


# -- a continuous shuffler's table: a shuffle per round ----------------------------------------


@pytest.mark.django_db
def test_each_round_of_a_continuous_shuffler_is_a_shoe_revealed_when_the_round_ends():
    table = make_table("video", Table.Shuffler.CONTINUOUS, Table.Mode.VIDEO)
    first = play_round(table)
    one = VirtualShuffle.objects.get()
    assert one.round_id == first.pk and one.revealed_at is not None  # its round is over
    second = play_round(table)
    two = VirtualShuffle.objects.exclude(pk=one.pk).get()
    assert two.round_id == second.pk and two.revealed_at is not None
    assert one.order != two.order and one.server_seed != two.server_seed
    for round, shuffle in ((first, one), (second, two)):
        dealt = dealt_by_the_rounds([round])
        assert shuffle.order[: len(dealt)] == dealt
    assert verify_shoe(str(one.shoe_id))[0] == 0


@pytest.mark.django_db
def test_closing_the_table_mid_round_reveals_its_shuffle_when_the_round_ends():
    table = make_table("cut", Table.Shuffler.CUT_CARD)
    for _ in range(5):  # a round still in play after its first four cards (no blackjack)
        round = writer.open_round(Table.objects.get(pk=table.pk))
        place_bets(table.stations.get(name="s1"), [(1, "main", Decimal("10"))])
        writer.close_bets(round.pk)
        for _ in range(4):
            deal_next(table)
        round.refresh_from_db()
        if round.phase in IN_PLAY:
            break
    assert round.phase in IN_PLAY and face_down_card(table) is not None
    close_table(table)
    shuffle = VirtualShuffle.objects.get()
    assert shuffle.revealed_at is None  # the order would name the hole card
    for _ in range(50):
        round.refresh_from_db()
        if round.phase == Round.Phase.SETTLED:
            break
        if writer.state(round.pk).awaiting_card:
            deal_next(table)
        else:
            writer.record(round.pk, Timeout())
    shuffle.refresh_from_db()
    assert shuffle.revealed_at is not None
    assert verify_shoe(str(shuffle.shoe_id))[0] == 0


# -- a station's seed --------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_stations_seed_changes_the_next_shuffle_and_is_verifiable():
    table = make_table("video", Table.Shuffler.CONTINUOUS, Table.Mode.VIDEO)
    s1, s2 = table.stations.get(name="s1"), table.stations.get(name="s2")
    reply = handle(s1, {"type": "shoe_seed", "client_id": "a", "seed": "first-try"})
    assert reply["ok"] and reply["shoe_seed"] == "first-try"
    reply = handle(s1, {"type": "shoe_seed", "client_id": "b", "seed": "lucky-7"})
    assert reply["ok"] and reply["shoe_seed"] == "lucky-7"  # replaces the first
    assert handle(s2, {"type": "shoe_seed", "client_id": "a", "seed": "Zebra!"})["ok"]
    assert station_state(s1)["shoe_seed"] == "lucky-7"

    round = play_round(table)
    shuffle = VirtualShuffle.objects.get()
    assert shuffle.station_seeds == [
        {"station": "s1", "seed": "lucky-7"},
        {"station": "s2", "seed": "Zebra!"},
    ]
    assert station_state(s1)["shoe_seed"] is None  # taken by that shuffle
    assert StationSeed.objects.filter(shuffle=shuffle).count() == 2
    # The seeds make the order: without them (or with others) the same server seed makes
    # another one.
    assert fairness.shuffled(shuffle.server_seed, ["lucky-7", "Zebra!"], 1) == shuffle.order
    assert fairness.shuffled(shuffle.server_seed, [], 1) != shuffle.order
    assert fairness.shuffled(shuffle.server_seed, ["lucky-8", "Zebra!"], 1) != shuffle.order
    record = recall(round)["virtual_shoe"][0]
    assert record["station_seeds"] == ["Zebra!", "lucky-7"]  # sorted, as the HMAC takes them
    assert recipe()(record).startswith("verifies: ")
    assert verify_shoe(str(shuffle.shoe_id))[0] == 0
    # The next shuffle takes no seed that was used.
    play_round(table)
    assert VirtualShuffle.objects.order_by("-pk").first().station_seeds == []


@pytest.mark.parametrize(
    "seed",
    [None, "", "x" * 65, "two words", "tab\there", "caf\u00e9", 42, ["a"], {"seed": "a"}],
)
@pytest.mark.django_db
def test_a_bad_station_seed_is_refused_with_its_code_and_changes_nothing(seed):
    table = make_table("video", Table.Shuffler.CONTINUOUS, Table.Mode.VIDEO)
    s1 = table.stations.get(name="s1")
    assert handle(s1, {"type": "shoe_seed", "client_id": "ok", "seed": "kept"})["ok"]
    message = {"type": "shoe_seed", "client_id": "bad"}
    if seed is not None:
        message["seed"] = seed
    reply = handle(s1, message)
    assert reply["ok"] is False and reply["error"]["code"] == "bad_seed", reply
    assert reply["error"]["message"].startswith("station s1: seed ")
    assert list(StationSeed.objects.values_list("station__name", "seed", "shuffle")) == [
        ("s1", "kept", None)
    ]


@pytest.mark.django_db
def test_a_seed_at_a_table_dealt_by_a_dealer_is_refused():
    table = make_table("dealer", Table.Shuffler.CONTINUOUS)
    reply = handle(table.stations.get(name="s1"), {"type": "shoe_seed", "client_id": "a",
                                                   "seed": "mine"})  # fmt: skip
    assert reply["ok"] is False and reply["error"]["code"] == "no_virtual_shoe"
    assert StationSeed.objects.count() == 0


@pytest.mark.django_db(transaction=True)
async def test_the_seed_message_over_the_socket_is_valid_against_the_schema():
    db = database_sync_to_async
    table = await db(make_table)("video", Table.Shuffler.CONTINUOUS, Table.Mode.VIDEO)
    ws, frames, _ = await joined(table, "s1")
    good = await ask(ws, frames, {"type": "shoe_seed", "client_id": "a", "seed": "my-seed"})
    assert good["ok"] and good["shoe_seed"] == "my-seed"
    bad = await ask(ws, frames, {"type": "shoe_seed", "client_id": "b", "seed": "my seed"})
    assert bad["error"]["code"] == "bad_seed"
    state = (await ask(ws, frames, {"type": "state", "client_id": "c"}))["state"]
    assert state["shoe_seed"] == "my-seed"
    await db(play_round)(table)
    await drain(ws, frames, 0.1)
    kinds = [e["type"] for e in events_of(frames)]
    assert "shoe_committed" in kinds and "shoe_revealed" in kinds
    committed = next(e for e in events_of(frames) if e["type"] == "shoe_committed")
    assert committed["station_seeds"] == ["my-seed"]
    for frame in frames:
        assert_valid(STATION_FRAME, frame)
    await ws.disconnect()
    await db(connections.close_all)()


@pytest.mark.django_db
def test_the_shoes_admin_page_and_api_show_the_seed_only_once_revealed(
    admin_client,
):
    table = make_table("cut", Table.Shuffler.CUT_CARD)
    play_round(table)
    shuffle = VirtualShuffle.objects.get()
    page = reverse("admin:tablehub_shoe_change", args=[shuffle.shoe_id])
    before = admin_client.get(page).content.decode()
    assert shuffle.commitment in before and "not revealed" in before
    assert shuffle.server_seed not in before and ",".join(shuffle.order[:5]) not in before
    changelist = reverse("admin:tablehub_shoe_changelist")
    probe = admin_client.get(changelist, {"shuffles__server_seed": shuffle.server_seed})
    assert probe.status_code in (302, 400)  # no filter finds a seed not yet revealed
    api = admin_client.get(f"/api/shoes/{shuffle.shoe_id}/")
    assert api.status_code == 200
    hidden = api.json()["shuffles"]
    assert [(s["commitment"], s["revealed"]) for s in hidden] == [(shuffle.commitment, False)]
    assert shuffle.server_seed not in api.content.decode() and "order" not in hidden[0]
    new_shoe(table)
    after = admin_client.get(page).content.decode()
    assert f"server seed {shuffle.server_seed}" in after
    revealed = admin_client.get(f"/api/shoes/{shuffle.shoe_id}/").json()["shuffles"][0]
    assert revealed["server_seed"] == shuffle.server_seed and revealed["revealed"] is True
    assert recipe()(revealed).startswith("verifies: ")


@pytest.mark.django_db
def test_a_video_tables_round_is_committed_as_it_opens_before_any_bet():
    table = make_table("video", Table.Shuffler.CONTINUOUS, Table.Mode.VIDEO)
    round = writer.open_round(table)
    shuffle = VirtualShuffle.objects.get()
    assert shuffle.round_id == round.pk and not round.bets.exists()
    assert Round.objects.get(pk=round.pk).phase == Round.Phase.BETTING
    assert station_state(table.stations.get(name="s1"))["virtual_shoe"]["commitment"] == (
        shuffle.commitment
    )
    # A seed sent now is for the next round's shuffle: this one is already committed.
    s1 = table.stations.get(name="s1")
    assert handle(s1, {"type": "shoe_seed", "client_id": "a", "seed": "later"})["ok"]
    place_bets(s1, [(1, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    for _ in range(100):
        round.refresh_from_db()
        if round.phase == Round.Phase.SETTLED:
            break
        if writer.state(round.pk).awaiting_card:
            deal_next(table)
        else:
            writer.record(round.pk, Timeout())
    shuffle.refresh_from_db()
    assert VirtualShuffle.objects.count() == 1 and shuffle.station_seeds == []
    dealt = dealt_by_the_rounds([round])
    assert shuffle.order[: len(dealt)] == dealt and shuffle.revealed_at is not None
    nxt = writer.open_round(Table.objects.get(pk=table.pk))
    assert VirtualShuffle.objects.get(round_id=nxt.pk).station_seeds == [
        {"station": "s1", "seed": "later"}
    ]


@pytest.mark.django_db
def test_a_video_table_closed_while_bets_are_open_deals_that_round_from_its_commitment():
    table = make_table("video", Table.Shuffler.CONTINUOUS, Table.Mode.VIDEO)
    round = writer.open_round(table)
    place_bets(table.stations.get(name="s1"), [(1, "main", Decimal("10"))])
    close_table(table)  # bets stay: the round is still dealt, from its committed order
    shuffle = VirtualShuffle.objects.get()
    assert shuffle.revealed_at is None
    writer.close_bets(round.pk)
    for _ in range(100):
        round.refresh_from_db()
        if round.phase == Round.Phase.SETTLED:
            break
        if writer.state(round.pk).awaiting_card:
            deal_next(table)
        else:
            writer.record(round.pk, Timeout())
    assert VirtualShuffle.objects.count() == 1  # no shuffle after the bets
    shuffle.refresh_from_db()
    dealt = dealt_by_the_rounds([round])
    assert shuffle.order[: len(dealt)] == dealt and shuffle.revealed_at is not None
