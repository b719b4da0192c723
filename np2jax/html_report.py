"""`np2jax convert --html FILE`: the run as one self-contained HTML page.

Summary, a side-by-side diff for each file, its findings linked to the rule docs embedded at
the end, and, when --verify ran, the verifier's table with a timing chart per file. The page
loads nothing (inline CSS, inline SVG, no script) and shows everything it has as text too.
Every piece of user text goes through html.escape.
"""

from __future__ import annotations

import difflib
import math
import re
from html import escape

from np2jax._version import __version__
from np2jax.catalog import rule_docs
from np2jax.files import is_notebook
from np2jax.findings import format_percent

_CODE_SPAN = re.compile(r"`([^`]+)`")
CONTEXT_LINES = 3  # unchanged lines shown around each change in a diff
NUMPY_COLOR, JAX_FIRST_COLOR, JAX_COLOR = "#4c72b0", "#f2b880", "#dd8452"
VERDICT_CLASSES = {"equal": "good", "stochastic-equal": "good", "unclean": "bad", "unsteady": "bad",
                   "differs": "bad", "error": "bad", "skipped": "muted", "not-exercised": "muted",
                   "unreplayable": "muted", "slow": "bad"}

STYLE = """
:root { --fg: #1d2430; --muted: #667085; --line: #d9dee7; --panel: #f6f8fb; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif;
       color: var(--fg); background: #fff; }
header { background: #1d2430; color: #fff; padding: 18px 32px; }
header h1 { margin: 0; font-size: 22px; }
header p { margin: 4px 0 0; color: #c9d1dd; }
nav { padding: 8px 32px; background: var(--panel); border-bottom: 1px solid var(--line);
      position: sticky; top: 0; z-index: 1; }
[id] { scroll-margin-top: 48px; }  /* a followed link's target is not under the sticky nav */
nav a { margin-right: 18px; }
main { padding: 0 32px 48px; max-width: 1500px; }
h2 { margin: 32px 0 12px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
h3 { margin: 20px 0 8px; }
a { color: #1f5fbf; text-decoration: none; }
a:hover { text-decoration: underline; }
code, pre, .diff { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 16px; min-width: 130px;
        background: var(--panel); }
.card .n { font-size: 26px; font-weight: 600; }
.card .label { color: var(--muted); font-size: 13px; }
.card.good { border-left: 5px solid #2e9b57; }
.card.bad { border-left: 5px solid #d1453b; }
.card.muted { border-left: 5px solid #98a2b3; }
.columns { display: flex; flex-wrap: wrap; gap: 32px; }
table.data { border-collapse: collapse; margin: 8px 0; font-size: 14px; }
table.data th, table.data td { border-bottom: 1px solid var(--line); padding: 4px 10px;
                               text-align: left; vertical-align: top; }
table.data th { background: var(--panel); font-weight: 600; }
table.data td.num, table.data th.num { text-align: right; font-variant-numeric: tabular-nums; }
.badge { display: inline-block; padding: 0 8px; border-radius: 10px; font-size: 13px;
         font-weight: 600; background: #eef1f5; color: var(--muted); }
.badge.good { background: #dcf3e4; color: #1e7a43; }
.badge.bad { background: #fbe1df; color: #b02a21; }
.badge.changed { background: #e3ecfb; color: #1f5fbf; }
.sev-error { color: #b02a21; font-weight: 600; }
.sev-warning { color: #a15c00; font-weight: 600; }
.sev-info { color: var(--muted); }
details { margin: 8px 0; }
summary { cursor: pointer; color: #1f5fbf; }
h4 { margin: 12px 0 4px; }
td.rule { white-space: nowrap; }
.problems li { color: #b02a21; }
section.file { border: 1px solid var(--line); border-radius: 8px; padding: 4px 16px 16px;
               margin: 16px 0; }
section.file h3 { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 16px; }
.note { color: var(--muted); }
table.diff { width: 100%; margin: 8px 0; table-layout: fixed; border-collapse: collapse; font-size: 12.5px;
             line-height: 1.45; border: 1px solid var(--line); }
table.diff col.ln { width: 3.6em; }
table.diff th { background: var(--panel); text-align: left; padding: 4px 8px;
                font-family: system-ui, sans-serif; font-weight: 600; }
table.diff td { padding: 0 6px; vertical-align: top; }
table.diff td.ln { color: #98a2b3; text-align: right; user-select: none;
                   border-right: 1px solid var(--line); }
table.diff td.code { white-space: pre-wrap; overflow-wrap: anywhere; }
table.diff td.del { background: #fdecea; }
table.diff td.ins { background: #e6f6ea; }
table.diff td.del del { background: #f5b8b1; text-decoration: none; }
table.diff td.ins ins { background: #a8e0b7; text-decoration: none; }
table.diff td.empty { background: #f4f5f7; }
table.diff tr.skip td { background: var(--panel); color: var(--muted); text-align: center;
                        font-family: system-ui, sans-serif; font-size: 12px; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
figure { margin: 8px 0; }
figcaption { font-size: 13px; color: var(--muted); }
svg text { font: 12px system-ui, sans-serif; fill: #1d2430; }
section.rule { border-left: 4px solid var(--line); padding: 0 16px; margin: 20px 0; }
section.rule pre { background: var(--panel); padding: 8px 12px; border-radius: 6px;
                   overflow-x: auto; font-size: 13px; }
:target { outline: 3px solid #f2b880; }
table.diff tr.marked td.ln { background: #f9d77e; color: #1d2430; font-weight: 600; }
table.diff tr.marked td.code { box-shadow: inset 3px 0 #e0a800; }
td.num a { font-variant-numeric: tabular-nums; }
"""


