"""Text output for a terminal or a log: highlighted diffs, findings, errors, the summary table,
and a progress bar on stderr for long runs (every phase of them)."""

from __future__ import annotations

import difflib
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from np2jax.files import is_notebook
from np2jax.findings import Finding

if TYPE_CHECKING:
    from np2jax.report import RunReport

SEVERITY_STYLES = {"error": "bold red", "warning": "yellow", "info": "cyan"}
PROGRESS_MIN_FILES = 6  # a run of fewer files is over before a bar helps


def unified_diff(path: str, original: str, converted: str) -> str:
    if is_notebook(path):  # the JSON's diff would be unreadable: each changed cell's instead
        from np2jax.notebooks import cell_diff

        return cell_diff(path, original, converted)
    return "".join(difflib.unified_diff(
        original.splitlines(keepends=True), converted.splitlines(keepends=True),
        fromfile=f"a/{path}", tofile=f"b/{path}"))


def print_diff(console: Console, diff: str) -> None:
    if console.is_terminal and console.color_system is not None:
        # pygments loads only for a diff on a colour terminal
        from rich.syntax import Syntax

        console.print(Syntax(diff, "diff", theme="ansi_dark", background_color="default"))
    else:
        console.file.write(diff)


def finding_text(finding: Finding) -> Text:
    """Finding.format() as it is, with the location in bold and the code in its severity's
    colour (the styles vanish where the console has no colour)."""
    line = finding.format()
    text = Text(line)
    code_at = line.find(f": {finding.code} ")
    if code_at >= 0:
        text.stylize("bold", 0, code_at)
        text.stylize(SEVERITY_STYLES.get(finding.severity, ""), code_at + 2,
                     code_at + 2 + len(finding.code))
    return text


def print_findings(console: Console, findings: list[Finding]) -> None:
    """finding_text() of each finding, a line each. The lines are formatted here and written
    at once: console.print costs about 0.2 ms a line, seconds for the tens of thousands of
    findings of a big tree. A line rich would change (tabs, control characters) and a
    legacy Windows console go through console.print."""
    if console.legacy_windows:
        for finding in findings:
            console.print(finding_text(finding), highlight=False, soft_wrap=True)
        return
    styled = _ansi_styles(console)
    pending: list[str] = []
    for finding in findings:
        line = finding.format()
        code_at = line.find(f": {finding.code} ")
        if not line.isprintable():
            console.file.write("".join(pending))
            pending.clear()
            console.print(finding_text(finding), highlight=False, soft_wrap=True)
        elif code_at < 0 or styled is None:
            pending.append(line + "\n")
        else:
            end = code_at + 2 + len(finding.code)
            bold, colour = styled["bold"], styled.get(finding.severity, ("", ""))
            pending.append(f"{bold[0]}{line[:code_at]}{bold[1]}: {colour[0]}{line[code_at + 2:end]}"
                           f"{colour[1]}{line[end:]}\n")
    console.file.write("".join(pending))
    console.file.flush()


def _ansi_styles(console: Console) -> dict[str, tuple[str, str]] | None:
    """For "bold" and each severity: the escape codes the console writes before and after
    a text in that style (rendered by rich itself); None when the console writes no styles."""
    if console.color_system is None:
        return None
    styles = {}
    for name, style in (("bold", "bold"), *SEVERITY_STYLES.items()):
        with console.capture() as captured:
            console.print(Text("\0", style=style), end="", highlight=False, soft_wrap=True)
        before, _, after = captured.get().partition("\0")
        styles[name] = (before, after)
    return styles


def print_errors(console: Console, errors) -> None:
    for error in errors:
        console.print(f"error: {error}", style="red", markup=False, highlight=False, soft_wrap=True)


def summary_table(title: str, counts: dict[str, int], changes, findings,
                  changes_label: str = "rewritten", names: dict[str, str] | None = None) -> Table:
    """Files converted/unchanged/failed (and verdicts), then rewrites and findings by rule;
    `names`: code -> rule name (the reported findings carry them: no need for the catalog)."""
    names = names or {}
    table = Table(title=title, title_justify="left", show_edge=False)
    table.add_column("what")
    table.add_column("count", justify="right")
    for key, value in counts.items():
        table.add_row(f"files {key}", str(value))
    for label, counter in ((changes_label, changes), ("left for you", findings)):
        for code, number in sorted(counter.items()):
            table.add_row(f"{label}: {code} {names.get(code, '')}".rstrip(), str(number))
    return table


