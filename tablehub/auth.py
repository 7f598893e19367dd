"""Login throttling (django-axes) for every way a person logs in.

The admin login, the croupier tablet's login page, the API's basic auth and its token
request all call ``django.contrib.auth.authenticate(request, ...)``: the first backend in
``AUTHENTICATION_BACKENDS`` (``ThrottledBackend``) refuses a username that failed too often
from the same address (settings ``AXES_*``, docs/operations.md) before any password is
checked, and axes counts each failure.

A caller without an HTTP request (a supervisor's approval typed on the tablet and sent over
its websocket) should call ``authenticate_from_scope(scope, username, password)``, which
builds the request axes needs from the websocket's ASGI scope, so its failures count and
lock like any other login. ``authenticate(username=..., password=...)`` without a request
still works: it is refused while that username is locked out from any address, but its
failures are not counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from axes.backends import AxesStandaloneBackend
from axes.conf import settings as axes_settings
from axes.exceptions import AxesBackendPermissionDenied
from axes.helpers import get_client_ip_address
from axes.models import AccessAttempt
from django.contrib.auth import authenticate
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.signals import user_login_failed
from django.dispatch import receiver
from django.http import HttpRequest
from django.utils import timezone

from tablehub import attempts


class ThrottledBackend(AxesStandaloneBackend):
    """Axes' lockout check, which also accepts a call without a request (see the module)."""

    def authenticate(self, request, username=None, password=None, **kwargs: Any):
        if request is None:
            if username and locked_anywhere(username):
                raise AxesBackendPermissionDenied("this username is locked out")
            return None
        try:
            if attempts.too_many("login", None, login_address(request)) is not None:
                request.axes_locked_out = True  # too many failures from this address: 429
                raise AxesBackendPermissionDenied("too many failed logins from this address")
            return super().authenticate(request, username=username, password=password, **kwargs)
        finally:
            mark_lockout(request)


def login_address(request: Any) -> str:
    """The address a login came from, as axes sees it."""
    return get_client_ip_address(getattr(request, "_request", request)) or ""


def mark_lockout(request: Any) -> None:
    """Axes marks a lockout on the request it was given, and its middleware answers 429 when
    Django's request carries the mark. The API's logins hand axes REST framework's request,
    which wraps Django's (``_request``, documented by REST framework): copy the mark there,
    or a locked token request or basic auth answered 400 or 401."""
    inner = getattr(request, "_request", None)
    if inner is not None and getattr(request, "axes_locked_out", False):
        inner.axes_locked_out = True
        inner.axes_credentials = getattr(request, "axes_credentials", None)


@receiver(user_login_failed, dispatch_uid="tablehub.auth.mark_lockout")
def _login_failed(sender: Any, credentials: Any, request: Any = None, **kwargs: Any) -> None:
    # Runs after axes' own handler (axes is installed first), which may just have locked out.
    if request is not None:
        mark_lockout(request)
        # Every failed login also counts against its address (tablehub/attempts.py).
        attempts.failed("login", None, login_address(request))


def locked_anywhere(username: str) -> bool:
    """True while ``username`` has reached the failure limit from some address."""
    attempts = AccessAttempt.objects.filter(
        username=username, failures_since_start__gte=axes_settings.AXES_FAILURE_LIMIT
    )
    cooloff = axes_settings.AXES_COOLOFF_TIME
    if cooloff is not None:
        if not isinstance(cooloff, timedelta):
            cooloff = timedelta(hours=float(cooloff))
        attempts = attempts.filter(attempt_time__gte=timezone.now() - cooloff)
    return attempts.exists()


def request_from_scope(scope: Mapping[str, Any]) -> HttpRequest:
    """A minimal HttpRequest carrying a websocket's client address, user agent and path."""
    request = HttpRequest()
    client = scope.get("client") or ("", 0)
    request.META["REMOTE_ADDR"] = client[0] or ""
    for name, value in scope.get("headers") or []:
        key = name.decode("latin-1").upper().replace("-", "_")
        if key not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            key = "HTTP_" + key
        request.META[key] = value.decode("latin-1")
    request.path = request.path_info = scope.get("path", "")
    request.method = "POST"
    return request


def authenticate_from_scope(
    scope: Mapping[str, Any], username: str, password: str
) -> AbstractBaseUser | None:
    """``authenticate`` for a websocket: the user, or None (wrong password or locked out)."""
    return authenticate(request_from_scope(scope), username=username, password=password)
