#!/usr/bin/env python3
"""Checks that every link and command of the README and the guides works, and that the
repository stands alone: nothing in it refers to a document outside the tree (make lint).

Markdown files: every tracked `*.md` (README.md, docs/*.md, the contract's pages in
docs/contract/, pkg/README.md, tests/vectors/README.md).

1. Links. Every relative Markdown link or image (`[text](path)`, `![alt](path)`, reference
   definitions `[name]: path`, and HTML `src="path"` / `href="path"`) outside code must name a
   file or folder that exists, relative to the file that holds it (a path starting with `/`:
   relative to the repository). A link with `#anchor` must name a heading of the target Markdown
   file (or of the file itself for a bare `#anchor`), under GitHub's slug rules: the heading's
   text as rendered (code spans, emphasis and links reduced to their text), lowercased, every
   character but letters, digits, spaces, `-` and `_` dropped, spaces turned into `-`, and a
   second heading of the same slug suffixed `-1`, then `-2`, ... Links with a scheme (https:,
   mailto:, ...) are not followed. A link whose text is a section number (`[§15](contract/caps.md)`)
   must point at the page whose title carries that number (`# §15. ...`).
2. Commands. In fenced shell blocks (```sh, bash, shell, console), every `make TARGET` must name
   a target of the Makefile, and every `scripts/...` path (so `python3 scripts/X` too) must exist.
3. Generated blocks. Every `write_between("NAME", ...)` of scripts/*.py must find its
   `<!-- NAME:begin -->` and `<!-- NAME:end -->` markers, once each, in the file it writes
   (`doc=`, or docs/PERFORMANCE.md by default), so a refresh of the figures cannot fail.
4. The tree stands alone. Every tracked text file (code and its comments, strings, Markdown,
   docs/openapi.yaml, schema/, tests/vectors/, scripts/; binary files are skipped) is read for
   references to documents outside the repository: the product specification by its old names
   (the word SPEC followed by a section number, or its file name SPEC.md), the folder it lived in
   (`shared/`, `../shared`) and the machine's tooling notes (TOOLCHAIN.md). The contract is cited
   instead, by its pages in docs/contract/ (docs/contract/README.md says how).
5. Contract citations. In every tracked text file, each `docs/contract/PAGE.md` (or
   `contract/PAGE.md`, as a Markdown link writes it) must name a page that exists, not a range
   (`read-api.md-13`); and each heading quoted right after it (`docs/contract/read-api.md
   "Pagination"`, `[§9](contract/read-api.md) "Pagination"`, several as `"A", "B" and "C"`) must
   be a heading of that page, in the same words (as written or as rendered).

Prints what it checked; on failure every `file:line: what is broken`, and exits 1.
`--self-test` builds a temporary repository holding one bad reference of each kind beside good
ones, and checks that this script fails on each bad one and only on those (make lint runs it).

    python3 scripts/check-docs.py [--self-test]
"""
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHELL_FENCES = {"sh", "bash", "shell", "console", "zsh"}

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
# [text](target "title") and ![alt](target): the target up to a space or the closing parenthesis,
# allowing one level of parentheses inside it.
INLINE_LINK = re.compile(r"!?\[((?:[^\]\[]|\[[^\]]*\])*)\]\(\s*<?([^()\s>]*(?:\([^()\s]*\)[^()\s>]*)*)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$")
HTML_ATTR = re.compile(r"""<(?:img|a|source)\b[^>]*?\b(?:src|href)=["']([^"']+)["']""", re.I)
HTML_ANCHOR = re.compile(r"""<a\b[^>]*?\b(?:name|id)=["']([^"']+)["']""", re.I)
# A code span may run over a line break, not over a blank line (the end of a paragraph).
CODE_SPAN = re.compile(r"(`+)(?:(?!\1)(?!\n[ \t]*\n)[\s\S])+?\1")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
MAKE_CALL = re.compile(r"(?:^|[\s;&|(`$])make((?:\s+[^\s;&|)#`]+)*)")
SCRIPT_PATH = re.compile(r"(?<![\w./-])scripts/[\w./-]*[\w-]")
SECTION_TITLE = re.compile(r"^§(\d+)\.")

