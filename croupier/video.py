"""Video mode: no dealer; the virtual shoe deals by itself a moment after the table asks
for a card, and rounds follow each other on the betting timer.

Each round's virtual shoe is shuffled and committed as the round opens, before any bet
(``round_opened``, on the Round's first save: the writer knows no croupier code).
The round writer schedules ``deal_video_card`` (through the timers) after every event that
leaves a video table's round waiting for a card. The job is keyed by the round's event
number, so a job that comes late, twice, or after someone else dealt changes nothing.
"""

from __future__ import annotations

import logging

from django.db import transaction

from croupier.services import locked_shoe
from croupier.virtual_shoe import deal_next, shuffle_ahead
from rounds.engine import EngineError
from rounds.models import CARD_PHASES, Round
from tablehub.models import Table

log = logging.getLogger("tablehub.video")


def deal_video_card(round_id: int, seq: int) -> None:
    """Deal the next card of a video table's round, if it still waits after event ``seq``."""
    round = Round.objects.select_related("table").filter(pk=round_id).first()
    if round is None or round.table.mode != Table.Mode.VIDEO:
        return
    try:
        with transaction.atomic():
            # Every card input locks the shoe first, then the round (as croupier.services.scan).
            locked_shoe(round.table)
            locked = Round.objects.select_for_update(no_key=True).get(pk=round_id)
            if locked.last_seq != seq or locked.phase not in CARD_PHASES:
                return  # the round moved on: this job is stale
            deal_next(round.table)
    except EngineError as exc:  # e.g. the round was voided meanwhile: nothing to deal
        log.warning("video table %s round %s: %s", round.table_id, round_id, exc.line())


def round_opened(sender: type[Round], instance: Round, created: bool, **kwargs: object) -> None:
    """A video table's new round: its virtual shoe's order committed before any bet."""
    if created and instance.table.mode == Table.Mode.VIDEO:
        shuffle_ahead(instance)
