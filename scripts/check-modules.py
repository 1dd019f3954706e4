#!/usr/bin/env python3
"""Checks that no modules of src/ (and of server/src/) depend on each other in a cycle, at every
level of folders, and that no file of either is longer than 700 lines; in server/src/, also that
no top-level module names one on its own floor or a floor above (FLOORS). The JavaScript trees
(JS_TREES: the npm package's pkg/ and the editor's www/src/) are held to the same two rules, by
their ES module imports (see `check_js_tree`).

src/ holds two crates: the library (root src/lib.rs) and the program (src/bin/nudge-rules/, root
main.rs). Each is checked on its own: a `crate::` path resolves within the crate of the file
that holds it, and src/bin/ is not a module of the library.

A folder's graph has one node per child module of that folder (a file NAME.rs or a folder
NAME/); the folder's own root (`lib.rs` and `main.rs` for src/, `mod.rs` for the others), which
declares and wires the children, is not a node. There is an edge from A to B when any code of A
(A.rs, or any file under A/) names B through a path: `crate::` paths (use declarations and
paths, `{...}` groups included), `super::` paths (chains of `super` included) and `self::`
paths, each resolved from the file that holds it. So src/'s graph is the graph of top-level
modules (`crate::engine` -> engine), and src/bin/nudge-rules/cli/'s graph has an edge test ->
junit for `super::junit::render` in src/bin/nudge-rules/cli/test.rs. Test modules (`#[cfg(test)] mod tests` at the end of a
file, and files named tests.rs) may use anything and are not read. The script fails on the first
cycle it finds, printing it.

    scripts/check-modules.py          check (make lint)
    scripts/check-modules.py --dot    print every folder's graph of the crates in Graphviz dot form
"""
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The trees checked, each on its own: the root crate's src/ and the server crate's server/src/.
# `SRC` and `BIN` are the tree being checked (set by `check_tree`).
TREES = [REPO / "src", REPO / "server" / "src"]
SRC = TREES[0]
# The server crate's floors, top to bottom (server/src/lib.rs explains each): a top-level module
# may name only modules on a floor below its own, so nothing climbs and no floor depends on
# another of the same floor.
FLOORS = {
    REPO / "server" / "src": [
        {"runtime"},
        {"http"},
        {"app"},
        {"limiter"},
        {"sites"},
        {"store"},
        {"clock", "config", "domain", "metrics", "tasks"},
    ],
}
# The longest source file of a tree, in lines (issue 34: either crate).
MAX_LINES = {REPO / "src": 700, REPO / "server" / "src": 700}
# The programs' crates: src/bin/NAME/, each with its root main.rs.
BIN = SRC / "bin"
# The roots of the library and of the binaries: crate roots, not nodes.
ROOTS = {"lib", "main"}


def crate_dir(path: Path) -> Path:
    """The folder of the crate a file (or folder) of src/ belongs to: src/bin/NAME/ for a
    program's files, src/ for the library's."""
    rel = path.relative_to(SRC).parts
    if len(rel) >= 2 and rel[0] == "bin" and (BIN / rel[1]).is_dir():
        return BIN / rel[1]
    return SRC


def crate_base(path: Path) -> tuple[str, ...]:
    """The module path of a file's crate root: () for the library, ("bin", NAME) for a program."""
    return tuple(crate_dir(path).relative_to(SRC).parts)

# `crate::`, `self::` or one or more `super::`, then the rest of the path (an identifier, `*`,
# or a `{...}` group).
PREFIX = re.compile(r"\b(crate|self|(?:super::)*super)::")
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def module_path(path: Path) -> tuple[str, ...]:
    """The module path of a file under src/: src/json/path.rs -> ("json", "path");
    src/json/mod.rs -> ("json",); src/lib.rs -> (); a program's files are under its crate's
    base: src/bin/nudge-rules/cli/test.rs -> ("bin", "nudge-rules", "cli", "test")."""
    base = crate_base(path)
    parts = list(path.relative_to(crate_dir(path)).with_suffix("").parts)
    if parts[-1] == "mod" or (len(parts) == 1 and parts[0] in ROOTS):
        parts.pop()
    return base + tuple(parts)


def is_root_file(path: Path) -> bool:
    """A file that declares its folder's children (lib.rs, main.rs, NAME/mod.rs)."""
    rel = path.relative_to(crate_dir(path))
    return rel.name == "mod.rs" or (len(rel.parts) == 1 and rel.stem in ROOTS)