def render_html(run, verified=None, title: str = "np2jax convert") -> str:
    """The page for a convert run (np2jax.api.RunResult) and, optionally, its verification
    (np2jax.verify.VerifyRun): one string, nothing to fetch."""
    verdicts = {r.original: r for r in verified.results} if verified is not None else {}
    anchors = _file_anchors([result.path for result in run.files])
    codes = set(run.changes_by_code()) | set(run.findings_by_code())
    docs = rule_docs()
    nav = [("summary", "Summary"), ("files", "Files"), ("rules", "Rules")]
    if verified is not None:
        nav.insert(1, ("verification", "Verification"))
    body = [
        (f"<header><h1>{escape(title)}</h1><p>np2jax {escape(__version__)}: "
         f"{len(run.files) + len(run.errors)} file(s)</p></header>"),
        "<nav>" + "".join(f'<a href="#{key}">{label}</a>' for key, label in nav) + "</nav>",
        "<main>",
        _summary(run, verified, docs),
        _verification(verified, anchors) if verified is not None else "",
        _files(run, verdicts, anchors, verified is not None),
        _rules(sorted(codes), docs),
        "</main>",
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(part for part in body if part) + "\n</body></html>\n")


def render_prove_html(result, title: str = "np2jax prove") -> str:
    """The page for `np2jax prove` (np2jax.verify.prove.ProveResult): the totals as cards,
    the per-function table, the first difference of each function kept on NumPy."""
    from np2jax.verify.prove import KEPT_VERDICTS
    from np2jax.verify.report import prove_columns, prove_row, prove_summary

    totals = result.totals()
    cards = [_card(totals["proven"], "proven equal", "good"),
             _card(totals["kept_on_numpy"], "to keep on NumPy", "bad" if totals["kept_on_numpy"] else ""),
             _card(totals["not_exercised"], "not exercised", "muted"),
             _card(totals["unreplayable"], "unreplayable", "muted")]
    if totals["calls"]:
        cards.append(_card(format_percent(100 * totals["calls_proven_share"]), "of the calls proven"))
    header = "".join(f'<th{" class=num" if i >= 2 else ""}>{escape(h)}</th>'
                     for i, h in enumerate(prove_columns(result.devices)))
    rows = []
    for proof in result.functions:
        cells = [escape(cell) for cell in prove_row(proof, result.devices)]
        cells[0] = f"<code>{cells[0]}</code>"
        cells[1] = _verdict_badge(proof.verdict)
        rows.append("<tr>" + "".join(f'<td{" class=num" if i >= 2 else ""}>{cell}</td>'
                                     for i, cell in enumerate(cells)) + "</tr>")
    problems = "".join(f"<li><code>{escape(p.key)}</code>: {escape(p.verdict)}: "
                       f"{escape(p.first_difference or '')}</li>"
                       for p in result.functions if p.verdict in KEPT_VERDICTS)
    notes = "".join(f"<li><code>{escape(p.key)}</code>: {escape(note)}</li>"
                    for p in result.functions for note in p.notes)
    summary = "".join(f"<p>{escape(line)}</p>" for line in prove_summary(result))
    body = [
        (f"<header><h1>{escape(title)}</h1><p>np2jax {escape(__version__)}: "
         f"{totals['functions']} function(s), replayed on the calls the project's tests make"
         "</p></header>"),
        "<main>",
        f'<section id="summary"><h2>Summary</h2><div class="cards">{"".join(cards)}</div>'
        f"{summary}</section>",
        (f"<p class=\"problems\">{escape(result.error)}</p>" if result.error else ""),
        '<section id="functions"><h2>Functions</h2>'
        "<p>Times: the first call (JAX: compile + run) and the median of the repeats of the "
        "first recorded call.</p>"
        f'<table class="data" id="prove-table"><tr>{header}</tr>{"".join(rows)}</table>'
        + (f'<h3>Kept on NumPy</h3><ul class="problems">{problems}</ul>' if problems else "")
        + (f'<h3>Notes</h3><ul>{notes}</ul>' if notes else "") + "</section>",
        "</main>",
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(part for part in body if part) + "\n</body></html>\n")


