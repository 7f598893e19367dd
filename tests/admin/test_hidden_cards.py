"""Issue 17, requirement 2: while the dealer's hole card is face down, no admin page, API
endpoint or page, and neither the tablet's nor a station's state names it, whoever asks.

A round is dealt at a table with a cut card (the shoe counts every copy drawn) through the
card reader's input; the hole card is 7C, no other card of the round is a 7 or a club, and
the virtual shoe's next card is 7D. Every admin changelist, change and history page of
every registered model, every other URL of the site with real ids in it (the API, the
tablet's and the station's pages) and the two sockets' states are read as every role, and
searched for the hole card and the undealt card in each form the code writes a card in;
the admin's filters on JSON fields are tried with them. Once the hole card is turned, the
same search finds it (so the search can fail)."""

from __future__ import annotations

import re
from decimal import Decimal
from itertools import product

import pytest
from django.contrib import admin
from django.db.models import JSONField
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from croupier import tablet
from croupier.services import current_shoe, scan
from rounds import corrections, writer
from rounds.engine import Decision
from rounds.models import Round, RoundEvent
from stations import commands
from stations.commands import place_bets
from tablehub.models import Report, Shoe, Table, TableConfig

pytestmark = pytest.mark.django_db

HOLE = "7C"
NEXT = "7D"  # the virtual shoe's next card: undealt
CONTROL = "7S"  # a card of no round, never dealt: a page may name it, as often as the hole
SUITS = {"S": ("♠", "2660", "spades"), "H": ("♥", "2665", "hearts"),
         "D": ("♦", "2666", "diamonds"), "C": ("♣", "2663", "clubs")}  # fmt: skip


def forms(card: str) -> re.Pattern:
    """Each form the code writes ``card`` in: the text ("7C", as a token, not inside an id, a
    hash or a colour), and the pages' and scripts' symbols and words."""
    rank, (symbol, code, name) = card[0], SUITS[card[1]]
    word = {"7": "seven"}[rank]
    return re.compile(
        rf"(?<![A-Za-z0-9]){card}(?![A-Za-z0-9])|{rank}\s*{symbol}|{rank}\s*\\u{code}"
        rf"|{rank}\s*&{name};|{word} of {name}|{rank} of {name}",
        re.IGNORECASE,
    )


ROLES = ("superuser", "floor_manager", "auditor", "supervisor", "dealer", None)  # None: nobody
# Box 1 9S 8H (17), box 2 TH 6S (16), the dealer 5D up and the hole card.
DEAL = ["9S", "TH", "5D", "8H", "6S", HOLE]


@pytest.fixture
def dealt(table, settings):
    """A settled round (a past one to read), then the round in play: the hole card down (and
    corrected to itself), the stations asked to play."""
    settings.DEBUG = False  # the pages as production serves them
    Table.objects.filter(pk=table.pk).update(shuffler=Table.Shuffler.CUT_CARD)
    table.refresh_from_db()
    s1, s2 = table.stations.get(name="s1"), table.stations.get(name="s2")
    past = deal_round(table, s1, s2, ["8S", "2D", "KD", "QS", "3H", "4S"])
    writer.record(past.pk, Decision("s1", "stand"))
    writer.record(past.pk, Decision("s2", "stand"))
    read_card(table, "JH")  # the dealer: K 4 J, 24, bust
    past.refresh_from_db()
    assert past.phase == Round.Phase.SETTLED
    Report.objects.create(table=table, start=past.created_at, end=past.settled_at)
    live = deal_round(table, s1, s2, DEAL)
    # A supervisor's correction that names the hole card (twice: it was, and is, 7C).
    corrections.correct_cards(live.pk, [{"position": 6, "card": HOLE}], by="sup")
    live.refresh_from_db()
    shoe = current_shoe(table)
    shoe.virtual_order = {"cards": [NEXT], "start": shoe.reader_seq, "round": live.pk}
    shoe.save(update_fields=["virtual_order"])
    engine = writer.state(live.pk)
    assert str(engine.dealer[1]) == HOLE and not engine.hole_revealed
    assert live.phase == Round.Phase.PLAY and "s1" in engine.prompted_stations
    # The walk takes longer than a decision's time: no timeout may play the round meanwhile.
    Round.objects.filter(pk=live.pk).update(deadline=None)
    return live