def parse_tree(text: str, at: int) -> tuple[list[list[str]], int]:
    """Reads a use tree at `at` (after `prefix::`): `a::b`, `a::{b, c::d}`, `{a, b}`, `*`, `a as
    b`. Returns its paths (lists of identifiers, `*` dropped) and the position after it."""
    while at < len(text) and text[at].isspace():
        at += 1
    if at < len(text) and text[at] == "{":
        paths: list[list[str]] = []
        at += 1
        while at < len(text):
            while at < len(text) and (text[at].isspace() or text[at] == ","):
                at += 1
            if at >= len(text) or text[at] == "}":
                return paths, at + 1
            sub, nxt = parse_tree(text, at)
            if nxt == at:  # not a tree: give up on this group
                return paths, at + 1
            paths.extend(sub)
            at = nxt
        return paths, at
    m = IDENT.match(text, at)
    if not m:
        return ([[]] if text.startswith("*", at) else []), at + (1 if text.startswith("*", at) else 0)
    name = m.group(0)
    at = m.end()
    if text.startswith("::", at):
        subs, at = parse_tree(text, at + 2)
        return [[name] + s for s in subs] or [[name]], at
    return [[name]], at


def references(path: Path) -> set[tuple[str, ...]]:
    """Absolute module paths (possibly followed by item names) that the file names."""
    text = path.read_text(encoding="utf-8")
    # Test modules may use anything; only the library's own code counts.
    text = text.split("#[cfg(test)]\nmod tests", 1)[0]
    here = module_path(path)
    # A file's `self` is its module; its `super` is the module above (for mod.rs, lib.rs and
    # main.rs the module is the folder itself).
    out: set[tuple[str, ...]] = set()
    for m in PREFIX.finditer(text):
        prefix = m.group(1)
        root = crate_base(path)
        if prefix == "crate":
            base: tuple[str, ...] = root
        elif prefix == "self":
            base = here
        else:
            ups = prefix.count("super")
            if ups > len(here) - len(root):
                continue
            base = here[: len(here) - ups]
        for rest in parse_tree(text, m.end())[0]:
            out.add(base + tuple(rest))
    return out


def child_modules(folder: Path) -> set[str]:
    """The child modules of a folder of src/ (files and subfolders), without its root files and
    test-only files."""
    names = set()
    for p in folder.iterdir():
        if p == BIN:  # the programs are crates of their own, not modules of the library
            continue
        if p.is_file() and p.suffix == ".rs" and not is_root_file(p) and p.stem != "tests":
            names.add(p.stem)
        elif p.is_dir() and any(p.rglob("*.rs")):
            names.add(p.name)
    return names


def graphs() -> dict[tuple[str, ...], dict[str, set[str]]]:
    """For every folder (by module path; src/ is ()), the graph of its child modules."""
    refs = {p: references(p) for p in sorted(SRC.rglob("*.rs")) if p.name != "tests.rs"}
    folders = [SRC] + sorted(
        p for p in SRC.rglob("*") if p.is_dir() and p != BIN and any(p.rglob("*.rs"))
    )
    out = {}
    for folder in folders:
        prefix = tuple(folder.relative_to(SRC).parts)
        children = child_modules(folder)
        edges: dict[str, set[str]] = {c: set() for c in sorted(children)}
        for path, targets in refs.items():
            if is_root_file(path) and path.parent == folder:
                continue
            mod = module_path(path)
            if mod[: len(prefix)] != prefix or len(mod) <= len(prefix):
                continue
            source = mod[len(prefix)]
            if source not in children:
                continue
            for target in targets:
                if target[: len(prefix)] != prefix or len(target) <= len(prefix):
                    continue
                name = target[len(prefix)]
                if name in children and name != source:
                    edges[source].add(name)
        out[prefix] = edges
    return out


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


def folder_name(prefix: tuple[str, ...]) -> str:
    return str(SRC.relative_to(REPO)) + "/" + "".join(p + "/" for p in prefix)


