"""The server's structure in figures, for docs/design.md: import circles in partida/server/, the
largest classes (lines, methods), and each service's constructor argument count. Read from the
source alone (nothing of it is imported or run), so it reads an older checkout as well; the import
graph is read as tests/test_layout.py reads it, so the figures and the rule agree:

    python scripts/structure_report.py             # this checkout
    python scripts/structure_report.py --root OLD  # another one, e.g. a worktree of an old commit
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.test_layout, from the root

from tests.test_layout import import_circles, server_imports  # the layout rule's own reading

SERVICES = ("Service", "Directory", "Cluster", "Presence", "Rooms", "Room", "Shell", "Greeting", "Director")


def server_modules(server: Path) -> dict[str, Path]:
    return {
        ".".join(path.relative_to(server).with_suffix("").parts).removesuffix(".__init__"): path
        for path in sorted(server.rglob("*.py"))
    }


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
        "import_circles": import_circles(server_imports(server)),
        "largest_classes": sorted(found, key=lambda entry: -int(entry["lines"]))[: args.top],
        "constructor_arguments": dict(sorted(services.items())),
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
