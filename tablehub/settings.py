"""Django settings for tablehub.

Everything that differs between the embedded default and production comes
from the environment:

* DATABASE_URL: unset means SQLite in ``db.sqlite3``; e.g.
  ``postgres://user@host:5432/tablehub`` for PostgreSQL.
* REDIS_URL: unset means the in-memory channel layer and eager Celery tasks
  (one process); set, it is the channel layer and the Celery broker.
* SECRET_KEY, DEBUG, ALLOWED_HOSTS and ALLOWED_ORIGINS (comma-separated), DB_CONN_MAX_AGE.
* Behind TLS (DEBUG off): SECURE_COOKIES, HSTS_SECONDS, HSTS_INCLUDE_SUBDOMAINS,
  HSTS_PRELOAD, SECURE_SSL_REDIRECT, SECURE_PROXY_SSL_HEADER (docs/operations.md,
  "Settings").
"""

import json
import os
import secrets
from decimal import Decimal
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    """Read a boolean environment variable ("1", "true", "yes", "on" are true)."""
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    """Read a comma-separated environment variable into a list of non-empty items."""
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def dev_secret_key(path: Path) -> str:
    """The demo's and the tests' key (DEBUG on, no SECRET_KEY): random, made once per checkout
    and kept in ``path`` (out of git), so that every process of a demo or a test run signs
    with the same key."""
    try:
        key = path.read_text().strip()
    except FileNotFoundError:
        key = ""
    if key:
        return key
    spare = path.with_name(f"{path.name}.{os.getpid()}")
    spare.write_text(secrets.token_urlsafe(50))
    try:
        os.link(spare, path)  # atomic: the first process to get there wins
    except FileExistsError:
        pass
    finally:
        spare.unlink()
    return path.read_text().strip()


# Off unless asked: the demo (./dev run) and the tests ask for it (docs/operations.md).
DEBUG = env_bool("DEBUG", False)

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set: production needs a long random key of its own in the "
            "SECRET_KEY environment variable (docs/operations.md, Settings). For the demo, "
            "set DEBUG=1 (./dev run does): it then makes a key of its own."
        )
    SECRET_KEY = dev_secret_key(BASE_DIR / ".dev-secret-key")

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost")


def default_origins(hosts: list[str], debug: bool, port: str) -> list[str]:
    """The websocket origins allowed when ALLOWED_ORIGINS is unset: each allowed host over
    https (its default port) in production; over http on port 80 and on the demo's port with
    DEBUG on."""
    hosts = [host for host in hosts if host != "*"]
    if debug:
        return [f"http://{host}" for host in hosts] + [f"http://{host}:{port}" for host in hosts]
    return [f"https://{host}" for host in hosts]


# The websocket Origin check is exact: scheme, host and port (tablehub/origins.py).
ALLOWED_ORIGINS = env_list("ALLOWED_ORIGINS", "") or default_origins(
    ALLOWED_HOSTS, DEBUG, os.environ.get("PORT", "8000")
)
for _origin in ALLOWED_ORIGINS:
    if not _origin.startswith(("http://", "https://")) or _origin.rstrip("/").count("/") != 2:
        raise ImproperlyConfigured(
            f"ALLOWED_ORIGINS holds scheme://host[:port] origins, got {_origin!r}"
        )

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and ReDoc's files, served by us (no CDN)
    "simple_history",
    "axes",
    "tablehub",
    "rounds",
    "stations",
    "croupier",
    "payouts",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Daphne serves no files: WhiteNoise serves the pages' CSS and JavaScript.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The pages' language from the browser (Accept-Language); a station's own language
    # setting wins on its page (stations/views.py).
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Who made a configuration change, for the audit history (django-simple-history).
    "simple_history.middleware.HistoryRequestMiddleware",
    # Login throttling (django-axes): last, so it sees every failed login.
    "axes.middleware.AxesMiddleware",
]

