"""How long a station's stored replies are kept (``StationCommand``, docs/protocol.md).

Every message a station sends keeps its reply under its ``client_id``, so that a message
sent again (a station that lost its connection before the reply came) is answered from it
and not applied twice. A stadium writes about three a station a round: 1000 stations at 60
rounds an hour store 180 000 replies an hour, each holding the station's state. Nothing
reads a reply once its station has stopped resending, and the game's record is the round's
events and the ledger (kept for good, docs/operations.md "Retention"), not the replies.

So replies older than ``TABLEHUB_KEEP_REPLIES_HOURS`` are deleted, oldest first, a chunk at
a time, by a periodic sweep (Celery beat in production, the embedded server's own loop
otherwise). Ids grow with time, so the old rows are the first ids: each chunk is a range of
the primary key, and a sweep with nothing to do is one read of the oldest row.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from stations.models import StationCommand

log = logging.getLogger("tablehub.stations")

CHUNK = 5000  # ids a delete covers: a short statement, never a long lock
MOST_CHUNKS = 200  # a sweep's bound (a million rows); the next sweep goes on


def forget_old_replies() -> int:
    """Delete the stored replies older than the setting's hours; how many were deleted."""
    cutoff = timezone.now() - timedelta(hours=settings.TABLEHUB_KEEP_REPLIES_HOURS)
    deleted = 0
    for _ in range(MOST_CHUNKS):
        oldest = StationCommand.objects.order_by("pk").values_list("pk", "created_at").first()
        if oldest is None or oldest[1] >= cutoff:
            break
        first = oldest[0]
        count, _by_model = StationCommand.objects.filter(
            pk__gte=first, pk__lt=first + CHUNK, created_at__lt=cutoff
        ).delete()
        deleted += count
    if deleted:
        log.info("forgot %d stored replies from before %s", deleted, cutoff.isoformat())
    return deleted
