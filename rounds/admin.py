"""Admin for rounds: read only, with the game recall (rounds/recall.py) on each round's page.

Rounds, their events, bets and hands are written only by the round writer; nobody edits
or deletes them here."""

from __future__ import annotations

import json

from django.contrib import admin
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html

from rounds.models import Round, RoundEvent
from rounds.recall import recall, shown_payload
from tablehub.read_only_admin import ReadOnlyAdmin


@admin.register(Round)
class RoundAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "table",
        "config_version",
        "dealer",
        "phase",
        "created_at",
        "settled_at",
    )
    list_filter = ("table", "phase", "dealer")
    date_hierarchy = "created_at"
    list_select_related = ("table", "config", "dealer")
    search_fields = ("=id",)
    fields = ("table", "config", "dealer", "phase", "created_at", "settled_at", "api", "record")
    readonly_fields = fields
    show_full_result_count = False  # the count of a long history is not worth its query

    @admin.display(description="config", ordering="config__version")
    def config_version(self, obj: Round) -> str:
        return f"v{obj.config.version}"

    @admin.display(description="as JSON")
    def api(self, obj: Round):
        url = reverse("api-round", args=[obj.pk])
        return format_html('<a href="{}">{}</a>', url, url)

    @admin.display(description="game recall")
    def record(self, obj: Round):
        data = recall(obj)
        for event in data["events"]:
            event["payload_text"] = json.dumps(event["payload"], sort_keys=True)
            event["public_text"] = "; ".join(
                json.dumps(m, sort_keys=True) for m in event.get("public", [])
            )
        return render_to_string("admin/rounds/recall.html", {"recall": data})


@admin.register(RoundEvent)
class RoundEventAdmin(ReadOnlyAdmin):
    list_display = ("round", "seq", "kind", "created_at")
    list_filter = ("kind",)
    list_select_related = ("round__table",)
    search_fields = ("=round__id",)
    show_full_result_count = False
    # The payload as the game recall shows it, never the raw row: while the round is in
    # play the hole card is face down here too (docs/recall.md).
    fields = ("round", "seq", "kind", "created_at", "payload_shown")
    readonly_fields = fields

    def lookup_allowed(self, lookup, value, request=None) -> bool:
        # ?payload__card=7C would count the rows holding the hole card
        return lookup.split("__")[0] != "payload" and super().lookup_allowed(lookup, value, request)

    @admin.display(description="payload")
    def payload_shown(self, obj: RoundEvent) -> str:
        return json.dumps(shown_payload(obj), sort_keys=True)
