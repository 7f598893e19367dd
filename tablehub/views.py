"""Project-level views: the front door (``/``), the health check, the pages' JavaScript
catalogs, and the API's answer for a path it does not have."""

import logging

from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.utils import translation
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from django.views.defaults import page_not_found
from django.views.i18n import JavaScriptCatalog

from tablehub import program
from tablehub.front_door import table_entries

logger = logging.getLogger("tablehub")

# The apps whose djangojs catalogs the station page's and the tablet's scripts use.
SCRIPT_PACKAGES = ["stations", "croupier"]


@never_cache
@require_GET
def front_door(request: HttpRequest) -> HttpResponse:
    """What this server is, and each table with its status and each role's links."""
    return render(request, "front_door.html", {"entries": table_entries()})


@require_GET
def javascript_catalog(request: HttpRequest, language: str) -> HttpResponseBase:
    """The station's and the tablet's words for their scripts (gettext, interpolate), in
    ``language``: the page names its own, since a station's setting may differ from the
    browser's (stations/views.py)."""
    if language not in dict(settings.LANGUAGES):
        raise Http404("no such language")
    with translation.override(language):
        return JavaScriptCatalog.as_view(packages=SCRIPT_PACKAGES)(request)


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
