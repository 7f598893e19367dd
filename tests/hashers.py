"""The test run's password hasher: Django's PBKDF2 with a thousand iterations, not a
million.

Every staff user a test makes (the roles, the dealers, the floor managers) hashes a
password, and Django's own count took 0.2 s each here, more on a loaded CI machine. The hash
keeps Django's format and algorithm name (``pbkdf2_sha256$1000$...``), so the servers a test
starts in processes of their own, on the product's settings and its hasher, check these
passwords as well (and rehash one at Django's count after a login, as Django does).
"""

from django.contrib.auth.hashers import PBKDF2PasswordHasher


class QuickPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    iterations = 1000
