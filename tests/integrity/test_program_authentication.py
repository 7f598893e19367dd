"""Program authentication (tablehub/program.py): make_manifest writes the SHA-256 of every file
of an installed copy, verify_install names each changed, missing and extra file; the last
result is on /health/ and in the admin, runs every 24 hours from Celery beat, and a
jurisdiction that requires it keeps its tables from opening while it fails."""

import hashlib
import shutil
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from croupier.tablet import open_table
from rounds.engine import EngineError
from tablehub import program
from tablehub.models import InstallCheck
from tablehub.tasks import verify_install
from tests.admin.conftest import *  # noqa: F403
from tests.admin.conftest import PASSWORD, default_pays, quick_settings, wa_config  # noqa: F401


@pytest.fixture
def installed(tmp_path) -> Path:
    """A copy of the installed project, with its manifest."""
    root = tmp_path / "installed"
    for name in program.ROOTS:
        source = Path(settings.BASE_DIR) / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            root.mkdir(exist_ok=True)
            shutil.copy(source, root / name)
    call_command("make_manifest", "--root", str(root), "--output", str(root / "MANIFEST.sha256"))
    return root


def verify(root: Path, capsys) -> tuple[int, list[str]]:
    args = ("--root", str(root), "--manifest", str(root / "MANIFEST.sha256"))
    try:
        call_command("verify_install", *args)
    except CommandError as failed:
        return failed.returncode, capsys.readouterr().err.splitlines()
    return 0, capsys.readouterr().out.splitlines()


@pytest.mark.django_db
def test_an_installed_copy_verifies_and_each_changed_missing_extra_file_is_named(installed, capsys):
    manifest = (installed / "MANIFEST.sha256").read_text().splitlines()
    # sha256sum's format: any tool checks it.
    chain = (installed / "rounds" / "chain.py").read_bytes()
    assert f"{hashlib.sha256(chain).hexdigest()}  rounds/chain.py" in manifest
    assert manifest == sorted(manifest, key=lambda line: line[66:])
    assert not any("__pycache__" in line or line.endswith(".pyc") for line in manifest)
    status, out = verify(installed, capsys)
    digest = hashlib.sha256((installed / "MANIFEST.sha256").read_bytes()).hexdigest()
    assert (status, out) == (
        0,
        [f"the installation verifies: {len(manifest)} files, manifest {digest}"],
    )
    assert InstallCheck.objects.get().ok

    (installed / "rounds" / "chain.py").write_bytes(chain + b"\n# one line more\n")
    (installed / "payouts" / "ledger.py").unlink()
    (installed / "stations" / "static" / "stations" / "extra.js").write_text("// not approved\n")
    status, err = verify(installed, capsys)
    assert (status, err) == (
        1,
        [
            "changed: rounds/chain.py",
            "missing: payouts/ledger.py",
            "extra: stations/static/stations/extra.js",
        ],
    )
    check = program.last_check()
    assert check is not None and not check.ok
    assert (check.changed, check.missing, check.extra, check.manifest_sha256) == (
        ["rounds/chain.py"],
        ["payouts/ledger.py"],
        ["stations/static/stations/extra.js"],
        digest,
    )


@pytest.mark.django_db
def test_no_manifest_is_a_failure(tmp_path, capsys):
    status, err = verify(tmp_path, capsys)
    assert status == 1
    assert err == [f"no manifest at {tmp_path / 'MANIFEST.sha256'}: run manage.py make_manifest"]


def test_the_last_result_is_on_health_and_in_the_admin(client, login, installed, capsys):
    assert client.get("/health/").json()["install"] is None
    (installed / "manage.py").write_text("changed\n")
    verify(installed, capsys)
    install = client.get("/health/").json()["install"]
    assert (install["ok"], install["changed"], install["missing"], install["extra"]) == (
        False,
        ["manage.py"],
        [],
        [],
    )
    page = login("superuser").get("/admin/tablehub/installcheck/")
    assert page.status_code == 200 and "changed: manage.py" in page.content.decode()


def test_celery_beat_runs_it_every_24_hours(db, settings):
    entry = settings.CELERY_BEAT_SCHEDULE["verify-install"]
    assert (entry["task"], entry["schedule"]) == ("tablehub.tasks.verify_install", 86400)
    settings.TABLEHUB_MANIFEST = str(Path(settings.BASE_DIR) / "no-such-manifest")
    assert verify_install.apply().get() is False  # the task, run here as a worker runs it
    assert InstallCheck.objects.get().error.startswith("no manifest at")


def test_a_jurisdiction_that_requires_it_keeps_tables_closed_while_it_fails(
    table, installed, capsys
):
    open_table(table)  # not required: opens whatever the checks say
    table.is_open = False
    table.save(update_fields=["is_open"])
    jurisdiction = table.jurisdiction
    jurisdiction.install_check_required = True
    jurisdiction.save()
    table.refresh_from_db()
    with pytest.raises(EngineError) as refused:
        open_table(table)
    assert refused.value.code == "install_unverified"
    assert "no check has run" in refused.value.reason
    (installed / "manage.py").write_text("changed\n")
    verify(installed, capsys)
    with pytest.raises(EngineError) as refused:
        open_table(table)
    assert "1 changed, 0 missing, 0 extra" in refused.value.reason
    call_command(
        "make_manifest", "--root", str(installed), "--output", str(installed / "MANIFEST.sha256")
    )
    assert verify(installed, capsys)[0] == 0
    open_table(table)
    table.refresh_from_db()
    assert table.is_open
