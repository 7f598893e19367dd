"""No module imports a private name (a leading underscore) from another module of the
project: what a module shares it names publicly (issue "One round writer", item 1)."""

import ast
from pathlib import Path

from tests.helpers import parse_source

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("tablehub", "rounds", "stations", "croupier", "payouts", "bench", "tests")


def private_imports(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> list[str]:
    found = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            tree = parse_source(path)
            for node in ast.walk(tree):
                if not isinstance(node, ast.ImportFrom) or node.module is None:
                    continue
                if node.module.split(".")[0] not in packages:
                    continue  # another library's private name is its own business
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        found.append(f"{path.relative_to(root)}:{node.lineno} {alias.name}")
    return found


def test_no_module_imports_another_modules_private_name():
    assert private_imports() == []


def test_the_check_sees_a_private_import(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "a.py").write_text(
        "from app.b import public, _private\nfrom os import _exit\nfrom app.b import __all__\n"
    )
    assert private_imports(tmp_path, ("app",)) == ["app/a.py:1 _private"]
