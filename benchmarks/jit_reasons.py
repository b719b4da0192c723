"""Group the NJ502 findings of `np2jax convert --jit --format json` reports by reason: the
table of docs/real-projects.md ("With --jit, 2026-11-26 (third session)").

Usage: python benchmarks/jit_reasons.py REPORT.json [REPORT.json ...]
(real_projects.py --jit writes each package's report as WORK/NAME/convert.json)

Prints, per report, the functions compiled (NJ501) and left eager (NJ502), then one row per
class of reasons; a reason no class matches is counted as "others" and printed in full.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter

# first match wins
CLASSES = [
    ("decorated (decorators not followed)", r"it is decorated"),
    ("a static parameter under such a decorator", r"runs before jax.jit on what callers pass"),
    ("a static parameter another module of the tree passes an array",
     r"another module of the tree passes it"),
    ("a static parameter: the calls pass arrays, a float default, or nothing shows its kind",
     r"must be static|depends on its callers|default is a float"),
    ("calls a function compiled below its own decorators (they would run on tracers)",
     r"runs at each call, above its jax.jit"),
    ("`math.sin`/`math.sqrt`... (`math` read as a global)", r"it reads `math`"),
    ("calls another module's function that is not compiled, or reads a module global",
     r"a global the analysis cannot follow"),
    ("calls a function of its module left eager", r"which is left uncompiled"),
    ("calls code that cannot be traced", r"which cannot be traced"),
    ("may return a Python number, or returns no array",
     r"may return Python numbers|returns no array|returns a Python value|returns its argument"
     r"|return an array on every path"),
    ("`if`/`while` on an array value that no rewrite takes", r"cannot become lax\.cond|test .* is an array"),
    ("a Python value needed from an array (`not`, chained comparisons, `and`/`or`)",
     r"needs a Python bool|is an array while compiling|is not known while compiling"),
    ("`min`/`max` of arrays", r"needs Python values, which a tracer cannot do"),
    ("a NumPy call kept on NumPy", r"stays on NumPy, which cannot take a tracer"),
    ("a store not rewritten to a compiled form", r"is not rewritten to a form jax.jit compiles"),
    ("`try`/`with`/`raise`/print", r"`try`|`with`|raise|print"),
    ("generators, nested functions, lambdas, `*args`, imports inside, methods",
     r"generator|inside itself|lambda|`\*args`|imports inside|the method"),
]


def group(report: dict) -> tuple[int, Counter, list[str]]:
    counts: Counter = Counter()
    others = []
    for finding in report["findings"]:
        if finding["code"] != "NJ502":
            continue
        reason = finding["message"].split("(eager JAX):", 1)[-1].strip()
        name = next((name for name, pattern in CLASSES if re.search(pattern, reason)), None)
        if name is None:
            counts["others"] += 1
            others.append(reason)
        else:
            counts[name] += 1
    compiled = sum(1 for change in report["changes"] if change["code"] == "NJ501")
    return compiled, counts, others


def main(paths: list[str]) -> int:
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            compiled, counts, others = group(json.load(handle))
        eager = sum(counts.values())
        print(f"{path}: compiled {compiled}, left eager {eager}")
        for name, _ in [*CLASSES, ("others", "")]:
            if counts[name]:
                print(f"| {name} | {counts[name]} |")
        for reason in others:
            print(f"  others: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
