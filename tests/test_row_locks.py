"""Row locks are FOR NO KEY UPDATE (docs/round-core.md): they wait for one another, never for
the foreign-key checks PostgreSQL makes when a transaction that wrote rows naming the locked
row commits. With FOR UPDATE, a dealer taking over a table and a batch of station messages
deadlocked (the table's row, then the round's; the round's, then the check at the commit)."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

from django.db import connection, connections, transaction

from tablehub.models import Jurisdiction, Table, TableConfig

ROOT = Path(__file__).resolve().parents[1]
APPS = ("rounds", "croupier", "stations", "payouts", "tablehub")


def test_every_row_lock_of_the_code_is_no_key():
    plain = []
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "select_for_update"
                ):
                    no_key = [k for k in node.keywords if k.arg == "no_key"]
                    if not (no_key and getattr(no_key[0].value, "value", None) is True):
                        plain.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert plain == []


def test_a_commit_naming_a_locked_table_does_not_wait_for_its_lock(postgres_url, transactional_db):
    jurisdiction = Jurisdiction.objects.create(code="nv", name="Nevada")
    table = Table.objects.create(name="t", jurisdiction=jurisdiction)
    locked, done = threading.Event(), threading.Event()

    def hold_the_tables_lock() -> None:  # as croupier.dealers.take_over holds it
        try:
            with transaction.atomic():
                Table.objects.select_for_update(no_key=True).get(pk=table.pk)
                locked.set()
                done.wait(10)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold_the_tables_lock)
    holder.start()
    try:
        assert locked.wait(10)
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '2s'")
            TableConfig.objects.create(table=table, version=1, rules={})  # its key: checked
        assert TableConfig.objects.filter(table=table).count() == 1
    finally:
        done.set()
        holder.join(10)
