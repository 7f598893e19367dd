"""A dispute table: one deck (so a second copy of a card is impossible), two stations with
100.00 each, a dealer and a supervisor; every action runs its on-commit work (broadcasts,
the next round) and each message the table sends is kept, with whom it went to."""

import pytest
from django.contrib.auth.models import Group, User

from croupier import tablet
from payouts import ledger
from payouts.models import LedgerEntry
from rounds import writer
from rounds.engine import RuleSet
from rounds.models import Round, RoundEvent
from stations.commands import handle as station_handle
from stations.models import Station
from stations.services import cash_in
from tablehub import broadcast, roles
from tablehub.models import Jurisdiction, Table, TableConfig


class Play:
    """Drives one table the way its stations and tablet do, through the real services."""

    def __init__(self, table, capture, sent):
        self.table = table
        self.capture = capture
        self.sent = sent
        self.ids = 0

    def station(self, name):
        return Station.objects.get(table=self.table, name=name)

    def _id(self):
        self.ids += 1
        return f"m{self.ids}"

    def send(self, name, **message):
        """A station's message; returns the reply."""
        with self.capture(execute=True):
            return station_handle(self.station(name), {"client_id": self._id(), **message})

    def tablet(self, user="dealer", **message):
        """A tablet message (as the dealer unless told); returns the reply."""
        with self.capture(execute=True):
            return tablet.handle(
                self.table, User.objects.get(username=user), {"client_id": self._id(), **message}
            )

    def run(self, function, *args, **kwargs):
        with self.capture(execute=True):
            return function(*args, **kwargs)

    def open(self, **bets):
        """Open a round and place main bets: ``s1=(1, "10")``; returns the round."""
        round = self.run(writer.open_round, self.table)
        for name, (box, amount) in bets.items():
            reply = self.send(name, type="place", box=box, amount=amount)
            assert reply["ok"], reply
        return round

    def close(self, round):
        self.run(writer.close_bets, round.pk)

    def deal(self, *cards):
        for card in cards:
            reply = self.tablet(type="manual_card", card=card)
            assert reply["ok"], reply

    def decide(self, name, action):
        reply = self.send(name, type="decide", action=action)
        assert reply["ok"], reply
        return reply

    def credits(self, name):
        return ledger.balance(self.station(name))

    def messages(self, to=None, round=None, since=0):
        """The event bodies sent (to "public" or a station), in order."""
        return [
            m
            for i, (r, _seq, dest, m) in enumerate(self.sent)
            if i >= since and (to is None or dest == to) and (round is None or r == round)
        ]


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def sent(monkeypatch):
    log = []

    def publish(table_id, round_id, seq, notices):
        for notice in notices:
            log.append((round_id, seq, notice.to, notice.message))

    monkeypatch.setattr(broadcast, "publish", publish)
    monkeypatch.setattr(broadcast, "tell_croupier", lambda table_id, message: None)
    return log


def make_table(window=60, allowed=True, is_open=False, decks=1, name="t1"):
    jurisdiction = Jurisdiction.objects.create(
        code=f"j-{name}",
        name=f"Jurisdiction {name}",
        disputes_allowed=allowed,
        dispute_window_seconds=window,
    )
    table = Table.objects.create(name=name, jurisdiction=jurisdiction, is_open=is_open)
    # The tablet staff work every dispute table (dealers open only their tables' tablets).
    table.staff.add(*User.objects.filter(username__in=["dealer", "boss"]))
    TableConfig.objects.create(
        table=table,
        version=1,
        rules=RuleSet(decks=decks).to_dict(),
        limits={"main": ["1", "100"], "special": ["1", "25"]},
        special_bets={"pair": {"suited_pair": 25, "pair": 8}},
    )
    for station_name in ("s1", "s2"):
        station = Station.objects.create(table=table, name=station_name)
        cash_in(station, "100", key=f"start-{station_name}")
    return table


def make_staff():
    for username, role in (("dealer", roles.DEALER), ("boss", roles.SUPERVISOR)):
        if User.objects.filter(username=username).exists():
            continue
        user = User.objects.create_user(username, password=f"{username}-pw")
        user.groups.add(Group.objects.get_or_create(name=role)[0])


@pytest.fixture
def play(db, sent, django_capture_on_commit_callbacks):
    make_staff()
    return Play(make_table(), django_capture_on_commit_callbacks, sent)


@pytest.fixture
def new_play(db, sent, django_capture_on_commit_callbacks):
    """Another table (another jurisdiction): ``new_play(window=0, allowed=True, ...)``."""
    make_staff()

    def make(**options):
        return Play(make_table(**options), django_capture_on_commit_callbacks, sent)

    return make


def _snapshot(round):
    """Everything a refused command must leave as it was."""
    round = Round.objects.get(pk=round.pk)
    return (
        RoundEvent.objects.filter(round=round).count(),
        sorted(LedgerEntry.objects.filter(round=round).values_list("key", "amount")),
        round.phase,
        round.step_key,
        round.deadline,
        round.last_seq,
    )


@pytest.fixture
def snapshot():
    return _snapshot
