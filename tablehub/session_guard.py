"""A socket's session stays valid for as long as the socket is open (issue 17, requirement 3).

A tablet socket is a logged-in user with a tablet role at this table; a station socket a
station with its device credential; a card reader's socket the table's reader key. Each is
checked when it starts (join, hello, connect) and again:

* on every message it sends, before the message does anything: a message of a session that
  ended is refused with ``unauthorized`` and the socket closed. The tablet and the reader
  check in the same database-thread hop as the message (``within_session``); a station's
  message is checked inside its batch's transaction (``stations.commands.handle_batch``,
  one query for the batch), so the check costs a burst no extra hop;
* at once when something that may end it changes (``revoke``, sent on commit by the signal
  handlers below): logout, a user saved (deactivated, password changed) or deleted, a
  change of the user's groups or of the table's staff, a station or table saved or deleted.
  The socket joined a group of its own kind (``user_group``, ``station_group``,
  ``reader_group``) on its consumer's channel; the message makes it check again and close
  itself when the check fails, so an idle socket closes well within a second.

A logout sends the hash of the ended session's key: the socket of that session closes
whatever the database says yet (Django's logout tells before it deletes the session).

The pushes reach many station sockets at once, so the checks they cause share one query
(``StationChecks``). A station's ``ping`` (the server's clock, nothing of the table) is not
checked per message; the push closes it all the same.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeVar

from channels.db import database_sync_to_async
from django.contrib import auth
from django.contrib.auth.models import Group, User
from django.contrib.auth.signals import user_logged_out
from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_delete
from django.dispatch import receiver

from stations.models import Station
from stations.selectors import valid_stations
from tablehub import broadcast, roles
from tablehub.models import Table

log = logging.getLogger("tablehub.sessions")

T = TypeVar("T")
RECHECK = "session.recheck"  # the channel-layer message type (handler ``session_recheck``)
CLOSE_UNAUTHORIZED = 4401  # logged out, deactivated, credential or reader key revoked
CLOSE_FORBIDDEN = 4403  # logged in but no longer allowed at this table
CLOSE_MOVED = 4410  # the station moved to another table of its stadium (stations/lobby.py)


def user_group(user_id: int) -> str:
    return f"session.user.{user_id}"


def station_group(station_id: int) -> str:
    return f"session.station.{station_id}"


def reader_group(table_id: int) -> str:
    return f"session.reader.{table_id}"


def session_hash(session_key: str | None) -> str:
    return hashlib.sha256((session_key or "").encode()).hexdigest()[:32]


class SessionGuard:
    """The part of ``tablehub.consumers.TableConsumer`` that keeps a socket's session valid.

    A consumer calls ``guard_session(group)`` once the session started and implements
    ``session_refusal``; it checks the session before handling a message (``within_session``,
    or inside the station's batch)."""

    session_group: str | None = None
    # Provided by the consumer (channels' AsyncJsonWebsocketConsumer and TableConsumer).
    channel_layer: Any
    channel_name: str
    closing: bool

    async def guard_session(self, group: str) -> None:
        await self.channel_layer.group_add(group, self.channel_name)
        self.session_group = group

    def check_session(self) -> tuple[int, str] | None:
        """On the database thread: None while the session holds, else (close code, why)."""
        return None

    async def session_refusal(self, ended: str | None = None) -> tuple[int, str] | None:
        """None while the session holds, else (close code, why); ``ended`` is the hash of a
        session key that was logged out."""
        return await database_sync_to_async(self.check_session)()

    async def within_session(self, content: Any, work: Callable[[], T]) -> T | None:
        """``work()`` on the database thread if the session holds (checked in the same hop,
        so the check costs a query but no extra wait); else refuse, close and return None."""

        def checked() -> tuple[tuple[int, str] | None, T | None]:
            refusal = self.check_session() if self.session_group is not None else None
            return (refusal, None) if refusal is not None else (None, work())

        if self.closing:
            return None
        refusal, result = await database_sync_to_async(checked)()
        if refusal is not None:
            await self.refuse_and_end(content, refusal)
        return result

    async def refuse_and_end(self, content: Any, refusal: tuple[int, str]) -> None:
        code, why = refusal
        await self.send_json(self.refusal("unauthorized", why, content))
        await self.end_session(code, why)

    async def session_recheck(self, message: dict[str, Any]) -> None:
        """The channel-layer message ``revoke`` sends: check again now."""
        if self.session_group is None or self.closing:
            return
        refusal = await self.session_refusal(message.get("ended"))
        if refusal is not None:
            await self.end_session(*refusal)

    async def end_session(self, code: int, why: str) -> None:
        self.closing = True
        log.warning("%s: session ended (%s), closing with %s", self.who(), why, code)
        self.stop_hearing()
        await self.close(code=code)
        await self.leave_session_group()

    async def leave_session_group(self) -> None:
        group, self.session_group = self.session_group, None
        if group is not None:
            try:
                await self.channel_layer.group_discard(group, self.channel_name)
            except Exception:  # the membership expires by itself
                log.warning("%s: could not leave %s", self.who(), group, exc_info=True)

    if TYPE_CHECKING:  # provided by TableConsumer and channels' consumer

        def who(self) -> str: ...

        def stop_hearing(self) -> None: ...

        def refusal(self, code: str, message: str, content: Any) -> dict[str, Any]: ...

        async def send_json(self, content: Any, close: bool = False) -> None: ...

        async def close(self, code: int | None = None, reason: str | None = None) -> None: ...


# -- the checks ------------------------------------------------------------------------------


def tablet_refusal(session_key: str | None, user_id: int, table_id: int) -> tuple[int, str] | None:
    """Whether the tablet's session still holds: the same user logged in with it (active,
    password unchanged), with a tablet role at this table."""
    request = SimpleNamespace(session=_session_store(session_key))
    user = auth.get_user(request)  # type: ignore[arg-type]  # get_user reads only .session
    if not user.is_authenticated or user.pk != user_id:
        return CLOSE_UNAUTHORIZED, "logged out: log in again"
    table = Table.objects.filter(pk=table_id).first()
    if table is None or not roles.works_table(user, table):
        return CLOSE_FORBIDDEN, "your role no longer works this table"
    return None


def _session_store(session_key: str | None) -> Any:
    from importlib import import_module

    from django.conf import settings

    return import_module(settings.SESSION_ENGINE).SessionStore(session_key)


def reader_refusal(table_id: int, key_hash: str) -> tuple[int, str] | None:
    if Table.objects.filter(pk=table_id, reader_key=key_hash).exists():
        return None
    return CLOSE_UNAUTHORIZED, "the reader key was changed: say hello again"


class StationChecks:
    """The station checks of one event loop: those that arrive while a query runs wait for
    the next one, which answers all of them (one query and one database-thread hop for a
    burst of stations, not one each)."""

    def __init__(self) -> None:
        self.waiting: dict[int, tuple[str, list[asyncio.Future]]] = {}
        self.running: asyncio.Task | None = None

    async def holds(self, station_id: int, credential: str) -> bool:
        future = asyncio.get_running_loop().create_future()
        entry = self.waiting.get(station_id)
        if entry is not None and entry[0] == credential:
            entry[1].append(future)
        else:
            self.waiting[station_id] = (credential, [future])
        if self.running is None or self.running.done():
            self.running = asyncio.ensure_future(self._run())
        return await future

    async def _run(self) -> None:
        while self.waiting:
            batch, self.waiting = self.waiting, {}
            try:
                valid = await database_sync_to_async(valid_stations)(
                    {pk: credential for pk, (credential, _) in batch.items()}
                )
            except asyncio.CancelledError:  # the loop is closing: so are its sockets
                for _, futures in batch.values():
                    for future in futures:
                        future.cancel()
                raise
            except Exception as exc:
                for _, futures in batch.values():
                    for future in futures:
                        if not future.done():
                            future.set_exception(exc)
                continue
            for pk, (_, futures) in batch.items():
                for future in futures:
                    if not future.done():
                        future.set_result(pk in valid)


_STATION_CHECKS: dict[asyncio.AbstractEventLoop, StationChecks] = {}


def station_checks() -> StationChecks:
    loop = asyncio.get_running_loop()
    checks = _STATION_CHECKS.get(loop)
    if checks is None:
        for old in [other for other in _STATION_CHECKS if other.is_closed()]:
            del _STATION_CHECKS[old]
        checks = _STATION_CHECKS[loop] = StationChecks()
    return checks


# -- the pushes ------------------------------------------------------------------------------


def revoke(group: str, ended: str | None = None) -> None:
    """Once the current transaction commits, make the sockets of ``group`` check again."""
    message: dict[str, Any] = {"type": RECHECK}
    if ended is not None:
        message["ended"] = ended
    transaction.on_commit(lambda: broadcast.send_to_group(group, message))


def _changed(update_fields: Any, fields: set[str]) -> bool:
    return update_fields is None or bool(fields & set(update_fields))


@receiver(user_logged_out, dispatch_uid="session_guard.logout")
def _logged_out(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    if user is not None and request is not None:
        revoke(user_group(user.pk), ended=session_hash(request.session.session_key))


@receiver(post_save, sender=User, dispatch_uid="session_guard.user_saved")
def _user_saved(sender: Any, instance: User, created: bool, update_fields: Any, **kw: Any) -> None:
    if not created and _changed(update_fields, {"is_active", "password", "is_superuser"}):
        revoke(user_group(instance.pk))


@receiver(post_delete, sender=User, dispatch_uid="session_guard.user_deleted")
def _user_deleted(sender: Any, instance: User, **kwargs: Any) -> None:
    revoke(user_group(instance.pk))


@receiver(m2m_changed, sender=User.groups.through, dispatch_uid="session_guard.groups")
def _groups_changed(sender: Any, instance: Any, action: str, reverse: bool, pk_set: Any, **kw: Any):
    _members_changed(instance, action, reverse, pk_set, lambda group: group.user_set)


@receiver(m2m_changed, sender=Table.staff.through, dispatch_uid="session_guard.staff")
def _staff_changed(sender: Any, instance: Any, action: str, reverse: bool, pk_set: Any, **kw: Any):
    _members_changed(instance, action, not reverse, pk_set, lambda table: table.staff)


def _members_changed(instance: Any, action: str, users_given: bool, pk_set: Any, members) -> None:
    """A many-to-many change between users and groups (or tables): ``users_given`` when
    ``pk_set`` holds users (else ``instance`` is the user)."""
    if action == "pre_clear" and users_given:  # the users are gone once it is cleared
        instance._session_guard_users = list(members(instance).values_list("pk", flat=True))
        return
    if action not in {"post_remove", "post_clear"}:
        return  # a role gained ends no session
    if not users_given:
        user_ids = [instance.pk]
    elif action == "post_clear":
        user_ids = getattr(instance, "_session_guard_users", [])
    else:
        user_ids = list(pk_set or ())
    for user_id in user_ids:
        revoke(user_group(user_id))


@receiver(pre_delete, sender=Group, dispatch_uid="session_guard.group_deleted")
@receiver(post_save, sender=Group, dispatch_uid="session_guard.group_saved")
def _group_changed(sender: Any, instance: Group, **kwargs: Any) -> None:
    if kwargs.get("created"):
        return
    for user_id in instance.user_set.values_list("pk", flat=True):  # a role renamed or gone
        revoke(user_group(user_id))


@receiver(post_save, sender=Station, dispatch_uid="session_guard.station_saved")
@receiver(post_delete, sender=Station, dispatch_uid="session_guard.station_deleted")
def _station_changed(sender: Any, instance: Station, **kwargs: Any) -> None:
    # (a station that moved to another table of its stadium: its sockets at the old table)
    if kwargs.get("created") or not _changed(
        kwargs.get("update_fields"), {"credential", "is_active", "table"}
    ):
        return
    revoke(station_group(instance.pk))


@receiver(post_save, sender=Table, dispatch_uid="session_guard.table_saved")
@receiver(post_delete, sender=Table, dispatch_uid="session_guard.table_deleted")
def _table_changed(sender: Any, instance: Table, **kwargs: Any) -> None:
    if kwargs.get("created") or not _changed(kwargs.get("update_fields"), {"reader_key"}):
        return
    revoke(reader_group(instance.pk))
