"""Failed credential attempts, limited per credential and per address (issue 17, finding 10).

A station's credential and a table's reader key are 256-bit random tokens: guessing one is
hopeless, but nothing should let anyone try without limit. Every failed station join,
reader ``hello`` (websocket) and reader card over HTTP counts against

* its credential (the station at its table, or the table's reader key): at most
  ``per_credential`` failures in ``credential_seconds`` (default 20 a minute), and
* the address it came from (all credentials and logins together): at most ``per_address``
  failures in ``address_seconds`` (default 30 in 15 minutes).

Over either limit an attempt is refused with ``too_many_attempts`` (HTTP 429) before the
credential is checked, until the window that counted the failures ends. The credential's
window is short on purpose: anyone can spend a station's budget, so a locked credential
frees itself within a minute; the address limit is what stops one guesser. Failed logins
count against their address too (tablehub/auth.py; django-axes locks the pair username
and address).

The counts live in Django's cache, which is Redis when REDIS_URL is set (shared by every
server process) and the process's memory otherwise. Limits: setting
``TABLEHUB_ATTEMPT_LIMITS`` (keys as in ``DEFAULT_LIMITS``).
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from django.conf import settings
from django.core.cache import cache

log = logging.getLogger("tablehub.attempts")

DEFAULT_LIMITS = {
    "per_credential": 20,
    "credential_seconds": 60,
    "per_address": 30,
    "address_seconds": 900,
}
CODE = "too_many_attempts"


def limits() -> dict[str, int]:
    return DEFAULT_LIMITS | getattr(settings, "TABLEHUB_ATTEMPT_LIMITS", {})


def _credential_key(kind: str, credential: str) -> str:
    digest = hashlib.sha256(f"{kind}\x00{credential}".encode()).hexdigest()[:32]
    return f"attempts:credential:{digest}"


def _address_key(address: str) -> str:
    return f"attempts:address:{address}"


def address_of(scope: Any) -> str:
    """The client's address of a websocket's ASGI scope ("" when unknown)."""
    client = scope.get("client") if hasattr(scope, "get") else None
    return str(client[0]) if client else ""


def too_many(kind: str, credential: str | None, address: str) -> str | None:
    """Why an attempt is refused before it is checked, or None when it may be checked."""
    config = limits()
    keys = [_address_key(address)] if address else []
    if credential is not None:
        keys.append(_credential_key(kind, credential))
    counts = cache.get_many(keys)
    if address and counts.get(_address_key(address), 0) >= config["per_address"]:
        return "too many failed attempts from this address: try again later"
    if (
        credential is not None
        and counts.get(_credential_key(kind, credential), 0) >= config["per_credential"]
    ):
        return f"too many failed attempts for this {kind}: try again later"
    return None


def failed(kind: str, credential: str | None, address: str) -> None:
    """Count one failed attempt against its credential and its address."""
    config = limits()
    counted = []
    if credential is not None:
        counted.append((_credential_key(kind, credential), config["credential_seconds"]))
    if address:
        counted.append((_address_key(address), config["address_seconds"]))
    for key, seconds in counted:
        cache.add(key, 0, timeout=seconds)  # the window starts at the first failure
        try:
            cache.incr(key)
        except ValueError:  # expired in between: a new window
            cache.set(key, 1, timeout=seconds)
    log.info("failed %s attempt from %s", kind, address or "an unknown address")
