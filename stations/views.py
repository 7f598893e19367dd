"""The reference player station page: a plain page that speaks the station websocket protocol
(docs/protocol.md) like station hardware does. The device credential never passes through
the server's HTML: the page reads it from the URL fragment or asks for it."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from stations.models import Station
from tablehub.models import Table


def station_page(request: HttpRequest, table_id: int, station_name: str) -> HttpResponse:
    table = get_object_or_404(Table, pk=table_id)
    station = get_object_or_404(Station, table=table, name=station_name, is_active=True)
    response = render(
        request,
        "stations/station.html",
        {
            "table": table,
            "station": station,
            "ws_path": f"/ws/tables/{table.pk}/station/",
        },
    )
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