# Prometheus metrics (docs/operations.md, "Metrics"): django-prometheus' request metrics
# and ours (tablehub/metrics.py), served at /metrics.
INSTALLED_APPS.append("django_prometheus")
MIDDLEWARE = [
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    *MIDDLEWARE,
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

# Safe by default (issue 17, requirement 5): with DEBUG off the session and CSRF cookies
# are sent over TLS only and browsers are told to come back over TLS (HSTS, which Django
# sends on https responses only). A TLS-terminating proxy must say so with
# SECURE_PROXY_SSL_HEADER (e.g. X-Forwarded-Proto). docs/operations.md, "Settings".
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", not DEBUG)
SECURE_HSTS_SECONDS = int(os.environ.get("HSTS_SECONDS", "0" if DEBUG else "31536000"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("HSTS_PRELOAD", False)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
# The load balancer's health check may ask over plain http.
SECURE_REDIRECT_EXEMPT = [r"^health/$"]
if os.environ.get("SECURE_PROXY_SSL_HEADER"):
    _header = os.environ["SECURE_PROXY_SSL_HEADER"].strip().upper().replace("-", "_")
    SECURE_PROXY_SSL_HEADER = (f"HTTP_{_header}", "https")

# Every login (the admin's, the croupier tablet's, the API's basic auth and token request)
# goes through authenticate(); the first backend refuses a locked-out username and address
# before the password is checked (docs/operations.md, "Logins").
AUTHENTICATION_BACKENDS = [
    "tablehub.auth.ThrottledBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = int(os.environ.get("AXES_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = float(os.environ.get("AXES_COOLOFF_HOURS", "0.25"))  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True

# A configuration saved in the admin or the API has its main-game par sheet computed in the
# background (payouts/rtp.py), so the admin shows its return without waiting.
TABLEHUB_WARM_PARSHEETS = env_bool("TABLEHUB_WARM_PARSHEETS", True)

# The casino's shifts for the statistics per dealer (payouts/dealer_stats.py,
# docs/integrity.md): name -> [start, end] as "HH:MM" in TIME_ZONE; a shift whose end is not
# after its start ends the next day. The environment may give them as JSON.
TABLEHUB_SHIFTS = json.loads(
    os.environ.get(
        "TABLEHUB_SHIFTS",
        '{"day": ["06:00", "14:00"], "swing": ["14:00", "22:00"], "night": ["22:00", "06:00"]}',
    )
)

# The most money one cash-in may bring and one station's balance may hold after a cash-in
# (docs/operations.md, "Money limits and house losses"): above them a cash-in is refused
# (amount_too_large, balance_limit). Winnings are never refused; the table limits bound
# them, and a ledger entry holds up to 12 digits before the point, so the balance limit
# stays far below that.
TABLEHUB_MAX_CASH_IN = Decimal(os.environ.get("TABLEHUB_MAX_CASH_IN", "1000000.00"))
TABLEHUB_MAX_BALANCE = Decimal(os.environ.get("TABLEHUB_MAX_BALANCE", "10000000.00"))
if not Decimal(0) < TABLEHUB_MAX_CASH_IN <= TABLEHUB_MAX_BALANCE <= Decimal("1000000000"):
    raise ImproperlyConfigured(
        "0 < TABLEHUB_MAX_CASH_IN <= TABLEHUB_MAX_BALANCE <= 1000000000 must hold"
    )

ROOT_URLCONF = "tablehub.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "tablehub.wsgi.application"
ASGI_APPLICATION = "tablehub.asgi.application"

DATABASES = {
    "default": dj_database_url.config(
        default="sqlite:///" + str(BASE_DIR / "db.sqlite3"),
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "60")),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The embedded default serves websockets, timers and commands from several threads:
    # each write transaction takes the lock at BEGIN (one writer at a time, the order
    # select_for_update gives on PostgreSQL), readers use WAL, and a busy lock waits.
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    # A file, not the shared-cache in-memory database, whose table locks fail at once.
    DATABASES["default"]["TEST"] = {
        "NAME": os.environ.get("TABLEHUB_TEST_DB", str(BASE_DIR / "test-db.sqlite3"))
    }

REDIS_URL = os.environ.get("REDIS_URL", "")

# channels_redis receives with a blocking pop that waits up to 5 s on the server; redis-py 8
# also gives up reading after 5 s by default (socket_timeout), so an idle receive timed out
# and every idle socket was closed with 1011 (channels_redis issue 422). The read timeout is
# kept well above the blocking pop's, so it still finds a dead connection (with TCP
# keepalive) but never an idle one; works with redis-py 5 to 8.
REDIS_SOCKET_TIMEOUT = float(os.environ.get("REDIS_SOCKET_TIMEOUT", "30"))
# redis-py 8 gives an asyncio pool at most 100 connections and refuses the next command at
# once (MaxConnectionsError) instead of waiting; before 8 there was no limit. A stadium's
# stations joining together (each join adds its socket to a group) exceeded it: joins were
# answered server_error. The channel layer's pool may open as many as a stadium needs at
# once, well inside Redis' own maxclients (10000 by default).
REDIS_LAYER_MAX_CONNECTIONS = int(os.environ.get("REDIS_LAYER_MAX_CONNECTIONS", "5000"))
REDIS_LAYER_HOST = {
    "address": REDIS_URL,
    "socket_timeout": REDIS_SOCKET_TIMEOUT,
    "socket_connect_timeout": 5,
    "socket_keepalive": True,
    "max_connections": REDIS_LAYER_MAX_CONNECTIONS,
}

if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_LAYER_HOST]},
        }
    }
    CELERY_BROKER_URL = REDIS_URL
    # kombu's Redis transport, with its exit on a Redis restart fixed (tablehub/broker.py).
    CELERY_BROKER_TRANSPORT = "tablehub.broker:Transport"
    CELERY_TASK_ALWAYS_EAGER = False
    # Shared by the server processes: the failed-attempt counts (tablehub/attempts.py).
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "tablehub",
            "OPTIONS": {
                "socket_timeout": 5,
                "socket_connect_timeout": 5,
                # One pool for every context of the process, not one per websocket.
                "pool_class": "tablehub.redis_pool.SharedConnectionPool",
            },
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "tablehub.layers.TableChannelLayer"}}
    CELERY_BROKER_URL = "memory://"
    CELERY_TASK_ALWAYS_EAGER = True
    CELERY_TASK_EAGER_PROPAGATES = True

