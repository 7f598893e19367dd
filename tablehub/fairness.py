"""The provably fair virtual shoe's arithmetic (docs/integrity.md, "The provably fair virtual
shoe"): the order a server seed and the stations' seeds make, its canonical bytes, the
commitment published before its first card, and the check of a revealed shoe.

Pure (hashlib and hmac): the recipe in docs/integrity.md recomputes all of it without this
module, and ``verify_shoe`` checks a shoe with it. Where the server seed comes from, when the
commitment is published and when it is revealed is croupier/virtual_shoe.py's.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Sequence
from typing import Any

RANKS = "23456789TJQKA"  # as the engine spells them (rounds/engine/cards.py)
SUITS = "SHDC"
SEED_BYTES = 32  # the server seed: 32 random bytes, written as 64 lowercase hex digits
MAX_STATION_SEED = 64
_RANGE = 2**256  # one HMAC-SHA256 block read as a big-endian integer


class NotFair(Exception):
    """A check of a revealed shoe that fails; the message names what fails."""


def unshuffled(decks: int) -> list[str]:
    """The shoe before the shuffle: deck after deck, each rank from 2 to A, each rank's
    suits in the order S, H, D, C."""
    return [rank + suit for _ in range(decks) for rank in RANKS for suit in SUITS]


def check_station_seed(seed: object) -> str:
    """A station's seed: 1 to 64 printable ASCII characters, no space (a newline separates
    the seeds in the HMAC's message). Raises ValueError saying what is wrong."""
    if not isinstance(seed, str) or not 1 <= len(seed) <= MAX_STATION_SEED:
        raise ValueError(f"seed must be a string of 1 to {MAX_STATION_SEED} characters")
    if not all("!" <= c <= "~" for c in seed):
        raise ValueError("seed may hold only printable ASCII characters, no space")
    return seed


def canonical_seeds(station_seeds: Iterable[str]) -> bytes:
    """The station seeds as the HMAC's message: sorted, joined by newlines, ASCII (no seed:
    empty)."""
    return "\n".join(sorted(station_seeds)).encode("ascii")


def canonical_order(order: Sequence[str]) -> bytes:
    """The order as bytes: the cards (rank then suit, e.g. ``TS``, ``AH``) from the first
    dealt to the last, joined by commas, ASCII."""
    return ",".join(order).encode("ascii")


def commitment(order: Sequence[str], server_seed: str) -> str:
    """SHA-256 of the canonical order, a colon and the server seed's 64 hex digits (ASCII),
    as 64 lowercase hex digits."""
    return hashlib.sha256(canonical_order(order) + b":" + server_seed.encode("ascii")).hexdigest()


def shuffled(server_seed: str, station_seeds: Iterable[str], decks: int) -> list[str]:
    """The order the seeds make: key = HMAC-SHA256(server seed's bytes, canonical station
    seeds); the n-th random block (n = 0, 1, ...) is HMAC-SHA256(key, n as 8 bytes big-endian)
    read as a big-endian integer; a number below ``k`` is the next block that is below the
    largest multiple of ``k`` under 2**256 (rejection: no bias), modulo ``k``; Fisher-Yates
    from the last card down: card i swapped with card j, j below i + 1."""
    key = hmac.new(bytes.fromhex(server_seed), canonical_seeds(station_seeds), "sha256").digest()
    cards, counter = unshuffled(decks), 0
    for i in range(len(cards) - 1, 0, -1):
        limit = _RANGE // (i + 1) * (i + 1)
        while True:
            block = hmac.new(key, counter.to_bytes(8, "big"), "sha256").digest()
            counter += 1
            number = int.from_bytes(block, "big")
            if number < limit:
                break
        j = number % (i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return cards


def verify(record: dict[str, Any]) -> int:
    """Check a revealed shoe: ``commitment``, ``server_seed``, ``station_seeds``, ``order``
    and ``dealt`` (``[position, card]`` pairs, in the order dealt; positions from 0). Returns
    how many cards were checked; raises NotFair naming the first thing that fails."""
    order, seed = record["order"], record["server_seed"]
    hex_digits = set("0123456789abcdef")
    if not isinstance(seed, str) or len(seed) != 2 * SEED_BYTES or set(seed) - hex_digits:
        raise NotFair("server_seed: not 64 lowercase hex digits")
    if not isinstance(order, list) or not order or len(order) % 52:
        raise NotFair("order: not a list of whole decks")
    if commitment(order, seed) != record["commitment"]:
        raise NotFair("commitment: not the SHA-256 of this order and server seed")
    if shuffled(seed, record["station_seeds"], len(order) // 52) != order:
        raise NotFair("order: not the one the server seed and the station seeds make")
    last = -1
    for position, card in record["dealt"]:
        if not isinstance(position, int) or not last < position < len(order):
            raise NotFair(f"position {position} ({card}): not after position {last} in the order")
        if order[position] != card:
            raise NotFair(
                f"position {position}: {card} was dealt, the committed order has {order[position]}"
            )
        last = position
    return len(record["dealt"])
