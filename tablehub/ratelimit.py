"""A per-connection rate limit for the table's websockets (station, card reader, tablet).

Two token buckets per connection, both fed by every frame the client sends (valid or not):

* the *serve* bucket, ``rate`` frames per second sustained with bursts of up to ``burst``:
  a frame that finds it empty is refused with the error code ``rate_limited`` and nothing
  else is done (it is not applied, and not kept under its ``client_id``: send it again
  later);
* the *flood* bucket, ``flood`` times larger (``rate * flood`` per second, bursts of
  ``burst * flood``): a frame that finds it empty closes the connection with the close
  code 4429. A client that keeps sending at five times the limit is cut off after about
  ``burst * flood`` frames; one that only bursts now and then is never closed.

The card reader's burst is larger (100): a reader that lost its connection may send the
cards it kept at once when it is back.

The limits are per kind of connection, ``DEFAULT_LIMITS`` overridden by the setting
``TABLEHUB_RATE_LIMITS`` (``{"station": {"rate": 20, "burst": 40, "flood": 5}}``); a
``rate`` of 0 or None switches the limit off for that kind. The buckets use the monotonic
clock and keep their state on the consumer: no database, no shared state, no I/O.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings

CLOSE_FLOODING = 4429
DEFAULT_LIMITS: dict[str, dict[str, float]] = {
    "station": {"rate": 20.0, "burst": 40.0, "flood": 5.0},
    # A card reader may send a round's buffered cards at once after a network glitch.
    "shoe": {"rate": 20.0, "burst": 100.0, "flood": 5.0},
    "tablet": {"rate": 20.0, "burst": 40.0, "flood": 5.0},
}


class Verdict(enum.Enum):
    SERVE = "serve"  # handle the frame
    REFUSE = "refuse"  # answer rate_limited, do nothing else
    CLOSE = "close"  # close the connection with 4429


class TokenBucket:
    """``rate`` tokens a second up to ``capacity``; ``take`` spends one if there is one."""

    def __init__(self, rate: float, capacity: float, now: float) -> None:
        self.rate = float(rate)
        self.capacity = float(capacity)
        self.tokens = float(capacity)
        self.stamp = now

    def take(self, now: float) -> bool:
        elapsed = max(now - self.stamp, 0.0)
        self.stamp = now
        self.tokens = min(self.capacity, self.tokens + elapsed * self.rate)
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


@dataclass
class ConnectionLimiter:
    """The two buckets of one connection (see the module docstring)."""

    serve: TokenBucket | None
    flood: TokenBucket | None
    clock: Callable[[], float] = time.monotonic
    served: int = 0
    refused: int = 0

    def check(self) -> Verdict:
        if self.serve is None or self.flood is None:
            self.served += 1
            return Verdict.SERVE
        now = self.clock()
        if not self.flood.take(now):
            return Verdict.CLOSE
        if not self.serve.take(now):
            self.refused += 1
            return Verdict.REFUSE
        self.served += 1
        return Verdict.SERVE


def limits(kind: str) -> dict[str, Any]:
    """The limits of one kind of connection: the defaults, overridden by the settings."""
    merged = dict(DEFAULT_LIMITS.get(kind, DEFAULT_LIMITS["station"]))
    merged.update(getattr(settings, "TABLEHUB_RATE_LIMITS", {}).get(kind, {}))
    return merged


def for_connection(kind: str, clock: Callable[[], float] = time.monotonic) -> ConnectionLimiter:
    """A fresh limiter for a new connection of ``kind`` (``station``, ``shoe``, ``tablet``)."""
    config = limits(kind)
    rate, burst, flood = config.get("rate"), config.get("burst"), config.get("flood") or 5.0
    if not rate:
        return ConnectionLimiter(None, None, clock)
    burst = burst or rate
    now = clock()
    return ConnectionLimiter(
        TokenBucket(rate, burst, now), TokenBucket(rate * flood, burst * flood, now), clock
    )
