"""The reference player station page: a plain page that speaks the station websocket protocol
(docs/protocol.md) like station hardware does. The device credential never passes through
the server's HTML: the page reads it from the URL fragment or asks for it.

Its language (issue 19, point 6) is the station's own setting when the floor manager set one
in the admin, else the browser's (LocaleMiddleware); the page's JavaScript takes its words
from the catalog of that same language (tablehub/views.py, ``javascript_catalog``)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import translation

from stations.models import Station
from tablehub.models import Table


def station_page(request: HttpRequest, table_id: int, station_name: str) -> HttpResponse:
    table = get_object_or_404(Table, pk=table_id)
    station = get_object_or_404(Station, table=table, name=station_name, is_active=True)
    language = station.language or translation.get_language()
    with translation.override(language):
        response = render(
            request,
            "stations/station.html",
            {
                "table": table,
                "station": station,
                "ws_path": f"/ws/tables/{table.pk}/station/",
            },
        )
        response["Content-Language"] = translation.get_language()
    host = request.get_host()
    # Only this page's own script and style, and its own websocket: the credential kept in
    # sessionStorage is out of reach of anything injected.
    response["Content-Security-Policy"] = (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        f"connect-src 'self' ws://{host} wss://{host}; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    )
    response["Referrer-Policy"] = "no-referrer"
    response["Cache-Control"] = "no-store"
    return response
