"""The dealer on duty at a table, and the log of each change of dealer (docs/integrity.md,
"Statistics per dealer and shift").

The dealer is a tablet user. A user takes over the table when they open its tablet with
the dealer role, or when any tablet user's dealing command succeeds (``DEALING_COMMANDS``:
open the table, close bets, deal, burn, a card by hand, a new shoe); supervisor actions
and reading the state never do. A take-over by another user than the one on duty is a
``DealerChange`` (with ``mid_shoe`` when cards had left the open shoe already) and makes
the user ``Table.dealer``.

Each round records the dealer on duty when its first card was dealt: ``writer.open_round``
gives a new round the table's dealer, and a take-over before the round's first card (bets
open, or closed with no card yet) gives that round the new dealer; a round with cards on the
table keeps the dealer who started dealing it (the change is logged with it).
"""

from __future__ import annotations

import logging

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.db.models import Q

from croupier.models import DealerChange
from rounds.models import UNFINISHED, Round
from tablehub.models import Table
from tablehub.roles import DEALER

log = logging.getLogger("tablehub.croupier")

DEALING_COMMANDS = frozenset(
    {"open_table", "close_bets", "deal", "burn", "manual_card", "new_shoe"}
)


def is_dealer(user: AbstractBaseUser | AnonymousUser | None) -> bool:
    """A user in the dealer group itself (a superuser or a floor manager who opens a tablet
    to look does not take the table over; they do when they deal)."""
    if user is None or not user.is_authenticated or not user.is_active:
        return False
    return get_user_model().objects.filter(pk=user.pk, groups__name=DEALER).exists()


def not_dealt_yet() -> Q:
    """Rounds with no card dealt: taking bets, or bets closed (their one event) and no card."""
    return Q(phase=Round.Phase.BETTING) | Q(phase=Round.Phase.DEAL, last_seq__lte=1)


def take_over(
    table_id: int, user: AbstractBaseUser, how: str, command: str = ""
) -> DealerChange | None:
    """``user`` is the table's dealer from now on. Returns the change logged, or None when
    they already were (one read, no lock: the usual case of every dealing command)."""
    if Table.objects.filter(pk=table_id, dealer_id=user.pk).exists():
        return None
    with transaction.atomic():
        # The table's row first, then its round's (as close_table and open_round lock them).
        table = (
            Table.objects.select_for_update(no_key=True, of=("self",))
            .select_related("dealer")
            .get(pk=table_id)
        )
        if table.dealer_id == user.pk:
            return None  # another socket of the same user took it meanwhile
        previous = table.dealer
        table.dealer_id = user.pk
        table.save(update_fields=["dealer"])
        shoe = table.shoes.filter(closed_at__isnull=True).order_by("-pk").first()
        round = table.rounds.filter(phase__in=UNFINISHED).order_by("-pk").first()
        # A round not dealt a card yet is dealt by the new dealer. The update re-reads the
        # row under its lock, so a round whose first card came meanwhile keeps its dealer.
        Round.objects.filter(not_dealt_yet(), table=table).update(dealer_id=user.pk)
        change = DealerChange.objects.create(
            table=table,
            shoe=shoe,
            round=round,
            previous=previous,
            dealer_id=user.pk,
            previous_name=previous.get_username() if previous is not None else "",
            dealer_name=user.get_username(),
            how=how,
            command=command,
            mid_shoe=shoe is not None and shoe.cards_drawn > 0,
        )
    log.info(
        "table %s: dealer %s takes over from %s (%s%s)",
        table_id,
        user.get_username(),
        change.previous_name or "nobody",
        how,
        " mid-shoe" if change.mid_shoe else "",
    )
    return change


def on_tablet_opened(table_id: int, user: AbstractBaseUser | AnonymousUser) -> None:
    """A user opened the table's tablet: a dealer takes the table over."""
    if is_dealer(user):
        assert isinstance(user, AbstractBaseUser)  # is_dealer: authenticated
        take_over(table_id, user, DealerChange.How.TABLET_OPENED)


def after_command(
    table_id: int, user: AbstractBaseUser | AnonymousUser, command: str | None
) -> None:
    """A tablet command succeeded: one that deals makes its user the dealer."""
    if command in DEALING_COMMANDS and user.is_authenticated:
        assert isinstance(user, AbstractBaseUser)
        take_over(table_id, user, DealerChange.How.COMMAND, command)
