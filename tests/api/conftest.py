"""Fixtures of the API tests: the floor-manager fixtures of tests/admin/conftest.py."""

from tests.admin.conftest import *  # noqa: F403
from tests.admin.conftest import PASSWORD, default_pays, quick_settings, wa_config  # noqa: F401
