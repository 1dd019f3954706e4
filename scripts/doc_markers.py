"""Puts generated text into docs/PERFORMANCE.md between "<!-- NAME:begin -->" and
"<!-- NAME:end -->" (used by bench-report.py, levels-report.py and the server's bench-*.py; each
block is listed at the top of docs/PERFORMANCE.md)."""
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parent.parent


def write_between(name, text, doc=root / "docs" / "PERFORMANCE.md"):
    """Replaces what is between the NAME markers of `doc` with `text`; exits 1 without them."""
    content = doc.read_text()
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    if begin not in content or end not in content:
        print(f"no {begin} marker in {doc}; not written", file=sys.stderr)
        sys.exit(1)
    before, rest = content.split(begin, 1)
    after = rest.split(end, 1)[1]
    doc.write_text(f"{before}{begin}\n{text}{end}{after}")
    print(f"wrote {doc.relative_to(root)}")
