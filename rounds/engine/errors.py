"""The one error type of the rules engine.

Every refusal (a malformed input, an action the rules do not allow now,
credits that do not cover a stake) names the station and box when there is
one, so that a scenario runner or a websocket consumer can show one clear
line: ``station s1, box 1: double is not allowed on a 3-card hand``.
"""

from __future__ import annotations

import json
from decimal import Decimal


class EngineError(ValueError):
    """An input the rules refuse. Nothing was changed when it is raised."""

    def __init__(
        self, reason: str, station: str | None = None, box: int | None = None, code: str = "invalid"
    ) -> None:
        self.reason = reason
        self.station = station
        self.box = box
        self.code = code
        super().__init__(self.line())

    def line(self) -> str:
        where = []
        if self.station is not None:
            where.append(f"station {self.station}")
        if self.box is not None:
            where.append(f"box {self.box}")
        return f"{', '.join(where)}: {self.reason}" if where else self.reason

    def at(self, station: str | None = None, box: int | None = None) -> EngineError:
        """The same refusal, located at a station and box when it had no place yet."""
        return EngineError(
            self.reason,
            self.station if self.station is not None else station,
            self.box if self.box is not None else box,
            self.code,
        )


def shown(value: object) -> str:
    """A scenario value as its JSON was written, for an error line.

    ``8.0`` rather than ``Decimal('8.0')``, ``true`` rather than ``True``, ``null``
    rather than ``None``; a string keeps its quotes (``'2:1'``) so that it reads as a value.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, Decimal)):
        return str(value)
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(shown(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))}: {shown(v)}" for k, v in value.items()) + "}"
    return repr(value)
