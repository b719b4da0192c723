"""Reporting: findings as text or JSON, unified diffs, and the end-of-run summary."""

from __future__ import annotations

import difflib
import json

from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table

from np2jax.catalog import rule_docs
from np2jax.files import is_notebook
from np2jax.findings import Finding


def unified_diff(path: str, original: str, converted: str) -> str:
    if is_notebook(path):  # the JSON's diff would be unreadable: each changed cell's instead
        from np2jax.notebooks import cell_diff

        return cell_diff(path, original, converted)
    return "".join(difflib.unified_diff(
        original.splitlines(keepends=True), converted.splitlines(keepends=True),
        fromfile=f"a/{path}", tofile=f"b/{path}"))


def print_diff(console: Console, diff: str) -> None:
    if console.is_terminal and not console.no_color:
        console.print(Syntax(diff, "diff", theme="ansi_dark", background_color="default"))
    else:
        console.file.write(diff)


def findings_json(findings: list[Finding], errors=(), extra: dict | None = None) -> str:
    payload = {"findings": [f.as_dict() for f in findings],
               "errors": [{"path": e.path, "line": e.line, "message": e.problem, "cell": e.cell}
                          for e in errors]}
    payload.update(extra or {})
    return json.dumps(payload, indent=2)


def print_findings(console: Console, findings: list[Finding]) -> None:
    for finding in findings:
        console.print(finding.format(), markup=False, highlight=False, soft_wrap=True)


def print_errors(console: Console, errors) -> None:
    for error in errors:
        console.print(f"error: {error}", style="red", markup=False, highlight=False, soft_wrap=True)


def summary_table(title: str, counts: dict[str, int], changes, findings,
                  changes_label: str = "rewritten") -> Table:
    """Files converted/unchanged/failed, then rewrites and findings by rule."""
    docs = rule_docs()
    table = Table(title=title, title_justify="left", show_edge=False)
    table.add_column("what")
    table.add_column("count", justify="right")
    for key, value in counts.items():
        table.add_row(f"files {key}", str(value))
    for label, counter in ((changes_label, changes), ("left for you", findings)):
        for code, number in sorted(counter.items()):
            name = docs[code].name if code in docs else ""
            table.add_row(f"{label}: {code} {name}", str(number))
    return table
