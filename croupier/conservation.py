"""Card conservation: a shoe never deals a card more times than its decks hold.

A reader scan (the reader's socket or HTTP, or a card entered by hand) that would deal one
copy too many of its card, in the round or, at a table with a cut card, since the shoe was
shuffled, is refused with ``card_count_exceeded`` (``CardCountExceeded``): the dealer is
told to check the card, and ``raise_alert`` (called by whoever answers the scan, after its
transaction rolled back) keeps a ``CardAlert``, logs it and alerts the tablet's supervisor.
No message names the card: it may have been read face down (issue 17), so it is named by
its reader sequence number.

When a shoe ends (a new shoe), ``reconcile`` counts every card dealt from it (the rounds'
card and burn events, corrections applied, and discarded cards) against its decks and the
reader's count, and the result is stored with the shoe (``Shoe.reconciliation``).
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from django.db import transaction

from croupier.models import CardAlert
from rounds.engine import EngineError
from rounds.models import UNFINISHED, Round, RoundEvent
from rounds.selectors import dealt_cards
from tablehub import broadcast
from tablehub.models import Shoe, Table

log = logging.getLogger("tablehub.croupier")

CODE = "card_count_exceeded"


class CardCountExceeded(EngineError):
    """A scan refused: one copy more of its card than the shoe holds."""

    def __init__(self, table_id: int, shoe: Shoe, round_id: int | None, seq: int) -> None:
        self.table_id, self.shoe_id, self.round_id, self.seq = table_id, shoe.pk, round_id, seq
        super().__init__(
            f"reader card {seq} would be one copy more of its card than this "
            f"{shoe.decks}-deck shoe holds: check the card (a misread, or a card from another "
            "shoe), then scan it again or enter it by hand; a supervisor has been alerted",
            code=CODE,
        )


def raise_alert(refusal: CardCountExceeded) -> CardAlert:
    """Keep the refusal as a CardAlert (in a transaction of its own), log it and tell the
    table's tablets, whose supervisor acts on it (docs/croupier.md)."""
    with transaction.atomic():
        alert = CardAlert.objects.create(
            table_id=refusal.table_id,
            shoe_id=refusal.shoe_id,
            round_id=refusal.round_id,
            reader_seq=refusal.seq,
            code=refusal.code,
            message=refusal.reason,
        )
    log.warning(
        "table %s shoe %s round %s: supervisor alert %s: %s",
        refusal.table_id,
        refusal.shoe_id,
        refusal.round_id,
        alert.pk,
        refusal.reason,
    )
    broadcast.tell_croupier(
        refusal.table_id,
        {
            "type": "supervisor_alert",
            "alert": alert.pk,
            "code": refusal.code,
            "seq": refusal.seq,
            "message": refusal.reason,
        },
    )
    return alert


def reconcile(shoe: Shoe) -> dict[str, Any]:
    """Every card dealt from ``shoe``: per card, how many copies the rounds dealt (card and
    burn events as corrected) and how many were discarded, against the shoe's decks and the
    reader's count (``cards_drawn``: scans and discards). ``conserved``: no card dealt more
    often than the decks hold, and every card the reader counted is accounted for."""
    rounds = list(Round.objects.filter(shoe=shoe).order_by("pk").values_list("pk", flat=True))
    dealt = dealt_cards(rounds)  # card and burn events as corrected
    discarded: Counter[str] = Counter(
        payload.get("card") or "unidentified"
        for payload in RoundEvent.objects.filter(
            round_id__in=rounds, kind=RoundEvent.Kind.DISCARD
        ).values_list("payload", flat=True)
    )
    by_card = Counter(dealt)
    by_card.update(c for c in discarded.elements() if c != "unidentified")
    over = sorted(card for card, n in by_card.items() if n > shoe.decks)
    accounted = dealt.total() + discarded.total()
    return {
        "decks": shoe.decks,
        "rounds": rounds,
        "cards_dealt": dealt.total(),
        "cards_discarded": sum(discarded.values()),
        "reader_count": shoe.cards_drawn,
        "matches_reader": accounted == shoe.cards_drawn,
        "by_card": dict(sorted(by_card.items())),
        "unidentified_discards": discarded["unidentified"],
        "over": over,
        "alerts": CardAlert.objects.filter(shoe=shoe).count(),
        "conserved": not over and accounted == shoe.cards_drawn,
    }


def reconcile_at_close(table_id: int) -> None:
    """A closed table's open shoe, once no round of the table is left unfinished: its
    reconciliation as of the close, stored with it. The shoe stays open (the reader's sequence
    goes on when the table reopens); a new shoe reconciles it again when it ends."""
    if (
        Table.objects.filter(pk=table_id, is_open=False).exists()
        and not Round.objects.filter(table_id=table_id, phase__in=UNFINISHED).exists()
    ):
        for shoe in Shoe.objects.filter(table_id=table_id, closed_at__isnull=True):
            shoe.reconciliation = reconcile(shoe)
            shoe.save(update_fields=["reconciliation"])
            if not shoe.reconciliation["conserved"]:
                log.warning(
                    "table %s shoe %s unreconciled at the close: %s",
                    table_id,
                    shoe.pk,
                    shoe.reconciliation,
                )


def round_ended(sender: type[Round], instance: Round, update_fields: Any, **kwargs: Any) -> None:
    """The last round of a closed table ended: its shoe is reconciled (``reconcile_at_close``)."""
    if update_fields is not None and "phase" not in update_fields:
        return
    if instance.phase in UNFINISHED:
        return
    # After the commit: the scan that ended the round counts its card after the round's save.
    table_id = instance.table_id
    transaction.on_commit(lambda: reconcile_at_close(table_id))