# -- summary -----------------------------------------------------------------------------------

def _card(number, label: str, kind: str = "") -> str:
    return (f'<div class="card {kind}"><div class="n">{number}</div>'
            f'<div class="label">{escape(label)}</div></div>')


def _rule_link(code: str, docs) -> str:
    if code in docs:
        return f'<a href="#{escape(code)}">{escape(code)}</a> {escape(docs[code].name)}'
    return escape(code)


def _by_rule_table(heading: str, counter, docs) -> str:
    if not counter:
        return f"<div><h3>{escape(heading)}</h3><p class=\"note\">none</p></div>"
    rows = "".join(f"<tr><td>{_rule_link(code, docs)}</td><td class=\"num\">{n}</td></tr>"
                   for code, n in sorted(counter.items()))
    return (f"<div><h3>{escape(heading)}</h3><table class=\"data\"><tr><th>rule</th>"
            f"<th class=\"num\">count</th></tr>{rows}</table></div>")


def _coverage_card(coverage) -> str:
    """The share of the NumPy call sites that moved to JAX (np2jax.findings.Coverage)."""
    if not coverage.call_sites:
        return _card("&ndash;", "no NumPy call sites", "muted")
    label = (f"moved to JAX: {coverage.moved} of {coverage.call_sites} NumPy call sites"
             + (f", {coverage.on_purpose} kept on NumPy on purpose" if coverage.on_purpose else ""))
    return (f'<div class="card coverage" id="coverage"><div class="n">'
            f"{format_percent(coverage.percent)}</div>"
            f'<div class="label">{escape(label)}</div></div>')


def _file_coverage(coverage) -> str:
    if not coverage.call_sites:
        return '<p class="note coverage">No NumPy call sites.</p>'
    return f'<p class="note coverage">{escape(coverage.summary())}.</p>'


