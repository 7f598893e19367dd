"""Hypothesis strategies for the fuzzers: bad input of every kind for every door.

Messages are mostly well-formed enough to reach the command's own checks (a known ``type``
and a plausible ``client_id``) with one or more fields broken: a wrong type, a huge or
negative number, more decimals than cents, an unknown field, another station's name or
hand, a client id used before; and sometimes broken at the frame level (not JSON, NaN,
nested deep, NUL and lone surrogates, oversized, binary).
"""

from __future__ import annotations

import json
import os

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def fuzz_settings(examples: int) -> settings:
    """Bounded: ``examples`` cases (times FUZZ_SCALE, e.g. FUZZ_SCALE=10 for a long local
    run), no deadline; the same cases on every CI run, new ones on every local run."""
    scale = float(os.environ.get("FUZZ_SCALE", "1"))
    return settings(
        max_examples=max(1, int(examples * scale)),
        deadline=None,
        derandomize=in_ci(),
        database=None,
        print_blob=True,
        suppress_health_check=list(HealthCheck),
    )


# -- values ----------------------------------------------------------------------------------


def weighted(percent: int, likely: st.SearchStrategy, other: st.SearchStrategy):
    """``likely`` in about ``percent`` % of the cases, else ``other``."""
    return st.integers(0, 99).flatmap(lambda n: likely if n < percent else other)


PLAIN = st.characters(exclude_categories=["Cs"], exclude_characters="\x00")


def text(max_size: int, min_size: int = 0) -> st.SearchStrategy:
    """Text as a client sends it; now and then with a NUL (refused at the door: it cannot
    be stored)."""
    return weighted(
        90,
        st.text(PLAIN, min_size=min_size, max_size=max_size),
        st.text(min_size=min_size, max_size=max_size),
    )


JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=False, allow_infinity=False),
    text(12),
    st.lists(st.integers(min_value=-3, max_value=3), max_size=3),
    st.dictionaries(text(4), st.integers(), max_size=2),
)

MONEY_TEXT = st.sampled_from(
    [
        "10", "10.00", "5.5", "0.01", "1", "25", "100", "500", "1000000000", "1000000000.01",
        "0", "0.00", "-0", "-5", "-0.01", "0.001", "10.005", "1e30", "1e100", "-1e100",
        "1E+2", "1e-3", "NaN", "-Infinity", "Infinity", "sNaN", " 5 ", "5,00", "1_000",
        "", " ", "0x10", "10.", ".5", "\uff19", "1/2", "5 USD", "$5", "99999999999999.99",
    ]
)  # fmt: skip

# Each field: a value a client could mean (about 60 %), else a broken one.
AMOUNTS = weighted(
    60,
    st.one_of(
        st.sampled_from(["1", "5", "10", "25", "10.00", "2.50", "100", "0.01"]),
        st.decimals(min_value=1, max_value=150, places=2).map(str),
    ),
    st.one_of(
        MONEY_TEXT,
        st.decimals(min_value=-(10**12), max_value=10**12, places=2).map(str),
        st.decimals(allow_nan=False, allow_infinity=False).map(str),  # any precision and size
        st.integers(min_value=-(10**40), max_value=10**40),
        st.floats(allow_nan=False, allow_infinity=False),
        JUNK,
    ),
)

BOXES = weighted(
    70,
    st.integers(min_value=1, max_value=3),
    st.one_of(
        st.integers(min_value=-2, max_value=5),
        st.sampled_from([0, 10**30, -(10**30), 2**63]),
        st.booleans(),
        st.sampled_from(["1", "1.0", ""]),
        st.floats(allow_nan=False, allow_infinity=False),
        JUNK,
    ),
)

BET_CODES = weighted(
    70,
    st.sampled_from(["main", "main", "21+3", "pair", "bust", "in_for_6"]),
    st.one_of(st.sampled_from(["lucky_ladies", "kk", "MAIN", "main "]), text(12), JUNK),
)

ACTIONS = weighted(
    70,
    st.sampled_from(
        [
            "hit", "stand", "double", "double_half", "split", "surrender", "insure",
            "no_insurance", "even_money", "no_even_money", "pick_1", "pick_2", "pick_3",
        ]
    ),
    st.one_of(st.sampled_from(["pick_4", "HIT", "fold", "stand "]), text(12), JUNK),
)  # fmt: skip

# Client ids: a small pool (so that messages are replayed), fresh ones, and broken ones.
FRESH = "<fresh>"  # the test puts a client id never used before in its place
CLIENT_IDS = weighted(
    80,
    weighted(70, st.just(FRESH), text(64, min_size=1)),
    weighted(50, st.sampled_from(["r1", "r2", "r3"]), st.one_of(st.just("x" * 65), JUNK)),
)

OTHER_FIELDS = weighted(
    70,
    st.just({}),
    st.dictionaries(
        st.sampled_from(["station", "round", "credential", "table", "stake", "seq", "zzz"]),
        st.one_of(st.sampled_from(["s2", "s1", "other-secret"]), JUNK),
        min_size=1,
        max_size=3,
    ),
)


# -- frames ----------------------------------------------------------------------------------

