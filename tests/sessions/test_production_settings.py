"""Production settings are safe by default (issue 17, finding 10 and requirement 5): DEBUG
off unless asked, no fixed key (refused without one), Secure cookies and HSTS, and
``manage.py check --deploy`` clean with the settings docs/operations.md lists. Each case
reads the settings in a process of its own, with only the environment it sets."""

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {  # docs/operations.md, "Settings"
    "ALLOWED_HOSTS": "tables.example",
    "SECURE_SSL_REDIRECT": "1",
    "HSTS_INCLUDE_SUBDOMAINS": "1",
    "HSTS_PRELOAD": "1",
}
READ = (
    "import json; from django.conf import settings as s; import django; django.setup(); "
    "print(json.dumps({k: getattr(s, k) for k in ('DEBUG', 'SECRET_KEY', "
    "'SESSION_COOKIE_SECURE', 'CSRF_COOKIE_SECURE', 'SECURE_HSTS_SECONDS', "
    "'ALLOWED_ORIGINS')}))"
)


def run(args: list[str], **env: str) -> subprocess.CompletedProcess:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=keep | {"DJANGO_SETTINGS_MODULE": "tablehub.settings"} | env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def settings_with(**env: str) -> dict:
    done = run(["-c", READ], **env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_without_a_key_production_refuses_to_start_and_says_why():
    done = run(["manage.py", "check"])  # neither DEBUG nor SECRET_KEY
    assert done.returncode != 0
    assert "SECRET_KEY is not set: production needs a long random key" in done.stderr


def test_debug_is_off_and_cookies_and_hsts_are_secure_unless_asked():
    key = secrets.token_urlsafe(50)
    production = settings_with(SECRET_KEY=key, ALLOWED_HOSTS="tables.example")
    assert production == {
        "DEBUG": False,
        "SECRET_KEY": key,
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_HSTS_SECONDS": 31536000,
        "ALLOWED_ORIGINS": ["https://tables.example"],
    }


def test_the_demo_asks_for_debug_and_gets_a_key_of_its_own():
    first, second = settings_with(DEBUG="1"), settings_with(DEBUG="1")
    assert first["DEBUG"] is True and first["SESSION_COOKIE_SECURE"] is False
    assert first["SECRET_KEY"] == second["SECRET_KEY"]  # every process of the demo signs alike
    assert len(first["SECRET_KEY"]) >= 50 and "insecure" not in first["SECRET_KEY"]
    assert (ROOT / ".dev-secret-key").read_text().strip() == first["SECRET_KEY"]


def test_check_deploy_is_clean_with_the_documented_production_settings():
    done = run(
        ["manage.py", "check", "--deploy", "--fail-level", "WARNING", "--tag", "security"],
        SECRET_KEY=secrets.token_urlsafe(50),
        **PRODUCTION,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "security." not in done.stdout + done.stderr
