"""Text output of the verifier: a rich table (verdict, outputs, max errors, NumPy time, per
device the first call, the steady-state time and the speed-up), then one line a problem."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from np2jax.verify.core import VerifyResult, VerifyRun
from np2jax.verify.prove import KEPT_VERDICTS
from np2jax.verify.testsuite import TestsResult


def fmt_seconds(value: float | None) -> str:
    if value is None:
        return "-"
    if value < 1e-3:
        return f"{value * 1e6:.0f} us"
    if value < 1:
        return f"{value * 1e3:.3g} ms"
    return f"{value:.3g} s"


def fmt_error(value: float | None) -> str:
    return "-" if value is None else f"{value:.2g}"


def speedup(numpy_s: float | None, jax_s: float | None) -> str:
    if not numpy_s or not jax_s:
        return "-"
    return f"{numpy_s / jax_s:.2g}x"


def table_devices(run: VerifyRun) -> list[str]:
    """The devices asked for, then any other a result ran on (should not happen)."""
    devices = list(run.devices)
    for result in run.results:
        devices.extend(d for d in result.jax if d not in devices)
    return devices


def table_columns(devices: list[str], x32: bool = False) -> list[str]:
    """The verifier table's column names; the first two (file, verdict) are text, the rest
    numbers (the HTML report has the same table). x32: a column per device for the
    precision trial."""
    columns = ["file", "verdict", "outputs", "max abs err", "max rel err", "numpy"]
    for device in devices:
        columns += [f"{device} first", f"{device} steady", f"{device} speed-up"]
        if x32:
            columns.append(f"{device} 32-bit")
    return columns


def table_row(result: VerifyResult, devices: list[str], x32: bool = False) -> list[str]:
    numeric = [o for o in result.outputs if o.max_abs_err is not None and not o.stochastic]
    max_abs = max((o.max_abs_err for o in numeric), default=None)
    rel = [o.max_rel_err for o in numeric if o.max_rel_err is not None]
    names = {o.name for o in result.outputs}
    differing = {o.name for o in result.outputs if not o.equal}
    outputs = (f"{len(differing)}/{len(names)} differ" if differing else str(len(names))) \
        if names else "-"
    numpy_s = result.numpy.steady_s if result.numpy else None
    row = [result.label, result.verdict, outputs, fmt_error(max_abs),
           fmt_error(max(rel) if rel else None), fmt_seconds(numpy_s)]
    for device in devices:
        timing = result.jax.get(device)
        if timing is None:
            row += ["-", "-", "-"]
        else:
            row += [fmt_seconds(timing.first_call_s), fmt_seconds(timing.steady_s),
                    speedup(numpy_s, timing.steady_s)]
        if x32:
            row.append(_trial(result.x32.get(device), timing))
    return row


def _trial(trial, timing) -> str:
    """"enough, 1.6x" (32 bits give NumPy's results within float32's tolerance, that much
    quicker than 64) or "not enough"."""
    if trial is None:
        return "-"
    if not trial.enough:
        return "not enough"
    faster = speedup(timing.steady_s if timing else None, trial.timing.steady_s if trial.timing else None)
    return "enough" if faster == "-" else f"enough, {faster}"


def verify_table(run: VerifyRun, title: str = "np2jax verify") -> Table:
    devices = table_devices(run)
    x32 = any(result.x32 for result in run.results)
    table = Table(title=title, title_justify="left", show_edge=False)
    for i, name in enumerate(table_columns(devices, x32)):
        table.add_column(name, justify="left" if i < 2 else "right")
    for result in run.results:
        table.add_row(*table_row(result, devices, x32))
    return table


def print_verify(console: Console, run: VerifyRun, title: str = "np2jax verify",
                 show_skipped: bool = True, quiet: bool = False) -> None:
    """The table, one line a problem, and a summary line; quiet: the problem lines only."""
    shown = VerifyRun([r for r in run.results if show_skipped or r.verdict != "skipped"],
                      run.devices)
    hidden = len(run.results) - len(shown.results)
    if shown.results and not quiet:
        console.print(verify_table(shown, title))
    for result in run.results:
        if result.verdict == "error":
            console.print(f"{result.label}: error: {result.error}", markup=False, soft_wrap=True)
        elif result.verdict == "differs":
            for problem in result.problems():
                console.print(f"{result.label}: differs: {problem}", markup=False, soft_wrap=True)
        elif result.verdict == "unsteady":
            for device, repeat in result.unsteady.items():
                console.print(f"{result.label}: unsteady on {device}: run {repeat} of the converted "
                              "program gave other results than the first, where the original's "
                              "runs agree (a NumPy array written after JAX was handed it: JAX "
                              "reads it when its computation runs; or state kept between calls)",
                              markup=False, soft_wrap=True)
        elif result.verdict == "unclean":
            for warning in result.warnings:
                console.print(f"{result.label}: unclean: the converted program warns, and a later "
                              f"JAX release may refuse it: {warning}", markup=False, soft_wrap=True)
        elif result.verdict == "skipped" and show_skipped and result.error:
            console.print(f"{result.label}: skipped: {result.error}", markup=False, soft_wrap=True)
        for device, trial in result.x32.items():
            if not trial.enough:
                console.print(f"{result.label}: 32 bits are not enough on {device}: {trial.problem}",
                              markup=False, soft_wrap=True)
        if result.uses_jax is False and result.verdict in ("equal", "stochastic-equal"):
            console.print(f"{result.label}: note: the converted program does not use JAX",
                          markup=False, soft_wrap=True)
    if quiet:
        return
    if hidden:
        console.print(f"{hidden} file(s) without main() not verified", markup=False)
    counts = ", ".join(f"{n} {verdict}" for verdict, n in run.counts().items()) or "nothing to verify"
    devices = ", ".join(run.devices) or "none"
    console.print(f"verified: {counts} (JAX devices: {devices}; times are medians of the "
                  "repeats, first = compile + run)", markup=False, soft_wrap=True)


def print_tests(console: Console, result: TestsResult) -> None:
    table = Table(title="np2jax verify --tests", title_justify="left", show_edge=False)
    for name in ("tree", "device", "passed", "failed", "error", "skipped", "time"):
        table.add_column(name, justify="left" if name in ("tree", "device") else "right")
    for run in [result.original, *result.converted.values()]:
        counts = run.counts()
        table.add_row(run.tree, run.device or "numpy", *(str(counts.get(k, 0)) for k in
                                                          ("passed", "failed", "error", "skipped")),
                      fmt_seconds(run.wall_s))
    console.print(table)
    for run in [result.original, *result.converted.values()]:
        if run.error:
            console.print(f"{run.tree}: error: {run.error}", markup=False, soft_wrap=True)
    for change in result.changes:
        console.print(f"changed on {change.device}: {change.test}: {change.original} -> "
                      f"{change.converted}" + (f" ({change.message})" if change.message else ""),
                      markup=False, soft_wrap=True)
    console.print(f"tests: {result.verdict}, {len(result.changes)} changed outcome(s)", markup=False)


# -- np2jax prove ------------------------------------------------------------------------------

def prove_columns(devices: list[str]) -> list[str]:
    """The per-function table's columns (also the HTML table's): the converted side's times
    and speed-up once per device, named by the device when there are several."""
    named = (lambda column, device: f"{column} ({device})") if len(devices) > 1 \
        else (lambda column, device: column)
    return ["function", "verdict", "calls", "compared", "max abs err", "numpy first",
            "numpy steady", *[named(column, device) for device in devices
                              for column in ("jax first", "jax steady", "speed-up")]]


def prove_row(proof, devices: list[str]) -> list[str]:
    """One function of a ProveResult, as the cells of prove_columns(devices)."""
    numpy = proof.numpy
    compared = f"{proof.compared}/{proof.recorded}" if proof.recorded else "-"
    cells = [proof.key, proof.verdict, str(proof.calls), compared, fmt_error(proof.max_abs_err),
             fmt_seconds(numpy.first_call_s if numpy else None),
             fmt_seconds(numpy.steady_s if numpy else None)]
    for device in devices:
        jax = proof.jax_by_device.get(device) if proof.jax_by_device else proof.jax
        cells += [fmt_seconds(jax.first_call_s if jax else None),
                  fmt_seconds(jax.steady_s if jax else None),
                  speedup(numpy.steady_s if numpy else None, jax.steady_s if jax else None)]
    return cells


def prove_summary(result) -> list[str]:
    """The totals as lines of text (the text report's end, the HTML cards' captions)."""
    totals = result.totals()
    lines = [f"functions: {totals['proven']} proven equal, {totals['kept_on_numpy']} to keep on "
             f"NumPy (differs, error or slow" + (f": {totals['slow']} slow" if totals["slow"] else "")
             + f"), {totals['not_exercised']} not exercised, "
             f"{totals['unreplayable']} unreplayable, of {totals['functions']}"]
    if totals["calls"]:
        lines.append(f"calls: {totals['calls_proven']} of the suite's {totals['calls']} calls of "
                     f"the package's functions went to functions proven equal "
                     f"({100 * totals['calls_proven_share']:.0f}%)")
    if result.suite is not None:
        counts = result.suite.counts()
        tests = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items())) or "no tests"
        text = f"suite: {tests}; recorded in {fmt_seconds(result.suite.wall_s)}"
        if result.baseline is not None:
            text += (f", {fmt_seconds(result.baseline.wall_s)} without the recorder "
                     f"(overhead {result.overhead():.2f}x)" if result.overhead() else "")
        lines.append(text + f"; replays {fmt_seconds(result.replay_s)} (NumPy on the CPU, the "
                     f"converted on {', '.join(result.devices)})")
    return lines


def print_prove(console: Console, result, quiet: bool = False) -> None:
    """The per-function table, one line a function that differs or errs (its first
    difference), the notes, and the totals."""
    if result.error:
        console.print(f"prove: error: {result.error}", markup=False, soft_wrap=True)
        return
    if not quiet:
        table = Table(title="np2jax prove", title_justify="left", show_edge=False)
        for i, name in enumerate(prove_columns(result.devices)):
            table.add_column(name, justify="left" if i < 2 else "right")
        for proof in result.functions:
            table.add_row(*prove_row(proof, result.devices))
        console.print(table)
    for proof in result.functions:
        if proof.verdict in KEPT_VERDICTS:
            console.print(f"{proof.key}: {proof.verdict}: {proof.first_difference}", markup=False,
                          soft_wrap=True)
        elif not quiet:
            for note in proof.notes:
                console.print(f"{proof.key}: note: {note}", markup=False, soft_wrap=True)
    if result.suite is not None and result.suite.error:
        console.print(f"suite: {result.suite.error}", markup=False, soft_wrap=True)
    if not quiet:
        for line in prove_summary(result):
            console.print(line, markup=False, soft_wrap=True)
