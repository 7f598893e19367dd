"""The embedded default's channel layer: channels' in-memory layer with a cheaper sweep.

``InMemoryChannelLayer`` sweeps every channel and every group member for expired messages
on each receive and send; with hundreds of stations that is work proportional to the table
for every message of every station. Expiry is about minutes (a message nobody read for 60
seconds), so sweeping at most once a second changes nothing that can be observed.
"""

from __future__ import annotations

import time

from channels.layers import InMemoryChannelLayer

SWEEP_SECONDS = 1.0


class TableChannelLayer(InMemoryChannelLayer):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._last_sweep = 0.0

    def _clean_expired(self) -> None:
        now = time.monotonic()
        if now - self._last_sweep < SWEEP_SECONDS:
            return
        self._last_sweep = now
        # A private method of InMemoryChannelLayer, which the stubs leave out.
        super()._clean_expired()  # type: ignore[misc]
