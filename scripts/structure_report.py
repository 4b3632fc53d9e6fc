"""The server's structure in figures, for docs/design.md: import circles in partida/server/, the
largest classes (lines, methods), and each service's constructor argument count. Read from the
source alone (nothing is imported or run), so it reads an older checkout as well:

    python scripts/structure_report.py             # this checkout
    python scripts/structure_report.py --root OLD  # another one, e.g. a worktree of an old commit
"""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path

SERVICES = ("Service", "Directory", "Cluster", "Presence", "Rooms", "Room", "Shell", "Greeting", "Director")


def server_modules(server: Path) -> dict[str, Path]:
    return {
        ".".join(path.relative_to(server).with_suffix("").parts).removesuffix(".__init__"): path
        for path in sorted(server.rglob("*.py"))
    }


def import_graph(server: Path) -> dict[str, set[str]]:
    """Module -> the server modules it imports, at any depth, TYPE_CHECKING ones included."""
    names = server_modules(server)
    graph: dict[str, set[str]] = {name: set() for name in names}
    for name, path in names.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            else:
                continue
            for target in targets:
                module = target.removeprefix("partida.server.")
                if target.startswith("partida.server.") and module in names and module != name:
                    graph[name].add(module)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected sets of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

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
                found.append(sorted(members))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def classes(server: Path) -> list[dict[str, object]]:
    found = []
    for name, path in server_modules(server).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            methods = [f for f in node.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)]
            init = next((f for f in methods if f.name == "__init__"), None)
            arguments = None
            if init is not None:
                args = init.args
                arguments = len(args.posonlyargs) + len(args.args) - 1 + len(args.kwonlyargs)
            found.append(
                {
                    "class": f"{name}.{node.name}",
                    "lines": (node.end_lineno or node.lineno) - node.lineno + 1,
                    "methods": len(methods),
                    "constructor_arguments": arguments,
                }
            )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent, help="a checkout")
    parser.add_argument("--top", type=int, default=5, help="how many of the largest classes to list (default 5)")
    args = parser.parse_args()
    server = args.root / "partida" / "server"
    if not server.is_dir():
        parser.error(f"{args.root} is not a checkout of Partida (no partida/server/ in it)")
    found = classes(server)
    services = {
        entry["class"]: entry["constructor_arguments"]
        for entry in found
        if entry["constructor_arguments"] is not None and str(entry["class"]).endswith(SERVICES)
    }
    report = {
        "modules": len(server_modules(server)),
        "import_circles": circles(import_graph(server)),
        "largest_classes": sorted(found, key=lambda entry: -int(entry["lines"]))[: args.top],
        "constructor_arguments": dict(sorted(services.items())),
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
