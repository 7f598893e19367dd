"""The provably fair virtual shoe, as a service (docs/integrity.md): each shuffle of a virtual
shoe is committed to before its first card, revealed when it has ended, and mixes in the
seeds stations gave for it.

A shuffle (``VirtualShuffle``) draws a secret server seed with ``secrets``, takes the
table's pending station seeds, derives its order (tablehub/fairness.py) and publishes
``shoe_committed`` (its commitment, never the seed or the order) in the transaction that
shuffles it: a video table's round opening (croupier/video.py), else its first card, before
that card's events. It has ended when its shoe is closed (a new shoe),
a later shuffle replaced it (the next round's at a continuous shuffler's table, the next
shoe's cards at a table with a cut card), its round is over (a continuous shuffler takes the
cards back) or the table is closed; it is revealed (``shoe_revealed``: seed, order, the cards
dealt) at the first of those moments when no unfinished round was shuffled for it or dealt
from it (a betting round is still to be dealt from it; a round in play may have its
face-down hole card in it). A revealed shuffle never deals again.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models.signals import post_save
from django.utils import timezone

from rounds import writer
from rounds.engine import EngineError, Notice
from rounds.models import UNFINISHED, Round, RoundEvent
from stations.models import Station
from tablehub import fairness
from tablehub.models import Shoe, StationSeed, Table, VirtualShuffle

log = logging.getLogger("tablehub.fair_shoe")


# -- a shuffle, committed ----------------------------------------------------------------------


def new_shuffle(shoe: Shoe, round_id: int | None) -> VirtualShuffle:
    """Shuffle the locked ``shoe`` afresh for the round ``round_id`` with the table's pending
    station seeds, and publish its commitment once this transaction commits (before the
    events of the card that caused it, which are published after it)."""
    pending = list(  # locked: a station changing its seed now waits, or goes to the next
        StationSeed.objects.select_related("station")
        .select_for_update(no_key=True, of=("self",))
        .filter(table_id=shoe.table_id, shuffle=None)
        .order_by("station__name")
    )
    server_seed = secrets.token_hex(fairness.SEED_BYTES)
    order = fairness.shuffled(server_seed, [s.seed for s in pending], shoe.decks)
    shuffle = VirtualShuffle.objects.create(
        shoe=shoe,
        round_id=round_id,
        server_seed=server_seed,
        station_seeds=[{"station": s.station.name, "seed": s.seed} for s in pending],
        commitment=fairness.commitment(order, server_seed),
        order=order,
    )
    StationSeed.objects.filter(pk__in=[s.pk for s in pending]).update(shuffle=shuffle)
    _tell_table(shoe.table, committed_message(shuffle))
    reveal_ended(shoe.table)  # the shuffle this one replaces has ended
    log.info("table %s shoe %s: shuffle %s committed", shoe.table_id, shoe.pk, shuffle.pk)
    return shuffle


def record_dealt(shuffle_id: int, position: int, round_id: int, event_seq: int) -> None:
    """The card at ``position`` of the shuffle was dealt as the round's event ``event_seq``."""
    shuffle = VirtualShuffle.objects.get(pk=shuffle_id)
    shuffle.dealt = [*shuffle.dealt, {"position": position, "round": round_id, "event": event_seq}]
    shuffle.save(update_fields=["dealt"])


def is_revealed(shuffle_id: int) -> bool:
    return VirtualShuffle.objects.filter(pk=shuffle_id, revealed_at__isnull=False).exists()


# -- revealed when it ends -----------------------------------------------------------------------


def reveal_ended(table: Table) -> list[VirtualShuffle]:
    """Reveal every shuffle of ``table`` that has ended and that no round in play was dealt
    from, and tell the table (once this transaction commits). Idempotent."""
    table = Table.objects.get(pk=table.pk)  # whether it is open now
    hidden = list(
        VirtualShuffle.objects.select_related("shoe")
        .filter(shoe__table=table, revealed_at=None)
        .order_by("pk")
    )
    if not hidden:
        return []
    rounds = {r for s in hidden for r in _rounds_of(s)}
    unfinished = set(
        Round.objects.filter(pk__in=rounds, phase__in=UNFINISHED).values_list("pk", flat=True)
    )
    newest = max(s.pk for s in hidden)
    revealed = []
    for shuffle in hidden:
        if unfinished & _rounds_of(shuffle):
            continue  # a round still to be dealt from it, or its hole card face down
        ended = (
            shuffle.shoe.closed_at is not None
            or shuffle.pk != newest
            or not table.is_open
            or (table.shuffler == Table.Shuffler.CONTINUOUS and shuffle.round_id is not None)
        )
        now = timezone.now()
        if ended and VirtualShuffle.objects.filter(pk=shuffle.pk, revealed_at=None).update(
            revealed_at=now
        ):
            shuffle.revealed_at = now
            revealed.append(shuffle)
            _tell_table(table, revealed_message(shuffle))
            log.info("table %s: shuffle %s revealed", table.pk, shuffle.pk)
    return revealed


