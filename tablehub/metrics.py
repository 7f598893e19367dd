"""Prometheus metrics of the table, served at ``/metrics`` with django-prometheus' own
(docs/operations.md, "Metrics"). Each server process counts its own: scrape every daphne
process (and the embedded server) directly, not through the load balancer.

* ``tablehub_station_message_seconds{type}``: from a station message's receipt (its frame
  stamped) to its reply being sent; ``type="decide"`` is the decision latency;
* ``tablehub_fanout_seconds`` and ``tablehub_fanout_frames_total``: handing one commit's
  events to this process's sockets at a table, and the frames written;
* ``tablehub_timer_lateness_seconds{step}``: how long after its deadline a step's expiry was
  applied (by its timer, or by a command that came after the deadline);
* ``tablehub_connected_stations{table}``: the joined station sockets of this process;
* ``tablehub_round_engines_total{how}``: round engines this process had to build, its cache
  not holding the current one: ``replayed`` (the whole log: after a restart, a correction)
  or ``caught_up`` (brought up to date with another process's events).

Observations are cheap (a clock read and a bucket increment); nothing here touches the
database.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import REGISTRY, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

# Seconds: from a few milliseconds (one decision) to past a step's grace.
LATENCY_BUCKETS = (0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
LATENESS_BUCKETS = (0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0, 2.0, 5.0, 15.0, 60.0)

STATION_MESSAGE = Histogram(
    "tablehub_station_message_seconds",
    "From a station message's receipt to its reply, by message type (decide: decisions)",
    ["type"],
    buckets=LATENCY_BUCKETS,
)
FANOUT = Histogram(
    "tablehub_fanout_seconds",
    "Handing one commit's events for a table to this process's sockets",
    buckets=LATENCY_BUCKETS,
)
FANOUT_FRAMES = Counter("tablehub_fanout_frames", "Event frames written to this process's sockets")
TIMER_LATENESS = Histogram(
    "tablehub_timer_lateness_seconds",
    "How long after its deadline a step's expiry was applied, by step",
    ["step"],
    buckets=LATENESS_BUCKETS,
)
ROUND_ENGINES = Counter(
    "tablehub_round_engines",
    "Round engines built because this process's cache did not hold the round's current one:"
    " replayed (the whole event log) or caught_up (another process's events applied)",
    ["how"],
)
MESSAGE_TYPES = frozenset(
    ("place", "place_many", "undo", "clear", "double_bets", "rebet", "repeat_last",
     "bet_all", "let_it_play", "decide", "dispute", "cash_in", "cash_out", "state")
)  # fmt: skip


def message_type(kind: object) -> str:
    """The label of a station message: its type when it is one of the protocol's, else
    ``other`` (a client cannot make up labels)."""
    return kind if isinstance(kind, str) and kind in MESSAGE_TYPES else "other"


# Each label's histogram, looked up once: ``labels()`` builds its key and takes a lock on
# every call, and every station message is observed (a burst is a thousand at once).
_STATION_MESSAGE_BY_TYPE: dict[str, Histogram] = {}


def observe_station_message(kind: object, seconds: float) -> None:
    """``tablehub_station_message_seconds`` of one station message of type ``kind``."""
    label = message_type(kind)
    histogram = _STATION_MESSAGE_BY_TYPE.get(label)
    if histogram is None:
        histogram = _STATION_MESSAGE_BY_TYPE[label] = STATION_MESSAGE.labels(label)
    histogram.observe(seconds)


class ConnectedStations(Collector):
    """``tablehub_connected_stations{table}``, read from the process's table hubs when
    scraped (``count`` gives table id -> joined station sockets)."""

    def __init__(self, count: Callable[[], dict[int, int]]) -> None:
        self.count = count

    def collect(self) -> Iterator[GaugeMetricFamily]:
        gauge = GaugeMetricFamily(
            "tablehub_connected_stations",
            "Joined station sockets of this process, by table",
            labels=["table"],
        )
        for table_id, sockets in sorted(self.count().items()):
            gauge.add_metric([str(table_id)], sockets)
        yield gauge


def register_connected_stations(count: Callable[[], dict[int, int]]) -> None:
    """Called once, by tablehub.fanout (which owns the hubs)."""
    REGISTRY.register(ConnectedStations(count))
