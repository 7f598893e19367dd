"""ASGI entry point: HTTP through Django, websockets through channels."""

import gc
import os
import sys

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tablehub.settings")

# Set up Django (and load the apps) before importing anything that uses models.
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter

from tablehub.direct_send import DirectSend
from tablehub.frame_stamps import StampFrames
from tablehub.origins import ExactOriginValidator
from tablehub.plain_frames import install as read_plain_frames
from tablehub.program import check_at_start
from tablehub.routing import websocket_urlpatterns
from tablehub.sockets import install as stamp_and_send_at_once

# Frames stamped with the kernel's receipt time, and sent at once (tablehub/sockets.py).
stamp_and_send_at_once()
# A station's plain text frames read without autobahn's work per frame (tablehub/plain_frames.py).
read_plain_frames()

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        # types-channels wants its own URLPattern subtype, which django-stubs' path() does
        # not return.
        # The Origin must be one of ALLOWED_ORIGINS: scheme, host and port (tablehub/origins.py).
        # Every frame is stamped as the server reads it (tablehub/frame_stamps.py), and
        # written straight to the connection where it can be (tablehub/direct_send.py).
        "websocket": DirectSend(
            StampFrames(
                ExactOriginValidator(URLRouter(websocket_urlpatterns))  # type: ignore[arg-type]
            )
        ),
    }
)

# Program authentication at start-up (tablehub/program.py; TABLEHUB_VERIFY_INSTALL_AT_START).
check_at_start()

# The event loop lets go of the GIL at every socket call and waits to take it back while the
# database thread works through a batch: at Python's default switch interval (5 ms) each
# such wait can last 5 ms. At 1 ms the decision burst's p99 at 1000 stations was 20 to 27 %
# lower in three paired runs (docs/benchmarks.md), for the same CPU per message.
sys.setswitchinterval(0.001)

# Everything loaded at start-up lives as long as the process: keep it out of the garbage
# collector's full passes, whose pauses otherwise show up as the slowest fan-outs.
gc.freeze()

# A young collection after 10 000 new objects, not Python's 700: a burst's short-lived
# objects (messages, replies, rows) then die young instead of being promoted, and the full
# collections they triggered stop. At 1000 stations on the production stack the server ran
# 8 to 11 full collections of 220 to 260 ms in a run of the burst benchmark, each a pause of
# the event loop; one landing on a step's deadline delays the reading of answers, and a
# frame read late with another one behind it is stamped late (tablehub/sockets.py): 1 to 4
# on-time answers were lost in each of 4 runs. At 10 000: one full collection a run (51 to
# 75 ms), young ones at most 72 ms, and 25 % less CPU per message; 1 of 8 runs still lost
# answers, to a stall that was not a collection (docs/benchmarks.md).
GC_YOUNG_THRESHOLD = 10_000
gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
