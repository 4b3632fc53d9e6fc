"""The import rules of docs/design.md ("Layout and import rules"), checked on the source: the
protocol, the games and the room core stand on nothing above them, and the server is a leaf that
only the CLI starts. A module that breaks a rule fails here with the line that broke it."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import partida

PACKAGE = Path(partida.__file__).parent

# package -> the partida packages it may import (itself always)
MAY_IMPORT = {
    "protocol": set(),
    "games": {"protocol"},
    "room": {"games", "protocol"},
    "competition": {"games", "protocol"},
}
# partida.server may be imported only from these packages (tests and bench are outside the package)
SERVER_IMPORTERS = {"server", "cli"}

TESTS = Path(__file__).resolve().parent
# The tests of the repository as a whole; every other test module sits in its package's folder.
ROOT_TESTS = {"test_layout.py", "test_docs_links.py", "test_bench.py"}


def partida_imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, imported module) for every `partida...` import in the file, at any depth (a lazy
    import inside a function counts as much as one at the top, and so does one for the type
    checker). `from partida.x import y` names both `partida.x` and `partida.x.y`: y may be a
    module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("partida."):
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.startswith("partida."):
                yield node.lineno, node.module
            if node.module == "partida" or node.module.startswith("partida."):
                for alias in node.names:
                    yield node.lineno, f"{node.module}.{alias.name}"


def package_of(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("package", sorted(MAY_IMPORT))
def test_lower_packages_import_nothing_above_them(package: str) -> None:
    allowed = MAY_IMPORT[package] | {package}
    broken = [
        f"{path.relative_to(PACKAGE.parent)}:{line} imports {module}"
        for path in sources()
        if package_of(path) == package
        for line, module in partida_imports(path)
        if module.split(".")[1] not in allowed
    ]
    assert not broken, f"partida.{package} may import only {sorted(allowed)}:\n" + "\n".join(broken)


def test_only_the_cli_imports_the_server() -> None:
    broken = [
        f"{path.relative_to(PACKAGE.parent)}:{line} imports {module}"
        for path in sources()
        if package_of(path) not in SERVER_IMPORTERS
        for line, module in partida_imports(path)
        if module == "partida.server" or module.startswith("partida.server.")
    ]
    assert not broken, "only partida.cli (and tests, bench) may import partida.server:\n" + "\n".join(broken)


def test_the_rules_see_imports() -> None:
    """The checker itself: it finds the imports it is meant to judge (a parser that saw nothing
    would pass every rule)."""
    found = {module for path in sources() if package_of(path) == "room" for _, module in partida_imports(path)}
    assert "partida.room.clocks" in found and "partida.games.base" in found


def test_test_modules_share_helpers_through_helper_modules() -> None:
    """A test module imports nothing from another test module (not even in code it hands a
    subprocess): shared helpers live in tests/helpers.py, the modules beside it and
    tests/fixtures/, so a test module can be renamed, moved, split or deleted without breaking
    another."""
    importing = re.compile(r"\s*(?:from|import)\s+tests\.(?:\w+\.)*test_\w+")
    broken = [
        f"{path.relative_to(TESTS.parent)}:{number}: {line.strip()}"
        for path in sorted(TESTS.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if importing.match(line)
    ]
    assert not broken, "import shared helpers from tests/helpers.py (or a module beside it):\n" + "\n".join(broken)


def test_tests_mirror_the_packages() -> None:
    """tests/ mirrors partida/: a module's tests are in tests/<package>/ (tests/server/ for
    partida/server/...), so finding them takes no lore. Only the checks of the repository as a
    whole (this file, the docs' links, the benchmarks) sit at the root."""
    packages = {path.name for path in PACKAGE.iterdir() if path.is_dir() and any(path.glob("*.py"))}
    misplaced = []
    for path in sorted(TESTS.rglob("test_*.py")):
        where = path.relative_to(TESTS).parts
        if len(where) == 1:
            if path.name not in ROOT_TESTS:
                misplaced.append(f"tests/{path.name}: belongs in tests/<package>/")
        elif where[0] not in packages:
            misplaced.append(f"tests/{'/'.join(where)}: tests/{where[0]}/ names no package of partida/")
    assert not misplaced, "\n".join(misplaced)


def server_imports(server: Path = PACKAGE / "server") -> dict[str, set[str]]:
    """Module of partida/server (dotted, below `partida.server.`) -> the server modules it imports,
    at any depth; `from partida.server import x` counts as importing the module x. `server`: the
    folder to read (scripts/structure_report.py reads other checkouts' too)."""
    names = {
        ".".join(path.relative_to(server).with_suffix("").parts).removesuffix(".__init__"): path
        for path in server.rglob("*.py")
    }
    graph: dict[str, set[str]] = {name: set() for name in names}
    for name, path in names.items():
        for _, target in partida_imports(path):
            module = target.removeprefix("partida.server.")
            if target.startswith("partida.server.") and module in names and module != name:
                graph[name].add(module)
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected sets of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in sorted(graph[module]):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            members = []
            while True:
                member = stack.pop()
                members.append(member)
                if member == module:
                    break
            if len(members) > 1:
                circles.append(sorted(members))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


def test_the_server_has_no_import_circle() -> None:
    """Every module of the server can be read, tested and replaced from the bottom up: no two
    import each other, directly or round a circle. TYPE_CHECKING imports count: they are the
    design's dependencies as much as the others."""
    graph = server_imports()
    assert {"relay", "presence"} <= graph["cluster"]  # the graph sees imports, TYPE_CHECKING ones too
    circles = import_circles(graph)
    assert not circles, "import circles in partida/server:\n" + "\n".join(" <-> ".join(c) for c in circles)


def test_the_circle_finder_finds_circles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert import_circles(graph) == [["a", "b", "c"]]


ROOM = PACKAGE / "room"


def core_field_writes(path: Path) -> Iterator[tuple[int, str]]:
    """(line, target) for each assignment, augmented assignment or `del` whose target lies inside
    a room core: `x.core.field = ...`, `core.field[i] = ...`, `del room.core.field[k]`."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.Delete):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        for target in targets:
            for part in ast.walk(target) if isinstance(target, ast.Tuple | ast.List) else [target]:
                if isinstance(part, ast.Attribute | ast.Subscript) and _inside_a_core(part.value):
                    yield node.lineno, ast.unparse(part)


def _inside_a_core(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute | ast.Subscript):
        if isinstance(node, ast.Attribute) and node.attr == "core":
            return True
        node = node.value
    return isinstance(node, ast.Name) and node.id == "core"


def test_only_the_room_core_writes_its_fields() -> None:
    """The core keeps its invariants (the log is what is stored, seats are fixed once the game
    starts, a result is set once) only if nothing else writes its fields: outside partida/room/
    a core is changed through its commands."""
    writes = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {target}"
        for path in sources()
        if ROOM not in path.parents
        for line, target in core_field_writes(path)
    ]
    assert not writes, "a core field written outside partida/room/:\n" + "\n".join(writes)


def test_the_core_write_finder_finds_writes(tmp_path: Path) -> None:
    """The checker itself: planted writes into a core are found, the driver's own `core` is not."""
    planted = tmp_path / "planted.py"
    planted.write_text(
        "room.core.seats = []\ncore.actions[0] = 1\nself.core = RoomCore()\ndel room.core.endings.offers[1]\n"
        "a, room.core.result = 1, 2\nroom.core.seq += 1\n"
    )
    found = sorted(core_field_writes(planted))
    assert [target for _, target in found] == [
        "room.core.seats",
        "core.actions[0]",
        "room.core.endings.offers[1]",
        "room.core.result",
        "room.core.seq",
    ]
