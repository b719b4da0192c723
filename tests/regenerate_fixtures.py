"""Regenerate the .out.py of the named fixture cases with the converter's own output.

    python tests/regenerate_fixtures.py fixtures/<rule>/<case>.in.py ...

Expectations (`# expect:` / `# verdict:`) are never changed here: read the new findings,
decide whether they are right, and edit the header by hand. Then run the fixture tests.
"""

from __future__ import annotations

import sys
from pathlib import Path

from helpers import fixture_config
from np2jax.api import convert_source


def regenerate(case: Path) -> bool:
    text = case.read_text()
    converted = convert_source(text, fixture_config(text)).converted
    out = case.with_name(case.name[: -len(".in.py")] + ".out.py")
    changed = not out.exists() or out.read_text() != converted
    if changed:
        out.write_text(converted)
    return changed


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(("rewrote " if regenerate(Path(name)) else "same    ") + name)
