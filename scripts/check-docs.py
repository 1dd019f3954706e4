#!/usr/bin/env python3
"""Checks that every link and command of the README and the guides works (make lint).

Files: README.md, docs/*.md and pkg/README.md.

1. Links. Every relative Markdown link or image (`[text](path)`, `![alt](path)`, reference
   definitions `[name]: path`, and HTML `src="path"` / `href="path"`) outside code must name a
   file or folder that exists, relative to the file that holds it (a path starting with `/`:
   relative to the repository). A link with `#anchor` must name a heading of the target Markdown
   file (or of the file itself for a bare `#anchor`), under GitHub's slug rules: the heading's
   text as rendered (code spans, emphasis and links reduced to their text), lowercased, every
   character but letters, digits, spaces, `-` and `_` dropped, spaces turned into `-`, and a
   second heading of the same slug suffixed `-1`, then `-2`, ... Links with a scheme (https:,
   mailto:, ...) are not followed.
2. Commands. In fenced shell blocks (```sh, bash, shell, console), every `make TARGET` must name
   a target of the Makefile, and every `scripts/...` path (so `python3 scripts/X` too) must exist.
3. Generated blocks. Every `write_between("NAME", ...)` of scripts/*.py must find its
   `<!-- NAME:begin -->` and `<!-- NAME:end -->` markers, once each, in the file it writes
   (`doc=`, or docs/PERFORMANCE.md by default), so a refresh of the figures cannot fail.

Prints what it checked; on failure every `file:line: what is broken`, and exits 1.

    python3 scripts/check-docs.py
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "pkg" / "README.md"]
SHELL_FENCES = {"sh", "bash", "shell", "console", "zsh"}

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
# [text](target "title") and ![alt](target): the target up to a space or the closing parenthesis,
# allowing one level of parentheses inside it.
INLINE_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^()\s>]*(?:\([^()\s]*\)[^()\s>]*)*)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$")
HTML_ATTR = re.compile(r"""<(?:img|a|source)\b[^>]*?\b(?:src|href)=["']([^"']+)["']""", re.I)
HTML_ANCHOR = re.compile(r"""<a\b[^>]*?\b(?:name|id)=["']([^"']+)["']""", re.I)
# A code span may run over a line break, not over a blank line (the end of a paragraph).
CODE_SPAN = re.compile(r"(`+)(?:(?!\1)(?!\n[ \t]*\n)[\s\S])+?\1")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
MAKE_CALL = re.compile(r"(?:^|[\s;&|(`$])make((?:\s+[^\s;&|)#`]+)*)")
SCRIPT_PATH = re.compile(r"(?<![\w./-])scripts/[\w./-]*[\w-]")


def slug(text):
    """GitHub's anchor of a heading whose Markdown source is `text`."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links and images: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML tags
    text = text.replace("`", "")
    text = re.sub(r"(\*\*|__|\*|\b_|_\b)", "", text)  # emphasis markers
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def scan(path):
    """(prose lines, shell lines, headings) of a Markdown file: prose lines are (number, text)
    outside fences, shell lines (number, text) inside shell fences, headings their slugs."""
    prose, shell, slugs, seen = [], [], set(), {}
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
        for a in HTML_ANCHOR.findall(line):
            slugs.add(a)
    return prose, shell, slugs


def links(prose):
    """(line number, target) of every link of the prose lines, a link's text or target may run
    over a line break; code spans are not read."""
    lines = dict(prose)
    last = max(lines, default=0)
    # The prose with fenced lines left empty, so that offsets give line numbers; a code span
    # becomes spaces of its length.
    text = "\n".join(lines.get(n, "") for n in range(1, last + 1))
    text = CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    found = []
    for pattern in (INLINE_LINK, HTML_ATTR):
        for m in pattern.finditer(text):
            found.append((text.count("\n", 0, m.start(1)) + 1, m.group(1)))
    for number, line in prose:
        m = REF_DEF.match(line)
        if m:
            found.append((number, m.group(1)))
    return sorted(found)


_anchors = {}


def anchors(path):
    if path not in _anchors:
        _anchors[path] = scan(path)[2]
    return _anchors[path]