# References to documents outside the tree (4.), each with what it refers to. This file, which
# names them to find them, is the one file not read for them.
OUTSIDE = [
    (re.compile(r"\bSPEC(?:\s+(?:section\s+)?|\s*§\s*)\d+"), "the old specification by section number"),
    (re.compile(r"\bSPEC\.md\b"), "the old specification's file"),
    (re.compile(r"(?<![\w-])shared/"), "a file of the shared folder outside the repository"),
    (re.compile(r"\bTOOLCHAIN\.md\b"), "the machine's tooling notes outside the repository"),
]
# A contract page named by its path (5.): docs/contract/PAGE.md, or contract/PAGE.md in a link.
CONTRACT_PATH = re.compile(r"(?<![\w-])(?:docs/)?contract/([\w.-]*?)\.md(-\d+)?")
# What may come between the path and its first quoted heading: a link's closing parenthesis, a
# comma; then further quoted headings joined by commas and "and".
FIRST_QUOTE = re.compile(r"\)?,?[ \t]+\"([^\"\n]+)\"")
NEXT_QUOTE = re.compile(r"(?:,[ \t]*(?:and[ \t]+)?|[ \t]+and[ \t]+)\"([^\"\n]+)\"")
# The start of a line, up to a contract path, that makes the path a Markdown link's target.
LINK_TARGET_BEFORE = re.compile(r"\]\(\s*<?(?:\.{1,2}/)*(?:docs/)?$")
SECTION_LINK = re.compile(r"\[§(\d+)\]\(\s*<?((?:[^()\s>#]*/)?contract/[\w.-]+\.md)")


def slug(text):
    """GitHub's anchor of a heading whose Markdown source is `text`."""
    text = rendered(text)
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def rendered(text):
    """A heading's Markdown source as it reads: links and images by their text, no inline HTML,
    no code marks or emphasis markers."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links and images: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML tags
    text = text.replace("`", "")
    return re.sub(r"(\*\*|__|\*|\b_|_\b)", "", text)  # emphasis markers


def scan(path):
    """(prose lines, shell lines, headings, titles) of a Markdown file: prose lines are (number,
    text) outside fences, shell lines (number, text) inside shell fences, headings their slugs,
    titles each heading's source text and its rendered text."""
    prose, shell, slugs, seen, titles = [], [], set(), {}, []
    fence = None
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = (m.group(1)[0], len(m.group(1)), m.group(2).lower())
            continue
        if fence is not None:
            closing = re.match(r"^ {0,3}(`{3,}|~{3,})\s*$", line)
            if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= fence[1]:
                fence = None
            elif fence[2] in SHELL_FENCES:
                shell.append((number, line))
            continue
        prose.append((number, line))
        h = HEADING.match(line)
        if h:
            base = slug(h.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            slugs.add(base if n == 0 else f"{base}-{n}")
            titles.append((len(h.group(1)), h.group(2), rendered(h.group(2)).strip()))
        for a in HTML_ANCHOR.findall(line):
            slugs.add(a)
    return prose, shell, slugs, titles


def links(prose):
    """(line number, text, target) of every link of the prose lines, a link's text or target may
    run over a line break; code spans are not read."""
    lines = dict(prose)
    last = max(lines, default=0)
    # The prose with fenced lines left empty, so that offsets give line numbers; a code span
    # becomes spaces of its length.
    text = "\n".join(lines.get(n, "") for n in range(1, last + 1))
    text = CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    found = []
    for m in INLINE_LINK.finditer(text):
        found.append((text.count("\n", 0, m.start(2)) + 1, m.group(1), m.group(2)))
    for m in HTML_ATTR.finditer(text):
        found.append((text.count("\n", 0, m.start(1)) + 1, "", m.group(1)))
    for number, line in prose:
        m = REF_DEF.match(line)
        if m:
            found.append((number, "", m.group(1)))
    return sorted(found)


_scans = {}


def scanned(path):
    if path not in _scans:
        _scans[path] = scan(path)
    return _scans[path]


def anchors(path):
    return scanned(path)[2]


def headings(path):
    """Every heading of a Markdown file, as written and as rendered."""
    return {t for _, source, text in scanned(path)[3] for t in (source, text)}


def section_number(path):
    """The number of a contract page (its title `# §N. ...`; §1 for the contract's README)."""
    titles = scanned(path)[3]
    if titles and titles[0][0] == 1:
        m = SECTION_TITLE.match(titles[0][2])
        if m:
            return int(m.group(1))
    return 1 if path.name == "README.md" else None


def tracked(root):
    """Every tracked file of the repository at `root` (git ls-files), as paths."""
    out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True)
    return [root / name for name in out.stdout.decode().split("\0") if name]


