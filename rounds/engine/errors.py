"""The one error type of the rules engine.

Every refusal (a malformed input, an action the rules do not allow now,
credits that do not cover a stake) names the station and box when there is
one, so that a scenario runner or a websocket consumer can show one clear
line: ``station s1, box 1: double is not allowed on a 3-card hand``.
"""

from __future__ import annotations


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
