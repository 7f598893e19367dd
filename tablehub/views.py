"""Project-level views: the front door (``/``), the health check, and the API's answer for a
path it does not have."""

import logging

from channels.layers import get_channel_layer
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from django.views.defaults import page_not_found

from tablehub import program
from tablehub.front_door import table_entries

logger = logging.getLogger("tablehub")


@never_cache
@require_GET
def front_door(request: HttpRequest) -> HttpResponse:
    """What this server is, and each table with its status and each role's links."""
    return render(request, "front_door.html", {"entries": table_entries()})


@never_cache
@require_GET
def health(request: HttpRequest) -> JsonResponse:
    """Report the database vendor and channel layer after a trivial DB query.

    Answers 200 when the database answers, 503 with an ``error`` field when not. ``install``
    is the last program authentication (tablehub/program.py; null: none has run).
    """
    layer = get_channel_layer()
    body: dict[str, object] = {
        "status": "ok",
        "database": connection.vendor,
        "channel_layer": type(layer).__name__ if layer is not None else None,
    }
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        logger.exception("health check: database query failed")
        body.update(status="error", error=f"database: {type(exc).__name__}")
        return JsonResponse(body, status=503)
    body["install"] = program.as_data(program.last_check())
    return JsonResponse(body)


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A path no URL matches (``handler404``): under /api/ the API's error shape (e.g. a
    negative id, which no route takes), elsewhere Django's page."""
    if request.path.startswith("/api/"):
        message = f"no such resource: {request.path}"
        return JsonResponse({"error": {"code": "not_found", "message": message}}, status=404)
    return page_not_found(request, exception)
