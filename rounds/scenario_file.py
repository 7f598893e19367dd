"""Reading a scenario file (spec/scenario-format.md) or another JSON input of a command.

Shared by ``manage.py play_scenario`` and ``manage.py parsheet`` (its paytable and rules
files): floats are read as exact Decimals, and whatever is wrong is one EngineError line,
printed with exit status ``EXIT_INVALID``. Kept apart from the commands so that one
command does not import the other (and, through ``play_scenario --live``, the server).
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, TextIO

from rounds.engine import EngineError

EXIT_INVALID = 2


def read_scenario(path: str, stdin: TextIO) -> Any:
    """Decode a scenario file (or stdin for "-"); floats are read as exact Decimals."""
    try:
        if path == "-":
            text = stdin.read()
        else:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
    except OSError as exc:
        raise EngineError(f"{path}: cannot read the scenario ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise EngineError(f"{path}: the scenario is not UTF-8 text") from None
    try:
        return json.loads(text, parse_float=Decimal)
    except json.JSONDecodeError as exc:
        raise EngineError(
            f"{path}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    except RecursionError:
        raise EngineError(f"{path}: the JSON is nested too deeply") from None
