"""The websocket Origin check is exact: scheme, host and port (issue 17, finding 10;
tablehub/origins.py). It used to accept any scheme and port of an allowed host."""

import pytest
from channels.testing import WebsocketCommunicator

from tablehub.asgi import application
from tablehub.settings import default_origins


@pytest.fixture
def production_origins(settings):
    settings.ALLOWED_HOSTS = ["tables.example", "127.0.0.1"]
    settings.ALLOWED_ORIGINS = ["https://tables.example", "http://127.0.0.1:8000"]


# The socket needs no database to accept, but channels closes the sync thread's old
# connections on every message it dispatches: one an earlier test of this process left open
# is checked then, which needs database access.
@pytest.mark.django_db
@pytest.mark.parametrize(
    "origin, accepted",
    [
        ("https://tables.example", True),
        ("https://tables.example:443", True),
        ("http://127.0.0.1:8000", True),
        ("http://tables.example", False),  # another scheme
        ("https://tables.example:8443", False),  # another port
        ("http://127.0.0.1:8001", False),
        ("http://127.0.0.1", False),
        ("https://evil.tables.example", False),
        ("https://tables.example.evil", False),
        ("null", False),
        (None, False),
    ],
)
async def test_only_an_exact_origin_opens_a_socket(production_origins, origin, accepted):
    headers = [] if origin is None else [(b"origin", origin.encode())]
    # The station socket needs no database to accept: the join comes later.
    ws = WebsocketCommunicator(application, "/ws/tables/1/station/", headers=headers)
    connected, _ = await ws.connect()
    assert connected is accepted, origin
    await ws.disconnect()


def test_the_default_origins_are_https_in_production_and_the_demo_port_with_debug():
    hosts = ["tables.example", ".casino.example", "*"]
    assert default_origins(hosts, False, "8000") == [
        "https://tables.example",
        "https://.casino.example",
    ]
    assert default_origins(["127.0.0.1"], True, "8000") == [
        "http://127.0.0.1",
        "http://127.0.0.1:8000",
    ]