def _summary(run, verified, docs) -> str:
    counts = run.counts()
    cards = [_card(counts["converted"], "files converted", "good"),
             _card(counts["unchanged"], "files unchanged", "muted"),
             _card(counts["failed"], "files failed", "bad" if counts["failed"] else "muted"),
             _card(len(run.changes), "rewrites"),
             _card(len(run.findings), "findings left for you",
                   "bad" if run.findings else "good"),
             _coverage_card(run.coverage())]
    if verified is not None:
        cards += [_card(n, f"verified {verdict}", VERDICT_CLASSES.get(verdict, ""))
                  for verdict, n in verified.counts().items()]
    parts = ['<section id="summary"><h2>Summary</h2>',
             '<div class="cards">' + "".join(cards) + "</div>",
             '<div class="columns">',
             _by_rule_table("Rewrites by rule", run.changes_by_code(), docs),
             _by_rule_table("Findings by rule", run.findings_by_code(), docs),
             "</div>"]
    if run.errors:
        items = "".join(f"<li>{escape(str(error))}</li>" for error in run.errors)
        parts.append(f'<div id="errors"><h3>Files that could not be converted</h3>'
                     f'<ul class="problems">{items}</ul></div>')
    parts.append("</section>")
    return "\n".join(parts)


# -- verification ------------------------------------------------------------------------------

def _verification(verified, anchors: dict[str, str]) -> str:
    """The verifier's table (the cells np2jax verify prints), each file linked to its
    section, and a chart of the steady times."""
    from np2jax.verify.report import table_columns, table_devices, table_row

    devices = table_devices(verified)
    rows = []
    for result in verified.results:
        cells = [escape(cell) for cell in table_row(result, devices)]
        if result.original in anchors:
            cells[0] = f'<a href="#{anchors[result.original]}">{cells[0]}</a>'
        cells[1] = _verdict_badge(result.verdict)
        rows.append("<tr>" + "".join(
            f'<td{" class=num" if i >= 2 else ""}>{cell}</td>' for i, cell in enumerate(cells))
            + "</tr>")
    header = "".join(f'<th{" class=num" if i >= 2 else ""}>{escape(h)}</th>'
                     for i, h in enumerate(table_columns(devices)))
    problems = [f"{r.label}: {r.verdict}: {text}" for r in verified.results
                for text in ([r.error] if r.verdict == "error" and r.error else
                             r.problems() if r.verdict == "differs" else [])]
    notes = "".join(f"<li>{escape(p)}</li>" for p in problems)
    chart = _overview_chart(verified.results, devices)
    return "\n".join([
        '<section id="verification"><h2>Verification</h2>',
        (f"<p>Each converted file with <code>main()</code> ran against its original: NumPy, "
         f"then JAX on {escape(', '.join(devices) or 'no device')}. Times are medians of the "
         "repeats; <em>first</em> is the first call (compile + run).</p>"),
        f'<table class="data" id="verify-table"><tr>{header}</tr>{"".join(rows)}</table>',
        f'<ul class="problems">{notes}</ul>' if notes else "",
        chart,
        "</section>"])


def _verdict_badge(verdict: str) -> str:
    return f'<span class="badge {VERDICT_CLASSES.get(verdict, "")}">{escape(verdict)}</span>'


# -- charts (inline SVG) -----------------------------------------------------------------------

def _timing_bars(result) -> list[tuple[str, float, str]]:
    """(label, seconds, colour) for each time the verifier measured for one file."""
    bars = []
    if result.numpy is not None and result.numpy.steady_s is not None:
        bars.append(("NumPy", result.numpy.steady_s, NUMPY_COLOR))
    for device, timing in result.jax.items():
        if timing.first_call_s is not None:
            bars.append((f"JAX {device} first call", timing.first_call_s, JAX_FIRST_COLOR))
        if timing.steady_s is not None:
            bars.append((f"JAX {device} steady", timing.steady_s, JAX_COLOR))
    return bars


