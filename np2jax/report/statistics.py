"""`check --statistics`: how many findings of each rule, one line a rule, as ruff prints
them: the count, the code, whether `np2jax convert` rewrites them ([*] all, [-] some, [ ]
none), the rule's name. Most frequent first. With --format json, a list of objects
{code, name, count, fixable, fixable_count} (fixable: all of them are).
"""

from __future__ import annotations

import json
from collections import Counter

from np2jax.findings import Finding


def statistics(findings: list[Finding]) -> list[dict]:
    counts, fixable, names = Counter(), Counter(), {}
    for finding in findings:
        counts[finding.code] += 1
        fixable[finding.code] += finding.fixable
        names[finding.code] = finding.name
    ordered = sorted(counts, key=lambda code: (-counts[code], code))
    return [{"code": code, "name": names[code], "count": counts[code],
             "fixable": fixable[code] == counts[code], "fixable_count": fixable[code]}
            for code in ordered]


def render_statistics_text(rows: list[dict]) -> str:
    if not rows:
        return ""
    count_width = max(len(str(row["count"])) for row in rows)
    code_width = max(len(row["code"]) for row in rows)
    any_fixable = any(row["fixable_count"] for row in rows)
    lines = []
    for row in rows:
        mark = ""
        if any_fixable:
            mark = "[*] " if row["fixable"] else ("[-] " if row["fixable_count"] else "[ ] ")
        lines.append(f"{row['count']:>{count_width}}\t{row['code']:<{code_width}}\t{mark}{row['name']}")
    return "\n".join(lines) + "\n"


def render_statistics_json(rows: list[dict]) -> str:
    return json.dumps(rows, indent=2) + "\n"
