"""Scaffold a new rule: its module, its catalog entry and its first fixture, then the
regenerated rule reference.

    python tools/add_rule.py NJ403 integer-overflow-in-sum \\
        --summary "An integer sum that can pass 2**31, which JAX's int32 wraps." \\
        [--severity error|warning|info] [--fix safe|none]

writes
    np2jax/rules/integer_overflow_in_sum.py        class IntegerOverflowInSum(Rule)
    rules/NJ403_integer-overflow-in-sum.toml       its doc, message, valid and invalid cases
    fixtures/integer-overflow-in-sum/first_case.in.py and .out.py
and rewrites docs/rules.md. Nothing else needs editing: rules, docs and fixtures are found
by name. Then fill in the three (CONTRIBUTING.md, "Adding a rule") and run
`python -m pytest tests/rules tests/rules/test_fixtures.py -k integer-overflow-in-sum`.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MODULE = '''"""{code} {name}.

{summary}
"""

from __future__ import annotations

from np2jax.rules.base import Rule


class {cls}(Rule):
    code = "{code}"

    def run(self):
        """Yield self.report(node, ...) for each place this rule finds: the analysis'
        facts (self.analysis, np2jax.analysis.module.ModuleAnalysis) say what is there;
        this method decides. The message's fields are those of the catalog entry."""
        for ref in self.analysis.refs:
            if ref.qualname == "numpy.TODO":  # the pattern this rule reacts to
                yield self.report(ref.node, name=ref.qualname)
'''

CATALOG = '''code = "{code}"
name = "{name}"
summary = "{summary}"
message = "`{{name}}` TODO: what is wrong, and what was done about it"
severity = "{severity}"
fix = "{fix}"

[doc]
what = """
TODO: what the rule finds, and what it does about it.
"""
why = """
TODO: how NumPy and JAX differ here (../shared/NUMPY_TO_JAX.md lists the differences).
"""
example = """
import numpy as np

def main():
    return {{"x": np.zeros(3)}}
"""
converted = """
import jax.numpy as jnp

def main():
    return {{"x": jnp.zeros(3)}}
"""
fix_safety = """
TODO: when the rewrite computes exactly NumPy's result, and what it relies on.
"""
not_converted = """
TODO: what stays as it was, and is reported instead.
"""

[[valid]]
code = """
import numpy as np
x = np.zeros(3)
"""

[[invalid]]
code = """
import numpy as np
x = np.TODO(3)
"""
'''

FIXTURE = '''# expect: {code}
import numpy as np


def main():
    return {{"x": np.zeros(3)}}
'''


def class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-"))


def scaffold(code: str, name: str, summary: str, severity: str, fix: str,
             root: Path = ROOT) -> list[Path]:
    if not re.fullmatch(r"NJ\d{3}", code):
        raise SystemExit(f"error: {code}: a code is NJ and three digits (NJ403)")
    if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", name):
        raise SystemExit(f"error: {name}: a name is kebab-case (integer-overflow-in-sum)")
    taken = {p.name.split("_", 1)[0]: p for p in (root / "rules").glob("NJ*.toml")}
    if code in taken:
        raise SystemExit(f"error: {code} is taken by rules/{taken[code].name}")
    files = {
        root / "np2jax" / "rules" / f"{name.replace('-', '_')}.py":
            MODULE.format(code=code, name=name, summary=summary, cls=class_name(name)),
        root / "rules" / f"{code}_{name}.toml":
            CATALOG.format(code=code, name=name, summary=summary.replace('"', '\\"'),
                           severity=severity, fix=fix),
        root / "fixtures" / name / "first_case.in.py": FIXTURE.format(code=code),
        root / "fixtures" / name / "first_case.out.py": FIXTURE.format(code=code),
    }
    for path in files:
        if path.exists():
            raise SystemExit(f"error: {path.relative_to(root)} exists already")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    # the checkout's own np2jax (the one at `root`), which now has the new rule
    reference = subprocess.run([sys.executable, "-m", "np2jax", "rule", "--markdown"],
                               cwd=root, capture_output=True, text=True, check=True).stdout
    (root / "docs" / "rules.md").write_text(reference, encoding="utf-8")
    return [*files, root / "docs" / "rules.md"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("code", help="NJ and three digits, unused")
    parser.add_argument("name", help="kebab-case: what the code does, not what is wrong")
    parser.add_argument("--summary", required=True, help="one sentence for the reference")
    parser.add_argument("--severity", choices=("error", "warning", "info"), default="warning")
    parser.add_argument("--fix", choices=("safe", "none"), default="none")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this one)")
    args = parser.parse_args()
    for path in scaffold(args.code, args.name, args.summary, args.severity, args.fix, args.root):
        print(f"wrote {path.relative_to(args.root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
