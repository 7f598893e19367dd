"""Websocket URL routes: the station protocol and the card reader (docs/protocol.md), the
croupier tablet (docs/croupier.md).

Only the tablet logs in with a Django session; stations and readers present a device
credential in their first message. So only the tablet's route has the session and auth
middleware, which otherwise looks at the session on every message sent to every station.
"""

from channels.auth import AuthMiddlewareStack
from django.urls import path

from croupier.consumers import CroupierConsumer, ShoeConsumer
from stations.consumers import StationConsumer

# django-stubs' path() takes only Django views, not the ASGI applications that channels'
# URLRouter routes to: hence the arg-type ignores.
websocket_urlpatterns = [
    path("ws/tables/<int:table_id>/station/", StationConsumer.as_asgi()),  # type: ignore[arg-type]
    path("ws/tables/<int:table_id>/shoe/", ShoeConsumer.as_asgi()),  # type: ignore[arg-type]
    path(
        "ws/tables/<int:table_id>/croupier/",
        AuthMiddlewareStack(CroupierConsumer.as_asgi()),  # type: ignore[arg-type]
    ),
]
