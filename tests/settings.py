"""The settings of a test run: the product's, with DEBUG on unless the environment says
otherwise (the demo's key, http cookies, the demo's origins), as ./dev run asks for it.

The servers and commands the tests start in processes of their own inherit DEBUG from this
process's environment and use the product's settings (tablehub.settings) themselves. mypy's
Django plugin reads these settings too (pyproject.toml).
"""

import os

os.environ.setdefault("DEBUG", "1")

from tablehub.settings import *  # noqa: E402, F403