def _rounds_of(shuffle: VirtualShuffle) -> set[int]:
    rounds = {d["round"] for d in shuffle.dealt}
    return rounds | ({shuffle.round_id} if shuffle.round_id is not None else set())


def _round_ended(sender: type[Round], instance: Round, update_fields: Any, **kwargs: Any) -> None:
    """A round that ends may end its shuffle (a continuous shuffler's, or the last round at a
    closed table): checked when the writer saves its new phase."""
    if update_fields is not None and "phase" not in update_fields:
        return
    if instance.phase in UNFINISHED:
        return
    if VirtualShuffle.objects.filter(shoe__table_id=instance.table_id, revealed_at=None).exists():
        reveal_ended(instance.table)


post_save.connect(_round_ended, sender=Round, dispatch_uid="fair_shoe_round_ended")


# -- what is shown -------------------------------------------------------------------------------


def committed_message(shuffle: VirtualShuffle) -> dict[str, Any]:
    """The commitment, as the stations and tablets hear it: no seed, no card."""
    return {
        "type": "shoe_committed",
        "shoe": shuffle.shoe_id,
        "shuffle": shuffle.pk,
        "decks": len(shuffle.order) // 52,
        "commitment": shuffle.commitment,
        "station_seeds": sorted(s["seed"] for s in shuffle.station_seeds),
        "committed_at": shuffle.committed_at.isoformat(),
    }


def revealed_message(shuffle: VirtualShuffle) -> dict[str, Any]:
    return {"type": "shoe_revealed", **record(shuffle)}


def record(shuffle: VirtualShuffle) -> dict[str, Any]:
    """A revealed shuffle, all ``verify_shoe`` and the recipe of docs/integrity.md need:
    ``dealt`` pairs each position dealt with the card its round's event records."""
    assert shuffle.revealed_at is not None, "the seed and the order of a hidden shuffle"
    return {
        "shoe": shuffle.shoe_id,
        "shuffle": shuffle.pk,
        "commitment": shuffle.commitment,
        "server_seed": shuffle.server_seed,
        "station_seeds": sorted(s["seed"] for s in shuffle.station_seeds),
        "order": shuffle.order,
        "dealt": dealt_cards(shuffle),
        "committed_at": shuffle.committed_at.isoformat(),
        "revealed_at": shuffle.revealed_at.isoformat(),
    }


def dealt_cards(shuffle: VirtualShuffle) -> list[list[Any]]:
    """[position, card] of each card dealt from it, the card as its round's event logged it
    (``?`` when that event is missing or not a card)."""
    wanted = {(d["round"], d["event"]) for d in shuffle.dealt}
    rounds = {r for r, _ in wanted}
    cards = {
        (e.round_id, e.seq): e.payload.get("card")
        for e in RoundEvent.objects.filter(
            round_id__in=rounds,
            kind__in=(RoundEvent.Kind.CARD, RoundEvent.Kind.BURN),
            seq__in={s for _, s in wanted},
        )
        if (e.round_id, e.seq) in wanted
    }
    return [[d["position"], cards.get((d["round"], d["event"]), "?")] for d in shuffle.dealt]


def shown(shuffle: VirtualShuffle) -> dict[str, Any]:
    """A shuffle as the API shows it: its commitment, and its record once revealed."""
    if shuffle.revealed_at is None:
        return {**committed_message(shuffle), "revealed": False}
    return {**committed_message(shuffle), **record(shuffle), "revealed": True}


def current_commitment(table_id: int) -> dict[str, Any] | None:
    """The commitment of the table's shuffle not yet revealed (the one dealing), for a
    station's or a tablet's state; None when there is none (a live shoe has none)."""
    shuffle = (
        VirtualShuffle.objects.filter(shoe__table_id=table_id, revealed_at=None)
        .order_by("-pk")
        .first()
    )
    if shuffle is None:
        return None
    message = committed_message(shuffle)
    del message["type"]
    return message


