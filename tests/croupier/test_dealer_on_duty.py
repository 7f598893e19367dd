"""The dealer on duty over the real tablet socket (croupier/dealers.py): a dealer opening
the tablet takes the table over, a supervisor opening it does not, a second dealer taking
over mid-shoe is logged and deals the next round, and each round records its dealer."""

import pytest
from django.contrib.auth.models import User

from croupier.models import DealerChange
from rounds.models import Round
from tablehub import roles
from tests.croupier.test_tablet_socket import (  # noqa: F401 (fixtures)
    bet,
    close_the_consumers_connection,
    db,
    fast_passwords,
    stack,
    staff,
    table,
    tablet,
)
from tests.helpers import ask


def changes(at):
    return [
        (c.previous.username if c.previous else None, c.dealer.username, c.how, c.mid_shoe)
        for c in DealerChange.objects.filter(table=at)
        .select_related("previous", "dealer")
        .order_by("pk")
    ]


def dealer_of(at, number):
    return Round.objects.select_related("dealer").get(table=at, number=number).dealer.username


@pytest.mark.django_db(transaction=True)
async def test_a_dealer_opening_the_tablet_takes_the_table_over(table):  # noqa: F811
    ws, frames = await tablet(table, "boss")  # a supervisor looks: nobody takes over
    assert await db(changes)(table) == []
    await ws.disconnect()

    ws, frames = await tablet(table, "dealer")
    assert await db(changes)(table) == [(None, "dealer", "tablet_opened", False)]
    assert (await ask(ws, frames, {"type": "open_table", "client_id": "o1"}))["ok"]
    await db(bet)(table, "b1", type="place", box=1, amount="10")
    await db(stack)(table, ["TS", "7H", "9C", "TD"])  # 19 against 17: s1 stands
    assert (await ask(ws, frames, {"type": "close_bets", "client_id": "c1"}))["ok"]
    for n in range(4):
        assert (await ask(ws, frames, {"type": "deal", "client_id": f"d{n}"}))["ok"]
    assert await db(dealer_of)(table, 1) == "dealer"

    # A second dealer opens the tablet while round 1 is being dealt: logged mid-shoe; round 1
    # keeps the dealer who started it.
    await db(staff)("relief", roles.DEALER)
    await db(lambda: table.staff.add(User.objects.get(username="relief")))()
    relief, relief_frames = await tablet(table, "relief")
    assert await db(changes)(table) == [
        (None, "dealer", "tablet_opened", False),
        ("dealer", "relief", "tablet_opened", True),
    ]
    assert await db(dealer_of)(table, 1) == "dealer"
    await db(bet)(table, "s1", type="decide", action="stand")  # round 1 settles, 2 opens
    assert await db(lambda: Round.objects.get(table=table, number=1).phase)() == "settled"
    assert await db(dealer_of)(table, 1) == "dealer"
    assert await db(dealer_of)(table, 2) == "relief"
    # The same dealer opening a second tablet changes nothing.
    again, _ = await tablet(table, "relief")
    assert len(await db(changes)(table)) == 2
    for socket in (ws, relief, again):
        await socket.disconnect()
