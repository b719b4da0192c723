"""Reports of check and convert runs, in four formats.

The CLI builds one RunReport from a run and calls emit(); each format lives in its own
module and is imported only when chosen:

    text    rich output: diffs, findings, errors, summary table (np2jax.report.text)
    json    one object: findings, errors, summary, ... (np2jax.report.json_format)
    sarif   SARIF 2.1.0 for code-scanning tools (np2jax.report.sarif)
    github  GitHub Actions workflow annotations (np2jax.report.github)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from np2jax.findings import Coverage, Finding
from np2jax.report.places import file_place
from np2jax.report.text import (
    print_diff,
    print_errors,
    print_findings,
    run_progress,
    summary_table,
    unified_diff,
)

FORMATS = ("text", "json", "sarif", "github")

__all__ = ["FORMATS", "RunReport", "emit", "emit_statistics", "file_place", "findings_json",
           "print_diff", "print_errors", "print_findings", "run_progress", "summary_table",
           "unified_diff"]


@dataclass
class RunReport:
    """What one check or convert run has to say, whatever the format."""

    command: str  # "check" or "convert"
    findings: list[Finding]  # the findings to report, sorted
    errors: list  # SourceError: files that could not be read, parsed or written
    counts: dict[str, int]  # files checked/converted/unchanged/failed, and verify verdicts
    fixes: Counter  # by code: the rewrites made (convert) or the problems convert fixes (check)
    left: Counter  # by code: the findings left for the user
    fixes_label: str = "rewritten"
    changes: list[Finding] = field(default_factory=list)  # convert: every rewrite made
    written: list[Path] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)  # unified diffs, when asked for
    verify: Any = None  # np2jax.verify.VerifyRun, after convert --verify
    prove: Any = None  # np2jax.proving.ProvedConversion, after convert --prove
    out: Path | None = None  # convert --out
    # how much NumPy moved to JAX (check: would move), in all and per file (path, coverage)
    coverage: Coverage | None = None
    file_coverage: list[tuple[str, Coverage]] = field(default_factory=list)

    def json_extra(self) -> dict:
        """The command's keys of the JSON report besides findings and errors."""
        extra: dict[str, Any] = {}
        if self.command == "convert":
            extra["changes"] = [c.as_dict() for c in self.changes]
        extra["summary"] = self.counts
        if self.command == "convert":
            extra["written"] = [str(p) for p in self.written]
        if self.verify is not None:
            extra["verify"] = self.verify.as_dict()
        if self.prove is not None:
            extra["prove"] = self.prove.as_dict()
        if self.coverage is not None:  # the last key: keys are only ever added
            extra["coverage"] = coverage_json(self.coverage, self.file_coverage)
        return extra


def coverage_json(total: Coverage, files: list[tuple[str, Coverage]]) -> dict:
    """The JSON report's "coverage": the totals, then one entry per file (its path first)."""
    return {**total.as_dict(), "files": [{"path": path, **c.as_dict()} for path, c in files]}


def findings_json(findings: list[Finding], errors=(), extra: dict | None = None) -> str:
    from np2jax.report.json_format import render_json

    return render_json(findings, errors, extra)


def emit_statistics(findings: list[Finding], errors, output_format: str, console: Console,
                    err_console: Console, quiet: bool = False) -> None:
    """check --statistics: a line (text) or an object (json) per rule on `console`, the errors
    on `err_console`; unless quiet, the total in text."""
    from np2jax.report.statistics import (
        render_statistics_json,
        render_statistics_text,
        statistics,
    )

    rows = statistics(findings)
    if output_format == "json":
        console.file.write(render_statistics_json(rows))
    else:
        console.file.write(render_statistics_text(rows))
        if not quiet and rows:
            fixable = sum(row["fixable_count"] for row in rows)
            console.file.write(f"{len(findings)} finding(s), {fixable} fixable "
                               "(`np2jax convert` rewrites them)\n")
    console.file.flush()
    print_errors(err_console, errors)


def emit(report: RunReport, output_format: str, console: Console, err_console: Console,
         quiet: bool = False) -> None:
    """Print the report on `console` (stdout) in the format; text errors go to `err_console`."""
    if output_format == "text":
        from np2jax.report.text import print_report

        print_report(console, err_console, report, quiet)
        return
    if output_format == "json":
        text = findings_json(report.findings, report.errors, report.json_extra())
    elif output_format == "sarif":
        from np2jax.report.sarif import render_sarif

        text = render_sarif(report)
    elif output_format == "github":
        from np2jax.report.github import render_github

        text = render_github(report)
    else:
        raise ValueError(f"unknown format {output_format!r}; choose one of {', '.join(FORMATS)}")
    console.file.write(text if not text or text.endswith("\n") else text + "\n")
    console.file.flush()
