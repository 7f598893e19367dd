"""Hashing device credentials (station terminals, card readers).

These are random tokens of at least 128 bits that the system issues, not passwords that
people choose: a salted SHA-256 with a constant-time comparison keeps them safe, where a
deliberately slow password hash (PBKDF2, about half a second here) would only make every
station's join and a stadium's start-up slow.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets


def new_token() -> str:
    """A fresh device credential (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    salt = secrets.token_hex(8)
    return f"sha256${salt}${hashlib.sha256((salt + token).encode()).hexdigest()}"


def check_token(token: str, stored: str) -> bool:
    try:
        scheme, salt, digest = stored.split("$")
    except ValueError:
        return False
    if scheme != "sha256":
        return False
    candidate = hashlib.sha256((salt + token).encode()).hexdigest()
    return hmac.compare_digest(candidate, digest)
