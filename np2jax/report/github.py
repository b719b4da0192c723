"""GitHub Actions workflow annotations: one `::error|warning|notice file=...::message` line per
finding and per file that could not be processed, shown on the pull request's diff.

Escaping follows the Actions toolkit (toolkit/packages/core/src/command.ts): in the message
%, CR and LF are percent-encoded; in properties also ':' and ','.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from np2jax.report.places import file_place

if TYPE_CHECKING:
    from np2jax.report import RunReport

LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(level: str, message: str, **properties) -> str:
    shown = ",".join(f"{key}={escape_property(str(value))}"
                     for key, value in properties.items() if value is not None)
    return f"::{level} {shown}::{escape_data(message)}" if shown else f"::{level}::{escape_data(message)}"


def render_github(report: RunReport) -> str:
    lines = []
    for finding in report.findings:
        line, col, prefix = file_place(finding.line, finding.col, finding.cell)
        lines.append(command(LEVELS.get(finding.severity, "warning"), prefix + finding.message,
                             file=finding.path, line=line, col=col,
                             title=f"{finding.code} {finding.name}"))
    for error in report.errors:
        line, _, prefix = file_place(error.line, None, error.cell)
        lines.append(command("error", prefix + error.problem, file=error.path, line=line,
                             title="np2jax: file not processed"))
    if report.verify is not None:
        for result in report.verify.results:
            problems = ([result.error] if result.verdict == "error" else
                        result.problems() if result.verdict == "differs" else [])
            for problem in problems:
                lines.append(command("error", f"{result.label}: {result.verdict}: {problem}",
                                     title="np2jax verify"))
    return "".join(line + "\n" for line in lines)