def deal_round(table, s1, s2, cards):
    round = writer.open_round(table)
    place_bets(s1, [(1, "main", Decimal("10"))])
    place_bets(s2, [(2, "main", Decimal("10"))])
    writer.close_bets(round.pk)
    for card in cards:
        read_card(table, card)
    round.refresh_from_db()
    return round


def read_card(table, card):
    assert not scan(table, current_shoe(table).reader_seq + 1, card)["duplicate"]


# -- the walk ----------------------------------------------------------------------------------


def admin_urls() -> list[str]:
    """Every registered model's changelist and its app's page, each object's change page
    and a history page."""
    urls = [reverse("admin:index")]
    for model in admin.site._registry:
        meta = model._meta
        urls.append(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
        urls.append(reverse("admin:app_list", args=[meta.app_label]))
        objects = list(model._default_manager.all()[:200])
        for n, obj in enumerate(objects):
            # a history page lists the admin's log entries (the same list for each object)
            for page in ("change", "history") if n == 0 else ("change",):
                urls.append(
                    reverse(f"admin:{meta.app_label}_{meta.model_name}_{page}", args=[obj.pk])
                )
    return sorted(set(urls))


def site_urls(table) -> list[str]:
    """Every other route of the site (the API, the schema, the tablet's and station's pages),
    with each id it takes filled in with every real id."""
    values = {
        "table_id": [table.pk],
        "round_id": list(Round.objects.values_list("pk", flat=True)),
        "station_id": list(table.stations.values_list("pk", flat=True)),
        "station_name": list(table.stations.values_list("name", flat=True)),
        "version": list(TableConfig.objects.values_list("version", flat=True)),
        "report_id": list(Report.objects.values_list("pk", flat=True)),
        "shoe_id": list(Shoe.objects.values_list("pk", flat=True)),
        "language": ["en", "es"],
    }
    urls = []
    for route in _routes(get_resolver().url_patterns, ""):
        if route.startswith("admin/") or route.startswith("^"):
            continue  # the admin is walked model by model; regex routes serve static files
        names = re.findall(r"<(?:\w+:)?(\w+)>", route)
        for chosen in product(*(values[n] for n in names)):
            path = route
            for name, value in zip(names, chosen, strict=True):
                path = re.sub(rf"<(?:\w+:)?{name}>", str(value), path)
            urls.append("/" + path)
    return sorted(set(urls))


def _routes(patterns, prefix: str):
    for p in patterns:
        if isinstance(p, URLResolver):
            yield from _routes(p.url_patterns, prefix + str(p.pattern))
        elif isinstance(p, URLPattern):
            yield prefix + str(p.pattern)


def read_everything(table, users, roles=ROLES, urls=None) -> dict[str, str]:
    """Every page (or ``urls``) and state as each of ``roles``: {"role url": the text}."""
    seen = {}
    urls = urls if urls is not None else admin_urls() + site_urls(table)
    for role in roles:
        client = Client()
        if role is not None:
            client.force_login(users[role])
        for url in urls:
            for query in ("", "?format=json") if url.startswith("/api/") else ("",):
                response = client.get(url + query)
                assert response.status_code < 500, (role, url, response.status_code)
                seen[f"{role} {url}{query}"] = response.content.decode(errors="replace")
    for role in {"dealer", "supervisor", "floor_manager"} & set(roles):
        reply = tablet.handle(table, users[role], {"type": "state", "client_id": "s"})
        assert reply["ok"], reply
        seen[f"{role} tablet state"] = repr(reply)
    for station in table.stations.all():
        ask = {"type": "state", "client_id": f"s{len(seen)}"}  # new: a resent id gets the old reply
        reply = commands.handle(station, ask)
        assert reply["ok"], reply
        seen[f"station {station.name} state"] = repr(reply)
    return seen


def lookups(card: str) -> list[str]:
    """Changelist filters on every JSON field of every registered model that would find rows
    holding ``card`` (Django's admin allows lookups on a model's own fields)."""
    queries = []
    for model in admin.site._registry:
        meta = model._meta
        url = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
        for field in meta.get_fields():
            if isinstance(field, JSONField):
                name = field.name
                for query in (
                    f"card={card}",
                    f"has_key={card}",
                    f"{card}__gte=1",
                    f"0={card}",
                    f"cards__0={card}",
                ):
                    queries.append(f"{url}?{name}__{query}")
    return queries


# The admin's user page shows the start of the password's random salt and hash, masked
# (``django.contrib.auth.hashers.mask_hash``: "7d/AbC*****"); CI once read "7d" there.
MASKED = re.compile(r"[A-Za-z0-9+/=]*\*{3,}")


def naming(seen: dict[str, str], card: str = HOLE) -> list[str]:
    """What names ``card`` more often than a card of no round (a page listing every card,
    such as the tablet's card picker, names both as often); not in a masked hash."""
    hole, control = forms(card), forms(CONTROL)
    found = []
    for key, text in seen.items():
        text = MASKED.sub("", text)
        if len(hole.findall(text)) > len(control.findall(text)):
            found.append(key)
    return sorted(found)


def test_nothing_names_the_face_down_hole_card_to_anyone(dealt, table, users):
    seen = read_everything(table, users)
    assert naming(seen, HOLE) == [] and naming(seen, NEXT) == []
    for role in ("superuser", "floor_manager", "auditor"):
        client = Client()
        client.force_login(users[role])
        hidden = lookups(HOLE) + lookups(NEXT)
        for hole, control in zip(hidden, lookups(CONTROL) * 2, strict=True):
            found, other = client.get(hole), client.get(control)
            assert found.status_code == other.status_code, (role, hole)
            rows = found.content.decode().count("<tr"), other.content.decode().count("<tr")
            assert rows[0] == rows[1], (role, hole, rows)
    # The walk read what matters: the live round's pages and the shoe, with the other cards.
    hole_event = dealt.events.filter(kind=RoundEvent.Kind.CARD).order_by("seq").last()
    correction = dealt.events.get(kind=RoundEvent.Kind.CORRECTION)
    for url, shows in (
        (f"/admin/rounds/roundevent/{hole_event.pk}/change/", "face_down"),
        (f"/admin/rounds/roundevent/{correction.pk}/change/", "face_down"),
        (f"/admin/rounds/round/{dealt.pk}/change/", "6S"),
        (f"/admin/tablehub/shoe/{current_shoe(table).pk}/change/", "6S"),
        (f"/api/rounds/{dealt.pk}/", "6S"),
    ):
        assert shows in seen[f"floor_manager {url}"], url
    assert "6S" in seen["dealer tablet state"] and "6S" in seen["station s2 state"]
    assert len(seen) > 500

    # The hole card turned: the same search finds it.
    writer.record(dealt.pk, Decision("s1", "stand"))
    writer.record(dealt.pk, Decision("s2", "stand"))
    assert writer.state(dealt.pk).hole_revealed
    urls = [
        f"/admin/rounds/roundevent/{hole_event.pk}/change/",
        f"/admin/rounds/roundevent/{correction.pk}/change/",
        f"/admin/rounds/round/{dealt.pk}/change/",
        f"/admin/tablehub/shoe/{current_shoe(table).pk}/change/",
        f"/api/rounds/{dealt.pk}/",
    ]
    shown = naming(read_everything(table, users, ("floor_manager",), urls))
    for url in urls:
        assert f"floor_manager {url}" in shown
    assert "floor_manager tablet state" in shown and "station s1 state" in shown
