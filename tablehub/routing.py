"""Websocket URL routes: the station protocol and the card reader (docs/protocol.md), the
croupier tablet (docs/croupier.md)."""

from django.urls import path

from croupier.consumers import CroupierConsumer, ShoeConsumer
from stations.consumers import StationConsumer

websocket_urlpatterns = [
    path("ws/tables/<int:table_id>/station/", StationConsumer.as_asgi()),
    path("ws/tables/<int:table_id>/shoe/", ShoeConsumer.as_asgi()),
    path("ws/tables/<int:table_id>/croupier/", CroupierConsumer.as_asgi()),
]