RAW_FRAMES = st.one_of(
    st.text(max_size=40),  # almost never JSON
    st.sampled_from(
        [
            "{not json",
            "",
            "null",
            "[]",
            "7",
            '"state"',
            '{"type": "state", "client_id": "n", "amount": NaN}',
            '{"type": "state", "client_id": Infinity}',
            '{"type": "state", "client_id": "\\u0000"}',
            '{"type": "st\\u0000ate", "client_id": "z"}',
            '{"type": "state", "client_id": "\\ud800"}',
            '{"\\udfff": 1, "type": "state", "client_id": "s"}',
            '{"type": "state", "client_id": "d", "client_id": "e"}',
            "[" * 1000 + "]" * 1000,
            '{"a":' * 20 + "1" + "}" * 20,
            '{"type": "place", "client_id": "big", "box": ' + "9" * 4000 + "}",
            '{"type": "place", "client_id": "huge", "box": ' + "9" * 5000 + "}",
            "x" * 5000,
            "\u00e9" * 2100,  # under 4096 characters, over 4096 bytes
        ]
    ),
)
BINARY_FRAMES = st.binary(max_size=40)


def message_for(kind_strategy, fields: dict, usual: tuple = ()) -> st.SearchStrategy:
    """A message of one of these types: each field present (valid-looking or broken) or
    left out (``usual`` fields seldom), plus unknown fields."""

    @st.composite
    def build(draw):
        message = dict(draw(OTHER_FIELDS))
        if draw(st.integers(0, 19)) < 19:
            message["type"] = draw(kind_strategy)
        if draw(st.integers(0, 19)) < 19:
            message["client_id"] = draw(CLIENT_IDS)
        for name, strategy in fields.items():
            if draw(st.integers(0, 19 if name in usual else 2)) < (19 if name in usual else 2):
                message[name] = draw(strategy)
        return message

    return build()


STATION_TYPES = weighted(
    90,
    st.sampled_from(
        [
            "place", "place", "place", "place_many", "undo", "clear", "double_bets", "rebet",
            "repeat_last", "bet_all", "let_it_play", "decide", "cash_in", "cash_out", "tip",
            "state",
        ]
    ),
    st.one_of(st.sampled_from(["join", "Place", "hello"]), text(10), JUNK),
)  # fmt: skip

CHIP = weighted(
    80,
    st.fixed_dictionaries({"box": BOXES, "bet": BET_CODES, "amount": AMOUNTS}),
    st.fixed_dictionaries({}, optional={"box": BOXES, "bet": BET_CODES, "amount": AMOUNTS}),
)

STATION_MESSAGES = message_for(
    STATION_TYPES,
    {
        "box": BOXES,
        "bet": BET_CODES,
        "amount": AMOUNTS,
        "bets": weighted(80, st.lists(CHIP, max_size=4), JUNK),
        "action": ACTIONS,
        "hand": weighted(50, st.sampled_from(["s1/1/1", "s1/1/2", "s2/2/1", "s1/9/1"]), JUNK),
    },
)

SHOE_CARDS = weighted(
    60,
    st.sampled_from([r + s for r in "A23456789TJQK" for s in "SHDC"] + ["10D", "7h"]),
    st.one_of(st.sampled_from(["1S", "ZZ", "", "9S9S", "AAA", "11H"]), text(4), JUNK),
)

SHOE_MESSAGES = message_for(
    weighted(85, st.just("card"), st.one_of(st.sampled_from(["hello", "scan", "Card"]), JUNK)),
    {
        # an offset from the reader's sequence number (0: a duplicate, 1: the next card),
        # or a value as it comes
        "seq": weighted(
            70,
            weighted(60, st.just(1), st.integers(min_value=-2, max_value=3)).map(
                lambda n: ("offset", n)
            ),
            st.one_of(
                st.sampled_from([0, -1, 10**30, 2**63, "1", "one"]),
                st.floats(allow_nan=False, allow_infinity=False),
                JUNK,
            ),
        ),
        "card": SHOE_CARDS,
        "burn": weighted(
            70, st.booleans(), st.one_of(st.sampled_from(["true", "false", 0, 1, None]), JUNK)
        ),
        "key": st.one_of(st.sampled_from(["reader-secret", "nope"]), JUNK),
    },
    usual=("seq", "card"),
)

TABLET_TYPES = weighted(
    90,
    st.sampled_from(
        [
            "state", "open_table", "close_table", "close_bets", "deal", "deal", "burn",
            "manual_card", "manual_card", "new_shoe", "void_round", "correct_card",
            "resolve_dispute",
        ]
    ),
    st.one_of(st.sampled_from(["shuffle", "Deal"]), text(10), JUNK),
)  # fmt: skip

SUPERVISORS = st.one_of(
    st.fixed_dictionaries(
        {"username": st.sampled_from(["boss", "dealer", "nobody", ""]), "password": JUNK}
    ),
    JUNK,
)

TABLET_MESSAGES = message_for(
    TABLET_TYPES,
    {
        "card": SHOE_CARDS,
        "burn": weighted(70, st.booleans(), JUNK),
        "supervisor": SUPERVISORS,
        "reason": weighted(70, text(30), st.one_of(st.just("x" * 201), JUNK)),
        "round": weighted(50, st.integers(min_value=-1, max_value=50), JUNK),
    },
)


def frame_text(message) -> str:
    """A message as a frame (NaN and huge numbers as Python's json writes them)."""
    return json.dumps(message)