def timing_chart(result) -> str:
    """One file's times as bars on a log scale (a first call that compiles can take a
    thousand times the steady one); empty when nothing was timed."""
    bars = _timing_bars(result)
    if not bars:
        return ""
    groups = [(label, [(label, seconds, colour)]) for label, seconds, colour in bars]
    return (f'<figure class="timing">{_log_bar_chart(groups, f"timings of {result.label}", 150, 18)}'
            "<figcaption>time per call, log scale</figcaption></figure>")


def _overview_chart(results, devices) -> str:
    """Steady time per file, NumPy against JAX on each device, on one log scale."""
    groups = []
    for result in results:
        bars = [bar for bar in _timing_bars(result) if "first call" not in bar[0]]
        if bars:
            groups.append((result.label, bars))
    if not groups:
        return ""
    legend = "".join(f'<span style="color:{colour}">&#9632;</span> {escape(text)} &nbsp; '
                     for text, colour in (("NumPy", NUMPY_COLOR), ("JAX steady", JAX_COLOR)))
    return (f'<figure id="timing-overview">'
            f"{_log_bar_chart(groups, 'steady time per file', 230, 11)}"
            f"<figcaption>{legend}steady time per call, log scale "
            f"({', '.join(escape(d) for d in devices)})</figcaption></figure>")


def _log_bar_chart(groups, title: str, label_w: int, bar_h: int) -> str:
    """Horizontal bars on a log10 time axis with a gridline per decade: groups of (label,
    [(bar name, seconds, colour)]); each bar has its time written at its end and a tooltip."""
    from np2jax.verify.report import fmt_seconds

    values = [max(s, 1e-9) for _, bars in groups for _, s, _ in bars]
    low, high = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))
    high = max(high, low + 1)
    plot_w, group_gap, top = 520, max(6, bar_h // 2), 24
    heights = [len(bars) * bar_h + group_gap for _, bars in groups]
    width, height = label_w + plot_w + 70, top + sum(heights)

    def x_of(seconds: float) -> float:
        return label_w + plot_w * (math.log10(max(seconds, 1e-9)) - low) / (high - low)

    shapes = []
    for decade in range(low, high + 1):
        x = x_of(10.0 ** decade)
        shapes.append(f'<line x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{height}" '
                      f'stroke="#e3e7ee"/><text x="{x:.1f}" y="{top - 10}" '
                      f'text-anchor="middle">{fmt_seconds(10.0 ** decade)}</text>')
    y = top
    for label, bars in groups:
        shapes.append(f'<text x="{label_w - 8}" y="{y + len(bars) * bar_h / 2 + 4:.1f}" '
                      f'text-anchor="end">{escape(label)}</text>')
        for name, seconds, colour in bars:
            w = max(1.0, x_of(seconds) - label_w)
            shapes.append(f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h - 2}" '
                          f'fill="{colour}"><title>{escape(label)}, {escape(name)}: '
                          f"{fmt_seconds(seconds)}</title></rect>"
                          f'<text x="{label_w + w + 4:.1f}" y="{y + bar_h - 4}" '
                          f'font-size="{min(12, bar_h - 1)}">{fmt_seconds(seconds)}</text>')
            y += bar_h
        y += group_gap
    return (f'<svg role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
            f"<title>{escape(title)}</title>"
            f'<line x1="{label_w}" y1="{top - 6}" x2="{label_w}" y2="{height}" stroke="#98a2b3"/>'
            + "".join(shapes) + "</svg>")


# -- files -------------------------------------------------------------------------------------

def _file_anchors(paths: list[str]) -> dict[str, str]:
    """path -> a readable, unique id: the path with everything but letters and digits as
    '-' (a/b.py and a-b.py would meet: the second gets a number)."""
    anchors: dict[str, str] = {}
    for path in paths:
        anchor = base = "file-" + "".join(c if c.isalnum() else "-" for c in path)
        number = 1
        while anchor in anchors.values():
            number += 1
            anchor = f"{base}-{number}"
        anchors[path] = anchor
    return anchors