def make_targets():
    targets = set()
    for line in (ROOT / "Makefile").read_text().split("\n"):
        m = re.match(r"^([A-Za-z0-9_.%/-]+(?:\s+[A-Za-z0-9_.%/-]+)*)\s*::?(?!=)", line)
        if m:
            targets.update(t for t in m.group(1).split() if not t.startswith("."))
    return targets


WRITE_BETWEEN = re.compile(r"write_between\(\s*\"([\w-]+)\"([^)]*)\)")
DOC_PATH = re.compile(r"\"docs\"\s*/\s*\"([\w.-]+)\"")


def check_markers(errors):
    """Checks that the markers every script writes between exist; returns how many it checked."""
    checked = 0
    for script in sorted((ROOT / "scripts").glob("*.py")):
        if script.name == Path(__file__).name:
            continue
        text = script.read_text()
        for number, line in enumerate(text.split("\n"), 1):
            for m in WRITE_BETWEEN.finditer(line):
                name, rest = m.group(1), m.group(2)
                doc = DOC_PATH.search(rest)
                target = ROOT / "docs" / (doc.group(1) if doc else "PERFORMANCE.md")
                checked += 1
                content = target.read_text() if target.exists() else ""
                for marker in (f"<!-- {name}:begin -->", f"<!-- {name}:end -->"):
                    if content.count(marker) != 1:
                        errors.append(
                            f"{script.relative_to(ROOT)}:{number}: writes between {marker!r} markers, "
                            f"which {target.relative_to(ROOT)} has {content.count(marker)} times (1 expected)"
                        )
    return checked


def main():
    errors = []
    counts = {"files": 0, "links": 0, "anchors": 0, "make": 0, "scripts": 0}
    counts["markers"] = check_markers(errors)
    targets = make_targets()
    for path in FILES:
        if not path.exists():
            continue
        counts["files"] += 1
        rel = path.relative_to(ROOT)
        prose, shell, _ = scan(path)
        for number, target in links(prose):
                if not target or SCHEME.match(target):
                    continue
                counts["links"] += 1
                file_part, _, anchor = target.partition("#")
                if file_part:
                    base = ROOT if file_part.startswith("/") else path.parent
                    dest = (base / file_part.lstrip("/")).resolve()
                    if not dest.exists():
                        errors.append(f"{rel}:{number}: broken link {target!r}: no file {file_part}")
                        continue
                else:
                    dest = path
                if anchor:
                    counts["anchors"] += 1
                    if dest.suffix != ".md" or dest.is_dir():
                        continue
                    if anchor not in anchors(dest):
                        where = dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest
                        errors.append(f"{rel}:{number}: broken link {target!r}: no heading #{anchor} in {where}")
        for number, line in shell:
            code = line.split(" #", 1)[0] if not line.lstrip().startswith("#") else ""
            for m in MAKE_CALL.finditer(code):
                words = m.group(1).split()
                names = [w for w in words if not w.startswith("-") and "=" not in w]
                if not names:
                    continue
                for name in names:
                    counts["make"] += 1
                    if name not in targets:
                        errors.append(f"{rel}:{number}: `make {name}`: no target {name!r} in the Makefile")
            for m in SCRIPT_PATH.finditer(line):
                counts["scripts"] += 1
                if not (ROOT / m.group(0)).exists():
                    errors.append(f"{rel}:{number}: {m.group(0)}: no such file")
    checked = [str(p.relative_to(ROOT)) for p in FILES if p.exists()]
    print(f"check-docs: {', '.join(checked)}")
    print(
        f"check-docs: {counts['files']} files, {counts['links']} relative links "
        f"({counts['anchors']} with an anchor), {counts['make']} make targets and "
        f"{counts['scripts']} script paths in shell blocks, {counts['markers']} generated blocks "
        f"written by scripts/*.py"
    )
    if errors:
        print("\n".join(errors), file=sys.stderr)
        print(f"check-docs: {len(errors)} broken", file=sys.stderr)
        return 1
    print("check-docs: all good")
    return 0


if __name__ == "__main__":
    sys.exit(main())