def print_report(console: Console, err_console: Console, report: RunReport, quiet: bool) -> None:
    """Diffs (when asked), findings, errors on stderr; unless quiet, the summary table, where
    the tree went and the verifier's table."""
    for diff in report.diffs:
        print_diff(console, diff)
    print_findings(console, report.findings)
    print_errors(err_console, report.errors)
    if not quiet:
        names = {f.code: f.name for f in (*report.findings, *report.changes)}
        console.print(summary_table(f"np2jax {report.command}", report.counts, report.fixes,
                                    report.left, changes_label=report.fixes_label, names=names))
        if report.coverage is not None and report.command == "convert":
            console.print(report.coverage.summary(), markup=False, highlight=False)
        if report.out is not None:
            console.print(f"converted tree written to {report.out}", markup=False,
                          highlight=False)
    if report.verify is not None:
        from np2jax.verify.report import print_verify

        print_verify(console, report.verify, show_skipped=False, quiet=quiet)


class RunProgress:
    """np2jax.engine.Progress drawn on a terminal (stderr): the phase of the run (finding
    files, reading, checking or converting, a pass again for cross-module rewrites, writing),
    a bar, files done/total, the time taken and the time left. In a pass over the tree the
    bar and the estimate follow the source's size, not the count of files: the biggest files
    go first, and take longest. It appears as soon as a run is known to hold more than a
    handful of files (while they are still being found, for a big tree) and is gone when the
    run ends. It draws from the calling thread only (no refresh thread: workers are forked
    from a process that runs one thread), at most every REFRESH_S seconds, and while waiting
    for workers (tick)."""

    REFRESH_S = 0.1

    def __init__(self, console: Console) -> None:
        self.console = console
        self.bar = None
        self.task = None
        self.description, self.total, self.size, self.completed = "", None, None, 0
        self.drawn_at = 0.0

    def phase(self, description: str, total: int | None = None, size: int | None = None) -> None:
        self.description, self.total, self.completed = description, total, 0
        self.size = size if size else None  # an empty pass counts in files
        if self.bar is None:
            if total is not None and total >= PROGRESS_MIN_FILES:
                self._show()
            return
        self.bar.remove_task(self.task)  # a new task: its own start time, its own estimate
        self._add_task()
        self._draw(force=True)

    def advance(self, steps: int = 1, size: int = 0) -> None:
        self.completed += steps
        if self.bar is None:
            if self.total is None and self.completed >= PROGRESS_MIN_FILES:
                self._show()  # files still being found: enough of them for a bar
            return
        self.bar.update(self.task, advance=size if self.size else steps, files=self._files())
        self._draw(force=self.completed == self.total)  # a phase's end is always shown

    def tick(self) -> None:
        if self.bar is not None:
            self._draw()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    def _files(self) -> str:
        total = "?" if self.total is None else str(self.total)
        return f"{self.completed:>{len(total)}}/{total}"

    def _add_task(self) -> None:
        self.task = self.bar.add_task(self.description, files=self._files(),
                                      total=self.size or self.total,
                                      completed=0 if self.size else self.completed)

    def _show(self) -> None:
        from rich.progress import (
            BarColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.bar = Progress(TextColumn("{task.description}"), BarColumn(),
                            TextColumn("{task.fields[files]}", style="progress.download"),
                            TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
                            console=self.console, transient=True, auto_refresh=False,
                            redirect_stdout=False, redirect_stderr=False)
        self.bar.start()
        self._add_task()
        self._draw(force=True)

    def _draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.drawn_at >= self.REFRESH_S:
            self.drawn_at = now
            self.bar.refresh()


@contextmanager
def run_progress(console: Console, enabled: bool):
    """Yields the progress to give api.check_paths/convert_paths: a RunProgress on a terminal
    `console` (stderr), None when disabled or when the console is not a terminal."""
    if not enabled or not console.is_terminal:
        yield None
        return
    progress = RunProgress(console)
    try:
        yield progress
    finally:
        progress.close()