CELERY_TIMEZONE = "UTC"
CELERY_TASK_ACKS_LATE = True

# Recovery (docs/recovery.md). A timer dies with whatever holds it (a Celery worker killed
# while holding an ETA task gets it back from Redis only after the transport's visibility
# timeout, an hour; Redis restarted without its data loses it), so a sweep expires every
# step whose deadline passed more than the grace ago, every TABLEHUB_SWEEP_SECONDS; and
# every TABLEHUB_STALE_SWEEP_SECONDS the rounds that cannot finish are cancelled after their
# jurisdiction's stale_game_hours (rounds/stale.py). Celery beat sends both tasks in
# production (`celery -A tablehub beat`, one per installation); the embedded server runs
# them on its own event loop (rounds/recovery.start_sweeps).
# No single fault may stall a table for more than its step's timer plus 5 seconds (issue
# 17): a lost timer fires at most grace + interval (3 s) after its deadline. A sweep is
# one indexed query.
TABLEHUB_SWEEP_SECONDS = float(os.environ.get("TABLEHUB_SWEEP_SECONDS", "2"))
TABLEHUB_SWEEP_GRACE_SECONDS = float(os.environ.get("TABLEHUB_SWEEP_GRACE_SECONDS", "1"))
TABLEHUB_STALE_SWEEP_SECONDS = float(os.environ.get("TABLEHUB_STALE_SWEEP_SECONDS", "600"))
# Program authentication (tablehub/program.py, docs/integrity.md): the manifest of the
# installed files (manage.py make_manifest), checked at start-up (when the setting is on: by
# default unless DEBUG) and every TABLEHUB_VERIFY_INSTALL_SECONDS by Celery beat.
TABLEHUB_MANIFEST = os.environ.get("TABLEHUB_MANIFEST", str(BASE_DIR / "MANIFEST.sha256"))
TABLEHUB_VERIFY_INSTALL_AT_START = env_bool("TABLEHUB_VERIFY_INSTALL_AT_START", not DEBUG)
TABLEHUB_VERIFY_INSTALL_SECONDS = float(
    os.environ.get("TABLEHUB_VERIFY_INSTALL_SECONDS", str(24 * 3600))
)
# Stored replies to station messages (stations/retention.py, docs/protocol.md): kept this
# many hours for a resent message, then deleted by a sweep every
# TABLEHUB_REPLIES_SWEEP_SECONDS (about 180 000 an hour at a full 1000-station stadium).
TABLEHUB_KEEP_REPLIES_HOURS = float(os.environ.get("TABLEHUB_KEEP_REPLIES_HOURS", "24"))
TABLEHUB_REPLIES_SWEEP_SECONDS = float(os.environ.get("TABLEHUB_REPLIES_SWEEP_SECONDS", "600"))
CELERY_BEAT_SCHEDULE = {
    "sweep-round-timers": {
        "task": "rounds.tasks.sweep_timers",
        "schedule": TABLEHUB_SWEEP_SECONDS,
        # A sweep queued while no worker ran is worthless once the next one is due.
        "options": {"expires": TABLEHUB_SWEEP_SECONDS},
    },
    "void-stale-games": {
        "task": "rounds.tasks.void_stale_games",
        "schedule": TABLEHUB_STALE_SWEEP_SECONDS,
        "options": {"expires": TABLEHUB_STALE_SWEEP_SECONDS},
    },
    "forget-old-replies": {
        "task": "stations.tasks.forget_replies",
        "schedule": TABLEHUB_REPLIES_SWEEP_SECONDS,
        "options": {"expires": TABLEHUB_REPLIES_SWEEP_SECONDS},
    },
    "verify-install": {
        "task": "tablehub.tasks.verify_install",
        "schedule": TABLEHUB_VERIFY_INSTALL_SECONDS,
        "options": {"expires": TABLEHUB_VERIFY_INSTALL_SECONDS},
    },
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"
# The station page and the croupier tablet speak these (issue 19, point 6); their catalogs
# are in stations/locale, croupier/locale and, for the shared templates, tablehub/locale.
LANGUAGES = [("en", "English"), ("es", "Español")]
LOCALE_PATHS = [BASE_DIR / "tablehub" / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# Where collectstatic gathers the files for a production server (WhiteNoise serves them from
# there); unset, WhiteNoise serves them straight from the apps (below).
STATIC_ROOT = os.environ.get("STATIC_ROOT") or None

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # The API (tablehub/api/): a token (POST /api/token/), basic auth or the admin's session;
    # what each role may read or change is in tablehub/api/permissions.py.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.BasicAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
}

SPECTACULAR_SETTINGS = {
    "TITLE": "TableHub API",
    "DESCRIPTION": "Live dealer-assist blackjack table backend.",
    "VERSION": "0.1.0",
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain"},
    },
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {
        "tablehub": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
}

# Round timers (rounds/timers.py): "celery" (ETA tasks, production), "inprocess" (the
# embedded single-process server) or "none" (the caller fires expiries, as unit tests do).
TABLEHUB_TIMERS = os.environ.get("TABLEHUB_TIMERS", "celery" if REDIS_URL else "inprocess")
# When a round's bets close, every server process with sockets at its table loads the
# round's engine in its database thread before the first card (tablehub/fanout.py,
# ``on_round_ready``). Tests switch it off unless they test it: the load would run in the
# sync thread after the test that closed the bets has ended.
TABLEHUB_ROUND_READY = os.environ.get("TABLEHUB_ROUND_READY", "true").lower() != "false"

# The pages' static files are served by WhiteNoise straight from the apps' static/ folders
# (no collectstatic step on a fresh machine).
WHITENOISE_USE_FINDERS = True
