#!/usr/bin/env python3
"""Checks that the library's top-level modules do not depend on each other in a cycle.

Reads every `crate::NAME` reference in src/ (use declarations and paths), builds the graph of
top-level modules (src/NAME.rs or src/NAME/), and fails when it has a cycle, printing it.
`lib.rs` (the root, which declares everything) and the binaries are not nodes.

    scripts/check-modules.py          check (make lint)
    scripts/check-modules.py --dot    print the graph in Graphviz dot form
"""
import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
ROOTS = {"lib", "main"}


def module_of(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".rs")


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in sorted(SRC.rglob("*.rs")):
        module = module_of(path)
        if module in ROOTS:
            continue
        text = path.read_text(encoding="utf-8")
        # Test modules may use anything; only the library's own code counts.
        text = text.split("#[cfg(test)]\nmod tests", 1)[0]
        targets = set(re.findall(r"\bcrate::(\w+)", text))
        # `use crate::{a, b::c}` groups.
        for group in re.findall(r"\bcrate::\{([^}]*)\}", text):
            targets |= {name.split("::")[0].strip() for name in group.split(",") if name.strip()}
        known = {module_of(p) for p in SRC.rglob("*.rs")} - ROOTS
        edges.setdefault(module, set()).update(t for t in targets if t in known and t != module)
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def main() -> int:
    edges = graph()
    if "--dot" in sys.argv:
        print("digraph modules {")
        for node, targets in sorted(edges.items()):
            for t in sorted(targets):
                print(f"  {node} -> {t};")
        print("}")
        return 0
    cycle = find_cycle(edges)
    if cycle:
        print("module cycle: " + " -> ".join(cycle), file=sys.stderr)
        return 1
    print(f"modules: {len(edges)} top-level modules, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
