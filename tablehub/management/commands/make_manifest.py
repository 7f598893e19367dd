"""``manage.py make_manifest [--root DIR] [--output FILE]``: write the SHA-256 of every file of
the installed project (tablehub/program.py), in ``sha256sum``'s format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from tablehub import program


class Command(BaseCommand):
    help = "Write the manifest (SHA-256 of every file) of the installed project."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--root", help="the project's folder (default: this installation)")
        parser.add_argument("--output", help="the manifest (default: TABLEHUB_MANIFEST)")

    def handle(self, *args: Any, **options: Any) -> None:
        root = Path(options["root"]) if options["root"] else program.default_root()
        output = Path(options["output"]) if options["output"] else program.default_manifest()
        count = program.make_manifest(root, output)
        self.stdout.write(f"{output}: {count} files")