def round_shuffles(round: Round) -> list[dict[str, Any]]:
    """The virtual shuffles ``round`` was dealt from (game recall), each as ``shown``."""
    if round.table.shuffler == Table.Shuffler.CONTINUOUS:
        found = list(VirtualShuffle.objects.filter(round_id=round.pk).order_by("pk"))
    elif round.shoe_id is not None:
        found = list(VirtualShuffle.objects.filter(shoe_id=round.shoe_id).order_by("pk"))
    else:
        return []  # no card dealt yet
    return [shown(s) for s in found if round.pk in _rounds_of(s)]


def shoe_shown(shoe: Shoe) -> dict[str, Any]:
    """A shoe and its virtual shuffles, each as ``shown`` (the API's ``/api/shoes/{id}/``)."""
    return {
        "id": shoe.pk,
        "table": shoe.table_id,
        "decks": shoe.decks,
        "started_at": shoe.started_at.isoformat(),
        "closed_at": shoe.closed_at.isoformat() if shoe.closed_at else None,
        "shuffles": [shown(s) for s in shoe.shuffles.order_by("pk")],
    }


# -- checked by anyone ---------------------------------------------------------------------------


def check_shoe(shoe: Shoe) -> tuple[list[str], list[str]]:
    """Each revealed shuffle of ``shoe`` checked against its commitment, the cards dealt as
    their rounds' events logged them (tablehub/fairness.py): the lines of the shuffles that
    verify or were not checked, and those of the ones that fail, naming what fails."""
    fine: list[str] = []
    failed: list[str] = []
    shuffles = list(shoe.shuffles.order_by("pk"))
    if not shuffles:
        failed.append(f"shoe {shoe.pk}: no virtual shuffle (a card reader's shoe has none)")
    for shuffle in shuffles:
        name = f"shoe {shoe.pk} shuffle {shuffle.pk}"
        if shuffle.revealed_at is None:
            fine.append(f"{name}: not revealed yet (it has not ended): not checked")
            continue
        ok, line = check_record(name, record(shuffle))
        (fine if ok else failed).append(line)
    if shuffles and len(fine) == len(shuffles) and all("not checked" in f for f in fine):
        failed.append(f"shoe {shoe.pk}: no shuffle revealed yet: nothing to check")
    return fine, failed


FIELDS = ("commitment", "server_seed", "station_seeds", "order", "dealt")


def check_record(name: str, data: object) -> tuple[bool, str]:
    """One revealed shuffle (``FIELDS``, as ``record`` gives them) checked: whether it
    verifies, and the line that says so or names what fails."""
    missing = [f for f in FIELDS if f not in data] if isinstance(data, dict) else FIELDS
    if missing:
        return False, f"{name}: not a revealed shuffle: {', '.join(missing)} missing"
    assert isinstance(data, dict)  # else every field is missing
    try:
        dealt = fairness.verify(data)
    except (fairness.NotFair, TypeError, ValueError) as exc:  # a file's wrong types too
        return False, f"{name}: {exc}"
    return True, f"{name}: verifies: {dealt} card(s) dealt from the committed order, in order"


# -- a station's seed ----------------------------------------------------------------------------


def add_station_seed(station: Station, seed: object) -> str:
    """The station's seed for its video table's next shuffle (replacing one it gave before
    that shuffle). Refused, changing nothing: ``bad_seed`` (not 1 to 64 printable ASCII
    characters), ``no_virtual_shoe`` (not a video table: its cards are not the server's)."""
    try:
        text = fairness.check_station_seed(seed)
    except ValueError as exc:
        raise EngineError(str(exc), code="bad_seed") from None
    if station.table.mode != Table.Mode.VIDEO:
        raise EngineError(
            "only a video table's virtual shoe takes a station's seed", code="no_virtual_shoe"
        )
    with transaction.atomic():
        updated = StationSeed.objects.filter(station=station, shuffle=None).update(
            seed=text, received_at=timezone.now()
        )
        if not updated:
            try:
                with transaction.atomic():
                    StationSeed.objects.create(table=station.table, station=station, seed=text)
            except IntegrityError:  # another of its messages made it meanwhile
                StationSeed.objects.filter(station=station, shuffle=None).update(seed=text)
    return text


def pending_seed(station: Station) -> str | None:
    return (
        StationSeed.objects.filter(station=station, shuffle=None)
        .values_list("seed", flat=True)
        .first()
    )


def _tell_table(table: Table, message: dict[str, Any]) -> None:
    """Every station and tablet of the table hears ``message`` once this transaction commits,
    as news of its newest round (a table that never had a round has nobody to tell)."""
    newest = table.rounds.order_by("-pk").first()
    if newest is not None:
        writer.publish_news(newest, [Notice("public", message)])
