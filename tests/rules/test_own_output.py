"""np2jax run on its own output (issue 20, item 3): over every fixture's .out.py (with the
fixture's configuration, --jit outputs included), with `import numpy as np` beside the jax
imports (added where the file lacks it), converting again

- changes nothing and reports no rewrite;
- reports no finding on code np2jax wrote: every finding must be one the .in.py already had,
  of the same code, on a line the conversion kept from the .in.py (the same line, or one it
  replaced by exactly one line: an argument wrapped, `np.` renamed), that is a finding on
  code np2jax left as it was. A note the original did not have, or one moved to a line
  np2jax added, fails.

In process, through the API (convert_source), one conversion of each side per fixture.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter

import pytest

from helpers import FIXTURES, fixture_config, invoke
from np2jax.api import convert_source

# Known gaps (open work), each still run and expected to fail: {"rule/case": "why"}.
KNOWN_GAPS: dict[str, str] = {
    "kept-on-numpy/writes_argument": (
        "a kept function's entry line rebinds its parameter (`x = _np2jax_as_numpy(x, ...)`), "
        "which hides that it writes its argument: converted again, the writes inside "
        "the kept body are reported (NJ201, NJ203) where the first conversion reported the "
        "call (NJ209)"),
}
CASES = sorted(FIXTURES.glob("*/*.in.py"))
IDS = [f"{p.parent.name}/{p.name[:-6]}" for p in CASES]
PARAMS = [pytest.param(case, id=name, marks=[pytest.mark.xfail(reason=KNOWN_GAPS[name], strict=True)]
                       if name in KNOWN_GAPS else []) for case, name in zip(CASES, IDS)]


def _out(case):
    return case.with_name(case.name[: -len(".in.py")] + ".out.py")


def with_numpy(text: str) -> str:
    """The text with `import numpy as np` before its first import (after `__future__`)."""
    if re.search(r"^import numpy as np$", text, re.M):
        return text
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if line.startswith(("import ", "from ")) and not line.startswith("from __future__"):
            return "".join([*lines[:index], "import numpy as np\n", *lines[index:]])
    return "import numpy as np\n" + text


def kept_lines(before: list[str], after: list[str]) -> dict[int, int]:
    """Line of `after` -> line of `before` (1-based), for the lines the conversion kept or
    replaced one for one; lines it added or merged have none."""
    kept = {}
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            kept.update({j1 + k + 1: i1 + k + 1 for k in range(i2 - i1)})
        elif tag == "replace" and j2 - j1 > i2 - i1:
            # lines added among the statements rewritten (NJ302's split lines, a call moved
            # before its statement, `global key`): each statement is kept, in order, as the
            # line that reads most like it, where that is much like it
            j = j1
            for i in range(i1, i2):
                last = j2 - (i2 - i - 1)  # leave a line for each statement after it
                ratios = [(difflib.SequenceMatcher(None, before[i], after[k]).ratio(), k)
                          for k in range(j, last)]
                ratio, best = max(ratios, default=(0.0, j))
                if ratio >= 0.5:
                    kept[best + 1] = i + 1
                    j = best + 1
    return kept


def new_findings(original_text: str, original_findings, text: str, findings) -> list:
    """The findings on `text` (a conversion of `original_text`, run again) that are not a
    finding the original had, of the same code, on the line they stand on."""
    allowed = Counter((f.code, f.line) for f in original_findings)
    kept = kept_lines(original_text.splitlines(), text.splitlines())
    new = []
    for finding in findings:
        key = (finding.code, kept.get(finding.line))
        if allowed[key] > 0:
            allowed[key] -= 1
        else:
            new.append(finding)
    return new


@pytest.mark.parametrize("case", PARAMS)
def test_converting_the_output_again_changes_nothing_and_reports_nothing_new(case):
    original = case.read_text()
    config = fixture_config(original)
    text = with_numpy(_out(case).read_text())
    again = convert_source(text, config, str(_out(case)))
    assert again.converted == text
    assert not again.changes, [c.format() for c in again.changes]
    first = convert_source(original, config, str(case))
    new = new_findings(original, first.findings, text, again.findings)
    assert not new, [f.format() for f in new]


def test_the_criterion_catches_a_finding_on_a_line_np2jax_wrote():
    """A finding the original had, but now on a line np2jax added, counts as new; on the
    line it kept, it does not."""
    original = "import numpy as np\nx = np.ones(3)\ny = x\ny += 1\n"
    converted = "import jax.numpy as jnp\nimport jax\nx = jnp.ones(3)\ny = x\ny += 1\n"

    class F:
        def __init__(self, line):
            self.code, self.line = "NJ203", line

    assert kept_lines(original.splitlines(), converted.splitlines())[5] == 4
    assert new_findings(original, [F(4)], converted, [F(5)]) == []
    moved = F(2)
    assert new_findings(original, [F(4)], converted, [moved]) == [moved]
    assert len(new_findings(original, [], converted, [F(5)])) == 1
    # a statement rewritten with lines put before it keeps its findings; the lines added
    # have none
    drawn = ("import numpy as np\ndef f(out):\n    out[:] = rng.uniform(size=3)\n")
    split = ("import jax\ndef f(out):\n    global key\n    key, subkey = jax.random.split(key)\n"
             "    out[:] = jax.random.uniform(subkey, (3,))\n")
    assert kept_lines(drawn.splitlines(), split.splitlines()) == {1: 1, 2: 2, 5: 3}


PROGRAMS = {
    # the function made to return its argument, its callers assigning it (NJ209, NJ203)
    "normalize": ("import numpy as np\n\n\ndef normalize(v):\n    v /= v.sum()\n\n\n"
                  "def main():\n    p = np.arange(1.0, 5.0)\n    normalize(p)\n"
                  "    return {\"p\": p}\n", ()),
    # jax.jit with a static argument, a lax.fori_loop whose body updates its carry in place
    "decay": ("import numpy as np\n\n\ndef decay(x, n):\n    y = x * 1.0\n"
              "    for _ in range(n):\n        y *= 0.5\n    return y\n\n\n"
              "def main():\n    return {\"d\": decay(np.ones(3), 10)}\n", ("--jit",)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_check_on_converted_output_reports_nothing_through_the_cli(tmp_path, name):
    """`np2jax convert` then `np2jax check` on what it wrote, a module that also imports
    numpy: nothing to report, nothing to change."""
    program, flags = PROGRAMS[name]
    source = tmp_path / "src"
    source.mkdir()
    (source / "model.py").write_text(program)
    out = tmp_path / "out"
    converted = invoke("convert", source, "--out", out, "--no-cache", *flags)
    assert converted.exit_code == 0, converted.output
    text = (out / "model.py").read_text()
    assert ("fori_loop" in text and "@functools.partial(jax.jit" in text) if flags \
        else "p = normalize(p)" in text
    (out / "model.py").write_text(with_numpy(text))
    checked = invoke("check", out, "--no-cache", *flags)
    assert checked.exit_code == 0, checked.output
    assert "left for you" not in checked.output
    again = invoke("convert", out, "--diff", "--no-cache", *flags)
    assert again.exit_code == 0 and "@@" not in again.output, again.output
