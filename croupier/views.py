"""The croupier's HTTP side: the tablet's pages (login, the tables, the tablet) for staff
with a tablet role, and the input for card readers that post instead of keeping a
websocket open."""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import wraps

from axes.helpers import get_client_ip_address
from django.contrib.auth.views import LoginView, LogoutView, redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from croupier.consumers import reader_table, scan_error, scan_reply
from tablehub import attempts
from tablehub.consumers import MAX_FRAME, Refused, decode_frame
from tablehub.models import Table
from tablehub.roles import APPROVER_ROLES, TABLET_ROLES, has_role, works_table

log = logging.getLogger("tablehub.croupier")

# The card's body and replies as the schema shows them (docs/protocol.md, "Card reader"); the
# view reads the raw body itself (the websocket frame's checks), so these only document it.
_CARD = inline_serializer(
    "ShoeCard",
    fields={
        "type": serializers.ChoiceField(choices=["card"], required=False),
        "seq": serializers.IntegerField(min_value=1, help_text="the reader's own card number"),
        "card": serializers.CharField(help_text='rank + suit, e.g. "8S"'),
        "burn": serializers.BooleanField(required=False, default=False),
    },
)
_SCAN_ERROR = inline_serializer(
    "ShoeScanError",
    fields={"code": serializers.CharField(), "message": serializers.CharField()},
    required=False,
)
_SCAN = inline_serializer(
    "ShoeScan",
    fields={
        "type": serializers.ChoiceField(choices=["scan"]),
        "ok": serializers.BooleanField(),
        "duplicate": serializers.BooleanField(required=False),
        "seq": serializers.IntegerField(required=False, allow_null=True),
        "error": _SCAN_ERROR,  # a refusal only
    },
)


class TabletLoginView(LoginView):
    """Django's login with the tablet's page; afterwards the list of tables (or ``next``)."""

    template_name = "croupier/login.html"
    next_page = "croupier:tables"  # a URL name: the redirect goes through resolve_url


class TabletLogoutView(LogoutView):
    """Log out (POST, as Django requires) and back to the tablet's login."""

    next_page = "croupier:login"


def tablet_staff(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Logged-out users go to the login; users without a tablet role get 403."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path(), reverse("croupier:login"))
        if not has_role(request.user, TABLET_ROLES):
            log.warning("croupier pages refused for %s", request.user.get_username())
            return render(request, "croupier/forbidden.html", status=403)
        return view(request, *args, **kwargs)

    return wrapped


@tablet_staff
def tables(request: HttpRequest) -> HttpResponse:
    # Dealers and supervisors see the tables they work (the socket admits only those).
    tables = [t for t in Table.objects.order_by("name") if works_table(request.user, t)]
    return render(request, "croupier/tables.html", {"tables": tables})


@tablet_staff
def tablet(request: HttpRequest, table_id: int) -> HttpResponse:
    table = get_object_or_404(Table, pk=table_id)
    if not works_table(request.user, table):
        log.warning("tablet %s refused for %s", table.pk, request.user.get_username())
        return render(request, "croupier/forbidden.html", status=403)
    config = {
        "table": table.pk,
        "boxes": table.boxes,
        "socket": f"/ws/tables/{table.pk}/croupier/",
        "login": reverse("croupier:login") + f"?next={request.path}",
    }
    context = {
        "table": table,
        "config": config,
        "approver": has_role(request.user, APPROVER_ROLES),
        "ranks": [("A", "A"), *((str(n), str(n)) for n in range(2, 10)), ("T", "10")]
        + [("J", "J"), ("Q", "Q"), ("K", "K")],
        "suits": [
            ("S", "♠ " + gettext("spades")),
            ("H", "♥ " + gettext("hearts")),
            ("D", "♦ " + gettext("diamonds")),
            ("C", "♣ " + gettext("clubs")),
        ],
    }
    return render(request, "croupier/tablet.html", context)


class ShoeCardView(APIView):
    """POST {"seq": 12, "card": "8S", "burn": false} with ``Authorization: Reader <key>``.

    The body passes the same checks as a websocket frame (tablehub.consumers.decode_frame:
    at most 4 KiB of JSON, not nested deeply, no NUL); every refusal is a 4xx with
    ``{"type": "scan", "ok": false, "error": {"code", "message"}}`` and changes nothing."""

    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(
        summary="A card from the card reader",
        description="`Authorization: Reader <key>`; the same body as the reader's websocket "
        '`card` message (docs/protocol.md, "Card reader"). The card is never echoed.',
        request=_CARD,
        responses={
            200: _SCAN,
            400: OpenApiResponse(_SCAN, description="refused; nothing changed"),
            401: OpenApiResponse(_SCAN, description="a wrong reader key"),
            429: OpenApiResponse(_SCAN, description="too_many_attempts: wrong keys locked out"),
        },
        examples=[OpenApiExample("a card", value={"seq": 42, "card": "8S"}, request_only=True)],
        auth=[],
    )
    def post(self, request: Request, table_id: int) -> Response:
        header = request.headers.get("Authorization", "")
        key = header.removeprefix("Reader ").strip() if header.startswith("Reader ") else ""
        table = reader_table(table_id, key, get_client_ip_address(request) or "")
        if not isinstance(table, Table):
            code, message = table
            status = 429 if code == attempts.CODE else 401
            return Response(scan_error(None, code, message), status=status)
        if len(request.body) > MAX_FRAME:
            message = f"a card's body holds at most {MAX_FRAME} bytes"
            return Response(scan_error(None, "bad_message", message), status=400)
        try:
            content = decode_frame(request.body.decode("utf-8"))
        except UnicodeDecodeError:
            return Response(scan_error(None, "bad_json", "the body is not UTF-8"), status=400)
        except Refused as exc:
            return Response(scan_error(None, exc.code, exc.message), status=400)
        if not isinstance(content, dict):
            return Response(scan_error(None, "bad_message", "send a JSON object"), status=400)
        reply = scan_reply(table, content)
        return Response(reply, status=200 if reply["ok"] else 400)