def _files(run, verdicts, anchors: dict[str, str], verify_ran: bool = False) -> str:
    parts = ['<section id="files"><h2>Files</h2>']
    for result in run.files:
        parts.append(_file_section(result, verdicts.get(result.path), anchors[result.path],
                                   verify_ran))
    if not run.files:
        parts.append('<p class="note">No file was converted.</p>')
    parts.append("</section>")
    return "\n".join(parts)


def _line_anchor(anchor: str, cell: int | None, line: int) -> str:
    """The id of a line of a file's diff (of a notebook cell's): `file-a-py_L12`,
    `file-nb-ipynb_c3_L2`: the original's line number (the new one, `R`, for an added line).
    A file's id has no `_` (_file_anchors): a line's never equals a file's."""
    return f"{anchor}_L{line}" if cell is None else f"{anchor}_c{cell}_L{line}"


def _not_verified(result, verified) -> str:
    """Why a file of a --verify run has no verdict to show: a note, never nothing."""
    if is_notebook(result.path):
        reason = "notebooks are not run by --verify"
    elif verified is not None and verified.verdict == "skipped":
        reason = verified.error or "nothing to run"
    else:
        return ""
    return ('<p class="note not-verified"><span class="badge">not verified</span> '
            f"{escape(reason)}</p>")


def _file_section(result, verdict, anchor: str, verify_ran: bool = False) -> str:
    docs = rule_docs()
    badges = ['<span class="badge changed">converted</span>' if result.changed
              else '<span class="badge">unchanged</span>']
    not_verified = _not_verified(result, verdict) if verify_ran else ""
    if not_verified:
        badges.append('<span class="badge muted">not verified</span>')
    elif verdict is not None:
        badges.append(_verdict_badge(verdict.verdict))
    parts = [f'<section class="file" id="{anchor}">',
             f"<h3>{escape(result.path)} {' '.join(badges)}</h3>",
             _file_coverage(result.coverage)]
    if result.findings:
        parts.append(f"<h4>Left for you ({len(result.findings)})</h4>"
                     + _notes_table(result.findings, "findings", docs, anchor))
    if result.changes:
        # rewrites can run to dozens of renames: folded (a <details> opens without script)
        parts.append(f"<details><summary>{len(result.changes)} rewrite(s)</summary>"
                     + _notes_table(result.changes, "changes", docs, anchor) + "</details>")
    if not_verified:
        parts.append(not_verified)
    elif verdict is not None:
        parts.append(_verify_detail(verdict))
    parts += _diffs(result, anchor)
    parts.append("</section>")
    return "\n".join(parts)


def _diffs(result, anchor: str) -> list[str]:
    """The file's side-by-side diff (a notebook's: a diff per changed cell), each line with
    its id, the lines of findings and rewrites shown (never folded) and the findings' lines
    marked; for an unchanged file (cell) with findings, their lines."""
    def lines(notes, cell=None) -> set[int]:
        return {n.line for n in notes if n.cell == cell}

    if is_notebook(result.path):  # the JSON's diff would be unreadable
        from np2jax.notebooks import cell_pairs

        parts = []
        for number, old, new in cell_pairs(result.original, result.converted):
            marked = lines(result.findings, number)
            if old != new or marked:
                parts.append(side_by_side(old, new, title=f"cell {number}: ",
                                          anchor=f"{anchor}_c{number}", marked=marked,
                                          shown=marked | lines(result.changes, number)))
        if not result.changed:
            parts.insert(0, '<p class="note">Nothing to rewrite: the notebook is the same '
                         "after conversion.</p>")
        return parts
    marked = lines(result.findings)
    if result.changed or marked:
        table = side_by_side(result.original, result.converted, anchor=anchor, marked=marked,
                             shown=marked | lines(result.changes))
        if result.changed:
            return [table]
        return ['<p class="note">Nothing to rewrite: the file is the same after conversion. '
                "The lines of its findings:</p>", table]
    return ['<p class="note">Nothing to rewrite: the file is the same after conversion.</p>']


