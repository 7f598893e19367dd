"""``manage.py verify_install [--root DIR] [--manifest FILE]``: check the installed project's
files against the manifest (tablehub/program.py) and keep the result; exit 1 naming each
changed, missing or extra file, 0 when they all verify."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from tablehub import program


class Command(BaseCommand):
    help = "Program authentication: check every installed file against the manifest."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--root", help="the project's folder (default: this installation)")
        parser.add_argument("--manifest", help="the manifest (default: TABLEHUB_MANIFEST)")

    def handle(self, *args: Any, **options: Any) -> None:
        root = Path(options["root"]) if options["root"] else None
        manifest = Path(options["manifest"]) if options["manifest"] else None
        check = program.check_and_record(root, manifest)
        if not check.ok:
            lines = program.check_lines(check)
            for line in lines:
                self.stderr.write(line)
            raise CommandError(
                f"the installation does not verify: {len(lines)} file(s)", returncode=1
            )
        self.stdout.write(
            f"the installation verifies: {check.files} files, manifest {check.manifest_sha256}"
        )
