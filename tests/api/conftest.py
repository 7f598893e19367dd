"""Fixtures of the API tests: the floor-manager fixtures of tests/admin/conftest.py."""

from tests.admin.conftest import *  # noqa: F403
from tests.admin.conftest import PASSWORD, _quick_settings, default_pays, wa_config  # noqa: F401
