"""Program authentication: the SHA-256 of every file of the installed project, written once
as a manifest (``make_manifest``) and checked against the files (``verify_install``) at
start-up and every 24 hours (Celery beat); the last result is kept (``InstallCheck``),
shown in the admin and on /health/, and a jurisdiction that requires it
(``install_check_required``) keeps its tables from opening while the last check failed.

The manifest is ``sha256sum``'s format (``<hex>  <path>``, one file a line, sorted), so
``sha256sum -c MANIFEST.sha256`` in the project's folder checks it without this code. The
files are those of the project's code and data: ``manage.py``, ``pyproject.toml`` and every
file under the apps and ``templates/`` (compiled ``.pyc`` files and ``__pycache__`` left out).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import connection

from rounds.engine import EngineError
from tablehub.models import InstallCheck, Table

log = logging.getLogger("tablehub.program")

ROOTS = (
    "manage.py",
    "pyproject.toml",
    "tablehub",
    "rounds",
    "stations",
    "croupier",
    "payouts",
    "templates",
)
SKIPPED_DIRS = {"__pycache__"}
SKIPPED_SUFFIXES = {".pyc", ".pyo"}


def default_root() -> Path:
    return Path(settings.BASE_DIR)


def default_manifest() -> Path:
    return Path(settings.TABLEHUB_MANIFEST)


def project_files(root: Path) -> dict[str, str]:
    """Every file of the project under ``root`` (relative path, with ``/``) -> its SHA-256."""
    found: dict[str, str] = {}
    for name in ROOTS:
        top = root / name
        paths = [top] if top.is_file() else sorted(top.rglob("*")) if top.is_dir() else []
        for path in paths:
            relative = path.relative_to(root)
            if not path.is_file() or path.suffix in SKIPPED_SUFFIXES:
                continue
            if SKIPPED_DIRS & set(relative.parts):
                continue
            found[relative.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def make_manifest(root: Path, manifest: Path) -> int:
    """Write the manifest of the files under ``root``; how many files it lists."""
    files = project_files(root)
    manifest.write_text("".join(f"{digest}  {path}\n" for path, digest in sorted(files.items())))
    return len(files)


def read_manifest(manifest: Path) -> dict[str, str]:
    listed: dict[str, str] = {}
    for number, line in enumerate(manifest.read_text().splitlines(), 1):
        digest, sep, path = line.partition("  ")
        if not sep or len(digest) != 64:
            raise ValueError(f"{manifest} line {number} is not '<sha256>  <path>'")
        listed[path] = digest
    return listed


@dataclass
class Result:
    """What a check found: files whose content changed, listed but missing, present but not
    listed; ``error`` when there is no manifest to check against."""

    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    error: str = ""
    manifest_sha256: str = ""
    files: int = 0

    @property
    def ok(self) -> bool:
        return not (self.changed or self.missing or self.extra or self.error)


def verify(root: Path, manifest: Path) -> Result:
    """The files under ``root`` checked against ``manifest``."""
    if not manifest.is_file():
        return Result(error=f"no manifest at {manifest}: run manage.py make_manifest")
    try:
        listed = read_manifest(manifest)
    except (ValueError, UnicodeDecodeError) as exc:
        return Result(error=str(exc))
    files = project_files(root)
    return Result(
        changed=sorted(p for p in listed.keys() & files.keys() if listed[p] != files[p]),
        missing=sorted(listed.keys() - files.keys()),
        extra=sorted(files.keys() - listed.keys()),
        manifest_sha256=hashlib.sha256(manifest.read_bytes()).hexdigest(),
        files=len(files),
    )


def check_and_record(root: Path | None = None, manifest: Path | None = None) -> InstallCheck:
    """Verify the installed project and keep the result (the admin, /health/ and the tables'
    opening read the last one); a failed check is logged as an error."""
    result = verify(root or default_root(), manifest or default_manifest())
    row = InstallCheck.objects.create(
        ok=result.ok,
        files=result.files,
        manifest_sha256=result.manifest_sha256,
        changed=result.changed,
        missing=result.missing,
        extra=result.extra,
        error=result.error,
    )
    if result.ok:
        log.info(
            "program authentication: %s files verify (manifest %s)",
            result.files,
            row.manifest_sha256,
        )
    else:
        log.error("program authentication failed: %s", "; ".join(check_lines(row)))
    return row


def check_lines(check: InstallCheck) -> list[str]:
    """What a failed check found, one line each: ``changed: <path>``, ``missing: ...``,
    ``extra: ...`` (or why it could not check)."""
    if check.error:
        return [check.error]
    return (
        [f"changed: {p}" for p in check.changed]
        + [f"missing: {p}" for p in check.missing]
        + [f"extra: {p}" for p in check.extra]
    )


def last_check() -> InstallCheck | None:
    return InstallCheck.objects.order_by("-pk").first()


def as_data(check: InstallCheck | None) -> dict[str, object] | None:
    """The check as /health/ shows it."""
    if check is None:
        return None
    return {
        "ok": check.ok,
        "checked_at": check.checked_at.isoformat(),
        "files": check.files,
        "manifest_sha256": check.manifest_sha256,
        "changed": check.changed,
        "missing": check.missing,
        "extra": check.extra,
        "error": check.error or None,
    }


def refuse_if_unverified(table: Table) -> None:
    """A table whose jurisdiction requires program authentication opens only while the last
    check verified (``install_unverified``)."""
    if not table.jurisdiction.install_check_required:
        return
    check = last_check()
    if check is None or not check.ok:
        why = "no check has run" if check is None else "; ".join(_summary(check))
        raise EngineError(
            f"the installed program is not verified ({why}): the jurisdiction keeps the "
            "table closed until manage.py verify_install passes",
            code="install_unverified",
        )


def _summary(check: InstallCheck) -> list[str]:
    if check.error:
        return [check.error]
    return [f"{len(check.changed)} changed, {len(check.missing)} missing, {len(check.extra)} extra"]


def check_at_start() -> None:
    """The start-up check (a server process, a Celery worker), in a thread of its own so that
    starting is not delayed; only with ``TABLEHUB_VERIFY_INSTALL_AT_START``."""
    if not settings.TABLEHUB_VERIFY_INSTALL_AT_START:
        return

    def run() -> None:
        try:
            check_and_record()
        except Exception:  # logged: a failed check must not stop the server
            log.exception("program authentication at start-up failed to run")
        finally:
            connection.close()  # this thread's own connection

    threading.Thread(target=run, name="verify-install", daemon=True).start()