def _notes_table(notes, kind: str, docs, anchor: str) -> str:
    rows = "".join(
        f'<tr><td class="num"><a href="#{_line_anchor(anchor, n.cell, n.line)}">'
        f'{"" if n.cell is None else f"cell {n.cell}:"}{n.line}</a></td>'
        f'<td class="rule">{_rule_link(n.code, docs)}</td>'
        f'<td class="sev-{escape(n.severity)}">{escape(n.severity)}</td>'
        f"<td>{_message(n.message)}</td></tr>" for n in sorted(notes))
    return (f'<table class="data {kind}"><tr><th class="num">line</th><th>rule</th>'
            f"<th>severity</th><th>message</th></tr>{rows}</table>")


def _message(text: str) -> str:
    """A finding's message, escaped, with its `code` spans set in monospace."""
    return _CODE_SPAN.sub(r"<code>\1</code>", escape(text))


def _verify_detail(result) -> str:
    from np2jax.verify.report import fmt_error

    parts = []
    if result.error:
        parts.append(f'<p class="note">verify: {escape(result.verdict)}: '
                     f"{escape(result.error)}</p>")
    if result.outputs:
        rows = "".join(
            f"<tr><td><code>{escape(o.name)}</code></td><td>{escape(o.device or '')}</td>"
            f"<td>{_verdict_badge('equal' if o.equal else 'differs')}</td>"
            f"<td>{escape(str(o.shape) if o.shape is not None else '')}</td>"
            f"<td>{escape(o.dtype_original or '')} / {escape(o.dtype_converted or '')}</td>"
            f'<td class="num">{fmt_error(o.max_abs_err)}</td>'
            f"<td>{escape(o.note or '')}</td></tr>" for o in result.outputs)
        parts.append('<div class="columns"><table class="data outputs"><tr><th>output</th>'
                     "<th>device</th><th>result</th><th>shape</th><th>dtype numpy / jax</th>"
                     f'<th class="num">max abs err</th><th>note</th></tr>{rows}</table>'
                     f"{timing_chart(result)}</div>")
    return "\n".join(parts)


# -- side-by-side diff -------------------------------------------------------------------------

def _intraline(old: str, new: str) -> tuple[str, str]:
    """Both lines escaped, with the characters that differ wrapped in <del> and <ins>."""
    left, right = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new,
                                                       autojunk=False).get_opcodes():
        a, b = escape(old[i1:i2]), escape(new[j1:j2])
        if tag == "equal":
            left.append(a)
            right.append(b)
        else:
            left.append(f"<del>{a}</del>" if a else "")
            right.append(f"<ins>{b}</ins>" if b else "")
    return "".join(left), "".join(right)


def _similar(old: str, new: str) -> bool:
    """Worth marking characters: the lines share most of their text (else the marks would
    cover everything and say nothing)."""
    return difflib.SequenceMatcher(None, old, new, autojunk=False).ratio() >= 0.5


def _row(old_no, old_html, new_no, new_html, old_class="", new_class="", anchor=None,
         marked=frozenset()) -> str:
    def side(number, text, kind):
        if number is None:
            return '<td class="ln empty"></td><td class="code empty"></td>'
        return f'<td class="ln">{number}</td><td class="code {kind}">{text}</td>'
    attributes = ""
    if anchor is not None:  # every line has its id: the original's number, else the new one's
        attributes = (f' id="{anchor}_L{old_no}"' if old_no is not None
                      else f' id="{anchor}_R{new_no}"')
    if old_no is not None and old_no in marked:
        attributes += ' class="marked"'
    return (f"<tr{attributes}>{side(old_no, old_html, old_class)}"
            f"{side(new_no, new_html, new_class)}</tr>")


