"""The websocket Origin check: exact scheme, host and port (issue 17, finding 10).

A browser sends the page's origin with every websocket it opens; a page of another site (or
of the same host on another port or scheme) must not reach a station, reader or tablet
socket with the user's cookies. ``ExactOriginValidator`` is channels' ``OriginValidator``
against ``settings.ALLOWED_ORIGINS`` (full origins such as ``https://tables.example``;
tablehub/settings.py derives them from ALLOWED_HOSTS when unset), read per connection, plus
the origins of servers this process started itself (``allow_own``: the live replay's).
A connection without an Origin is refused, as before.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import ParseResult

from channels.security.websocket import OriginValidator
from django.conf import settings

_OWN: set[str] = set()


def allow_own(origin: str) -> None:
    """Accept ``origin`` too: a server this process serves its own pages from."""
    _OWN.add(origin)


class ExactOriginValidator(OriginValidator):
    def __init__(self, application: Any) -> None:
        super().__init__(application, [])

    def valid_origin(self, parsed_origin: ParseResult | None) -> bool:
        if parsed_origin is None:
            return False
        patterns = [*settings.ALLOWED_ORIGINS, *_OWN]
        return any(self.match_allowed_origin(parsed_origin, pattern) for pattern in patterns)