def text_of(path):
    """The text of a tracked file, or None for a binary file (a NUL byte, or not UTF-8)."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return None  # deleted in the work tree, or a submodule
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def make_targets(root):
    targets = set()
    makefile = root / "Makefile"
    if not makefile.exists():
        return targets
    for line in makefile.read_text().split("\n"):
        m = re.match(r"^([A-Za-z0-9_.%/-]+(?:\s+[A-Za-z0-9_.%/-]+)*)\s*::?(?!=)", line)
        if m:
            targets.update(t for t in m.group(1).split() if not t.startswith("."))
    return targets


WRITE_BETWEEN = re.compile(r"write_between\(\s*\"([\w-]+)\"([^)]*)\)")
DOC_PATH = re.compile(r"\"docs\"\s*/\s*\"([\w.-]+)\"")


def check_markers(root, errors):
    """Checks that the markers every script writes between exist; returns how many it checked."""
    checked = 0
    for script in sorted((root / "scripts").glob("*.py")):
        if script.name == Path(__file__).name:
            continue
        text = script.read_text()
        for number, line in enumerate(text.split("\n"), 1):
            for m in WRITE_BETWEEN.finditer(line):
                name, rest = m.group(1), m.group(2)
                doc = DOC_PATH.search(rest)
                target = root / "docs" / (doc.group(1) if doc else "PERFORMANCE.md")
                checked += 1
                content = target.read_text() if target.exists() else ""
                for marker in (f"<!-- {name}:begin -->", f"<!-- {name}:end -->"):
                    if content.count(marker) != 1:
                        errors.append(
                            f"{script.relative_to(root)}:{number}: writes between {marker!r} markers, "
                            f"which {target.relative_to(root)} has {content.count(marker)} times (1 expected)"
                        )
    return checked


def check_markdown(root, path, targets, counts, errors):
    """Links, section numbers and shell commands of one Markdown file (1. and 2.)."""
    rel = path.relative_to(root)
    prose, shell, _, _ = scanned(path)
    for number, text, target in links(prose):
        if not target or SCHEME.match(target):
            continue
        counts["links"] += 1
        file_part, _, anchor = target.partition("#")
        if file_part:
            base = root if file_part.startswith("/") else path.parent
            dest = (base / file_part.lstrip("/")).resolve()
            if not dest.exists():
                errors.append(f"{rel}:{number}: broken link {target!r}: no file {file_part}")
                continue
        else:
            dest = path
        section = re.fullmatch(r"§(\d+)", text.strip())
        if section and dest.suffix == ".md" and dest.parent == (root / "docs" / "contract").resolve():
            counts["sections"] += 1
            if section_number(dest) != int(section.group(1)):
                errors.append(
                    f"{rel}:{number}: link [{text}]({target}): {dest.name} is "
                    f"§{section_number(dest)}, not {text}"
                )
        if anchor:
            counts["anchors"] += 1
            if dest.suffix != ".md" or dest.is_dir():
                continue
            if anchor not in anchors(dest):
                where = dest.relative_to(root) if dest.is_relative_to(root) else dest
                errors.append(f"{rel}:{number}: broken link {target!r}: no heading #{anchor} in {where}")
    for number, line in shell:
        code = line.split(" #", 1)[0] if not line.lstrip().startswith("#") else ""
        for m in MAKE_CALL.finditer(code):
            words = m.group(1).split()
            names = [w for w in words if not w.startswith("-") and "=" not in w]
            for name in names:
                counts["make"] += 1
                if name not in targets:
                    errors.append(f"{rel}:{number}: `make {name}`: no target {name!r} in the Makefile")
        for m in SCRIPT_PATH.finditer(line):
            counts["scripts"] += 1
            if not (root / m.group(0)).exists():
                errors.append(f"{rel}:{number}: {m.group(0)}: no such file")


def check_references(root, path, text, counts, errors):
    """References outside the tree (4.) and citations of the contract (5.) in one text file."""
    rel = path.relative_to(root)
    contract = root / "docs" / "contract"
    for number, line in enumerate(text.split("\n"), 1):
        for pattern, what in OUTSIDE:
            for m in pattern.finditer(line):
                errors.append(
                    f"{rel}:{number}: {m.group(0)!r} refers to {what}: cite the contract's page "
                    f"instead (docs/contract/README.md)"
                )
        for m in CONTRACT_PATH.finditer(line):
            counts["citations"] += 1
            page = contract / f"{m.group(1)}.md"
            in_link = bool(LINK_TARGET_BEFORE.search(line[: m.start()]))
            if m.group(2):
                errors.append(
                    f"{rel}:{number}: {m.group(0)!r}: a range of sections is not a page; name each "
                    f"page (docs/contract/README.md lists them)"
                )
            if not page.is_file():
                if not in_link or path.suffix != ".md":  # a Markdown link's target: see 1.
                    errors.append(f"{rel}:{number}: {m.group(0)!r}: no page docs/contract/{m.group(1)}.md")
                continue
            rest, at = line, m.end()
            first = FIRST_QUOTE.match(rest, at)
            quoted = []
            if first:
                quoted.append(first.group(1))
                at = first.end()
                while (more := NEXT_QUOTE.match(rest, at)) is not None:
                    quoted.append(more.group(1))
                    at = more.end()
            for name in quoted:
                counts["quoted"] += 1
                if name not in headings(page):
                    errors.append(
                        f"{rel}:{number}: {m.group(0)} {name!r}: no such heading in "
                        f"docs/contract/{page.name}"
                    )


def check(root):
    """Every check on the repository at `root`; returns (lines to print, errors)."""
    errors = []
    counts = {key: 0 for key in ("files", "links", "anchors", "sections", "make", "scripts",
                                 "texts", "citations", "quoted")}
    counts["markers"] = check_markers(root, errors)
    targets = make_targets(root)
    files = tracked(root)
    markdown = sorted(p for p in files if p.suffix == ".md" and p.is_file())
    for path in markdown:
        counts["files"] += 1
        check_markdown(root, path, targets, counts, errors)
    for path in files:
        text = text_of(path)
        if text is None or path == root / "scripts" / Path(__file__).name:
            continue
        counts["texts"] += 1
        check_references(root, path, text, counts, errors)
    pages = [p for p in markdown if p.parent == root / "docs" / "contract"]
    others = [str(p.relative_to(root)) for p in markdown if p not in pages]
    report = [
        f"check-docs: {', '.join(others)}, docs/contract/*.md ({len(pages)} pages)",
        f"check-docs: {counts['files']} Markdown files, {counts['links']} relative links "
        f"({counts['anchors']} with an anchor, {counts['sections']} to a contract section by its "
        f"number), {counts['make']} make targets and {counts['scripts']} script paths in shell "
        f"blocks, {counts['markers']} generated blocks written by scripts/*.py",
        f"check-docs: {counts['texts']} tracked text files read for references outside the tree; "
        f"{counts['citations']} citations of docs/contract/ pages, {counts['quoted']} quoted "
        f"headings of them",
    ]
    return report, errors


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if sys.argv[1:]:
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        return 2
    report, errors = check(ROOT)
    print("\n".join(report))
    if errors:
        print("\n".join(errors), file=sys.stderr)
        print(f"check-docs: {len(errors)} broken", file=sys.stderr)
        return 1
    print("check-docs: all good")
    return 0


# The self-test's repository: a small contract, good citations of every form, then one bad
# reference of each kind, each with a piece of the error it must give.
OLD = "SPEC"
GOOD = {
    "docs/contract/README.md": "# The contract\n\n## §1. Names\n\n- [§15](caps.md)\n",
    "docs/contract/caps.md": "# §15. Caps\n\n## Measured uplift\n\n### `GET .../{id}/attempts`\n\n"
                             "## Relay\n\nSee [§1](README.md) and [uplift](#measured-uplift).\n",
    "docs/GUIDE.md": '# Guide\n\n[§15](contract/caps.md) "Measured uplift", "Relay" and [§1](contract/README.md).\n'
                     "A SPECIAL case, a spec, specified; shared by all; unshared/ too.\n",
    "src/lib.rs": '//! Caps (docs/contract/caps.md "Measured uplift", "Relay" and "`GET .../{id}/attempts`").\n'
                  'const PAGE: &str = "docs/contract/caps.md", "x";\n',
    "scripts/tool.py": '"""Cites docs/contract/caps.md; step 6, "not a heading" is prose."""\n',
}
BAD = {
    "src/old.rs": (f"// as {OLD} 15 says\n", f"'{OLD} 15' refers to the old specification by section number"),
    "src/old_section.rs": (f"// {OLD} §9\n", f"'{OLD} §9' refers"),
    "scripts/old.py": (f"# see {OLD}.md\n", f"'{OLD}.md' refers to the old specification's file"),
    "docs/openapi.yaml": ("description: ../shared/seed/000.txt\n", "a file of the shared folder"),
    "scripts/setup.sh": ("# TOOLCHAIN.md says so\n", "the machine's tooling notes"),
    "pkg/x.js": ("// docs/contract/nope.md\n", "'docs/contract/nope.md': no page docs/contract/nope.md"),
    "server/y.rs": ('// docs/contract/caps.md "Nope"\n', "docs/contract/caps.md 'Nope': no such heading in docs/contract/caps.md"),
    "server/z.rs": ('// docs/contract/caps.md "Relay", "Missing"\n', "docs/contract/caps.md 'Missing': no such heading"),
    "server/range.rs": ("// docs/contract/caps.md-13\n", "'docs/contract/caps.md-13': a range of sections is not a page"),
    "docs/WRONG.md": ("# Wrong\n\n[§9](contract/caps.md)\n", "link [§9](contract/caps.md): caps.md is §15, not §9"),
    "docs/QUOTED.md": ('# Quoted\n\n[§15](contract/caps.md) "Nope"\n', "contract/caps.md 'Nope': no such heading"),
    "docs/contract/broken.md": ("# §16. Broken\n\n[x](missing.md) [y](caps.md#nope)\n",
                                "broken link 'missing.md': no file missing.md"),
    "docs/contract/anchor.md": ("# §17. Anchor\n\n[y](caps.md#nope)\n", "broken link 'caps.md#nope': no heading #nope"),
}


def self_test():
    """Builds a repository with GOOD alone (it must pass) and with GOOD and BAD (it must fail on
    each bad file, with its message, and on no good one)."""
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        for name, text in GOOD.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        (root / "docs" / "img.png").write_bytes(b"\x89PNG\0 " + OLD.encode() + b" 15")
        subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
        _scans.clear()
        _, errors = check(root)
        if errors:
            failures.append("the good tree fails:\n  " + "\n  ".join(errors))
        for name, (text, _) in BAD.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
        _scans.clear()
        _, errors = check(root)
        for name, (_, expected) in BAD.items():
            if not any(e.startswith(f"{name}:") and expected in e for e in errors):
                failures.append(f"no error {expected!r} for {name}; errors:\n  " + "\n  ".join(errors))
        for error in errors:
            if not any(error.startswith(f"{name}:") for name in BAD):
                failures.append(f"an error on a good file: {error}")
    _scans.clear()
    if failures:
        print("\n".join(failures), file=sys.stderr)
        print(f"check-docs --self-test: {len(failures)} failed", file=sys.stderr)
        return 1
    print(f"check-docs --self-test: a good tree passes; each of {len(BAD)} bad references fails "
          f"with its message ({', '.join(BAD)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