def side_by_side(original: str, converted: str, context: int = CONTEXT_LINES,
                 title: str = "", anchor: str | None = None, marked=frozenset(),
                 shown=frozenset()) -> str:
    """A two-column diff table: removed lines red on the left, added lines green on the right,
    changed characters darker; runs of unchanged lines beyond `context` of a change collapse
    to one row. `anchor`: each row's id is `ANCHOR_L<original line>` (`_R<new line>` for an
    added one). `marked` original lines (findings) are marked; they and the `shown` ones
    are never folded, with a line of context."""
    old, new = original.splitlines(), converted.splitlines()
    keep = set(shown) | set(marked)
    rows = []
    opcodes = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    for number, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag == "equal":
            visible = set()
            if number > 0:  # context after the change before
                visible.update(range(i1, min(i2, i1 + context)))
            if number < len(opcodes) - 1:  # context before the change after
                visible.update(range(max(i1, i2 - context), i2))
            for line in keep:  # a finding's line, with one line around it
                if i1 < line <= i2:
                    visible.update(range(max(i1, line - 2), min(i2, line + 1)))
            hidden: list[int] = []
            for i in range(i1, i2):
                if i not in visible:
                    hidden.append(i)
                    continue
                rows += _gap(old, new, hidden, i1, j1, anchor, marked)
                hidden = []
                rows.append(_row(i + 1, escape(old[i]), j1 + i - i1 + 1,
                                 escape(new[j1 + i - i1]), anchor=anchor, marked=marked))
            rows += _gap(old, new, hidden, i1, j1, anchor, marked)
            continue
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k, j1 + k
            has_old, has_new = i < i2, j < j2
            if has_old and has_new and _similar(old[i], new[j]):
                left, right = _intraline(old[i], new[j])
            else:
                left = escape(old[i]) if has_old else ""
                right = escape(new[j]) if has_new else ""
            rows.append(_row(i + 1 if has_old else None, left, j + 1 if has_new else None,
                             right, "del", "ins", anchor=anchor, marked=marked))
    return ('<table class="diff"><colgroup><col class="ln"><col><col class="ln"><col>'
            f'</colgroup><tr><th colspan="2">{escape(title)}original (NumPy)</th>'
            f'<th colspan="2">{escape(title)}converted (JAX)</th></tr>{"".join(rows)}</table>')


def _gap(old, new, hidden: list[int], i1: int, j1: int, anchor, marked) -> list[str]:
    """Unchanged lines left out: one row that says how many, or the line itself when it is
    only one (the row would take as much room)."""
    if not hidden:
        return []
    if len(hidden) == 1:
        i = hidden[0]
        return [_row(i + 1, escape(old[i]), j1 + i - i1 + 1, escape(new[j1 + i - i1]),
                     anchor=anchor, marked=marked)]
    return [_skip_row(len(hidden))]


def _skip_row(count: int) -> str:
    return f'<tr class="skip"><td colspan="4">&#8942; {count} unchanged line(s)</td></tr>'


# -- rule docs ---------------------------------------------------------------------------------

def _rules(codes: list[str], docs) -> str:
    from markdown_it import MarkdownIt

    # raw HTML in a doc is shown as text, and bare URLs stay text: the page links nowhere
    markdown = MarkdownIt("commonmark", {"html": False}).disable(["link", "image", "autolink"])
    parts = ['<section id="rules"><h2>Rules</h2>']
    known = [code for code in codes if code in docs]
    if not known:
        parts.append('<p class="note">No rule applied.</p>')
    for code in known:
        doc = docs[code]
        # the doc's own headings start at ##: one level down fits under this page's h2
        text = doc.render_markdown().replace("\n### ", "\n#### ").replace("## ", "### ", 1)
        parts.append(f'<section class="rule" id="{escape(code)}">{markdown.render(text)}</section>')
    parts.append("</section>")
    return "\n".join(parts)