def check_tree(tree: Path, dot: bool) -> bool:
    """Checks one tree (sets `SRC` and `BIN` to it); prints its summary or its cycles, or with
    `dot` its graphs. Whether it passed."""
    global SRC, BIN
    SRC = tree
    BIN = SRC / "bin"
    all_graphs = graphs()
    name = str(SRC.relative_to(REPO)) + "/"
    if dot:
        for prefix, edges in sorted(all_graphs.items()):
            for node, targets in sorted(edges.items()):
                for t in sorted(targets):
                    a = "::".join(prefix + (node,))
                    b = "::".join(prefix + (t,))
                    print(f'  "{name}{a}" -> "{name}{b}";')
        return True
    failed = False
    floors = FLOORS.get(tree)
    if floors:
        floor_of = {m: i for i, names in enumerate(floors) for m in names}
        for node, targets in sorted(all_graphs.get((), {}).items()):
            if node not in floor_of:
                print(f"{name}{node}: a top-level module on no floor (FLOORS)", file=sys.stderr)
                failed = True
                continue
            for t in sorted(targets):
                if floor_of.get(t, -1) <= floor_of[node]:
                    print(f"{name}{node} names {name}{t}, which is not on a floor below it", file=sys.stderr)
                    failed = True
    limit = MAX_LINES.get(tree)
    if limit:
        for path in sorted(SRC.rglob("*.rs")):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > limit:
                print(f"{path.relative_to(REPO)}: {lines} lines, more than {limit}", file=sys.stderr)
                failed = True
    for prefix, edges in sorted(all_graphs.items()):
        cycle = find_cycle(edges)
        if cycle:
            print(f"module cycle in {folder_name(prefix)}: " + " -> ".join(cycle), file=sys.stderr)
            failed = True
    if failed:
        return False
    top = len(all_graphs.get((), {}))
    nodes = sum(len(e) for e in all_graphs.values())
    extra = ", nothing climbs" if floors else ""
    extra += f", no file over {limit} lines" if limit else ""
    print(
        f"{name}: {top} top-level modules, {len(all_graphs)} folders, {nodes} modules in all, no cycle{extra}"
    )
    return True


# The JavaScript trees, each with the folders in it that are not its source: generated code (the
# WASM glue, the bundle) and tests (like the crates' test modules, they may be long).
JS_TREES = {
    REPO / "pkg": {"wasm", "dist", "test", "node_modules"},
    REPO / "www" / "src": set(),
}
JS_MAX_LINES = 700
JS_SUFFIXES = {".js", ".mjs"}
# A static import or re-export (`import x from './a.js'`, `import './a.js'`, `export { y } from
# './b.js'`, across lines too) or a dynamic `import('./c.js')`: the module specifier.
JS_IMPORT = re.compile(
    r"""(?:^|[;\n])\s*(?:import|export)\b[^;'"`]*?\bfrom\s*(['"])([^'"]+)\1"""
    r"""|(?:^|[;\n])\s*import\s*(['"])([^'"]+)\3"""
    r"""|\bimport\(\s*(['"])([^'"]+)\5\s*\)"""
)
# Comment lines (`// ...`, and the ` * ...` lines of a block comment): examples in them are no imports.
JS_COMMENT_LINE = re.compile(r"^\s*(?://|/\*|\*).*$", re.M)


def js_files(tree: Path) -> list[Path]:
    """The source files of a JavaScript tree, without its generated and test folders."""
    skip = JS_TREES[tree]
    return sorted(
        p for p in tree.rglob("*")
        if p.suffix in JS_SUFFIXES and p.is_file() and not (set(p.relative_to(tree).parts[:-1]) & skip)
    )


def js_imports(path: Path) -> set[Path]:
    """The files a module imports by a relative specifier (`./x.js`, `../y/z.js`), resolved; bare
    specifiers (packages) are not files of the tree."""
    text = JS_COMMENT_LINE.sub("", path.read_text(encoding="utf-8"))
    out = set()
    for m in JS_IMPORT.finditer(text):
        spec = m.group(2) or m.group(4) or m.group(6)
        if spec.startswith("./") or spec.startswith("../"):
            out.add((path.parent / spec).resolve())
    return out


def check_js_tree(tree: Path) -> bool:
    """Checks one JavaScript tree: no source file over JS_MAX_LINES lines, and no cycle among its
    files through their ES module imports (an import of a file outside the tree, such as www/src/'s
    of pkg/'s renderer, or of a generated one, is no edge). Prints its summary or what failed."""
    name = str(tree.relative_to(REPO)) + "/"
    files = js_files(tree)
    known = {p.resolve(): str(p.relative_to(tree)) for p in files}
    edges = {known[p.resolve()]: {known[t] for t in js_imports(p) if t in known} for p in files}
    failed = False
    for path in files:
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > JS_MAX_LINES:
            print(f"{path.relative_to(REPO)}: {lines} lines, more than {JS_MAX_LINES}", file=sys.stderr)
            failed = True
    cycle = find_cycle(edges)
    if cycle:
        print(f"import cycle in {name}: " + " -> ".join(cycle), file=sys.stderr)
        failed = True
    if failed:
        return False
    folders = len({p.parent for p in files})
    imports = sum(len(t) for t in edges.values())
    print(
        f"{name}: {len(files)} ES modules in {folders} folder{'s' if folders != 1 else ''}, {imports} imports among them, "
        f"no import cycle, no file over {JS_MAX_LINES} lines"
    )
    return True


def main() -> int:
    dot = "--dot" in sys.argv
    if dot:
        print("digraph modules {")
    ok = all([check_tree(tree, dot) for tree in TREES])
    if not dot:
        ok = all([check_js_tree(tree) for tree in JS_TREES]) and ok
    if dot:
        print("}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
