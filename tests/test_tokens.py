"""Device credentials: salted SHA-256, constant-time check, nothing else accepted."""

from tablehub.tokens import check_token, hash_token, new_token


def test_a_token_checks_against_its_hash_only():
    token = new_token()
    stored = hash_token(token)
    assert check_token(token, stored)
    assert not check_token(token + "x", stored)
    assert hash_token(token) != stored  # salted
    assert len(token) >= 43  # 256 bits, URL-safe


def test_anything_but_a_sha256_token_hash_is_refused():
    assert not check_token("x", "")
    assert not check_token("x", "pbkdf2_sha256$1$salt$hash")
    assert not check_token("x", "sha256$only-two")
