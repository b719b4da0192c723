"""How fast is the code np2jax writes? Each NumPy program in benchmarks/programs/ runs four ways:
the NumPy original, the program converted by `np2jax convert` (eager JAX), the program
converted by `np2jax convert --jit`, and the idiomatic JAX version written by hand
(programs/<name>_jax.py). The converted variants compute in NumPy's 64-bit dtypes (np2jax's
default) and run a second time in JAX's 32-bit defaults (the verifier's --x32-trial), so a
user sees what 64 bits cost and whether 32 would do for these inputs. Every variant is checked against the original and timed by the
verifier (np2jax.verify: one child process a run, first call = compile + run, then the median
of --repeat calls, each blocked on its JAX arrays).

    python benchmarks/converted_speed.py                      # every program, every device
    python benchmarks/converted_speed.py --device cpu --repeat 5 --json speed.json
    python benchmarks/converted_speed.py --size small --only heat_stencil   # a smoke run

The converted variants are np2jax's own output, written to a temporary folder for this run;
where `np2jax convert --jit` does not exist yet, its column says so. Exit 0 when every
variant that ran agrees with NumPy, 1 when one differs or fails, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table

from np2jax.files import write_atomic
from np2jax.verify.core import (
    Pair,
    VerifyOptions,
    VerifyUsageError,
    parse_devices,
    resolve_devices,
    verify_pair,
)
from np2jax.verify.report import fmt_seconds

PROGRAMS = Path(__file__).resolve().with_name("programs")
VARIANTS = ("eager", "jit", "hand")
JIT_UNAVAILABLE = "n/a (convert --jit unavailable)"

# Programs whose time goes into a Python loop carrying state (the ones a jit should speed up
# at least 3x); image_filter is a straight pipeline of whole-array operations.
LOOP_HEAVY = {"heat_stencil", "kmeans", "mlp_training", "monte_carlo", "nbody", "game_of_life"}

# --size small: module-level constants replaced in the original and in the hand-written JAX.
SMALL_SIZES = {
    "image_filter": {"HEIGHT": 48, "WIDTH": 64},
    "heat_stencil": {"N": 24, "STEPS": 20, "RECORD_EVERY": 5},
    "kmeans": {"N_POINTS": 400, "ITERATIONS": 5},
    "mlp_training": {"N_SAMPLES": 128, "N_HIDDEN": 16, "EPOCHS": 10},
    "monte_carlo": {"N_PATHS": 20_000, "N_STEPS": 10},
    "nbody": {"N_BODIES": 32, "STEPS": 20},
    "game_of_life": {"SIZE": 32, "GENERATIONS": 10},
}

# (rtol, atol) for programs whose float32 results drift past the verifier's float32 default
# (rtol 2e-5, atol 1e-6) from NumPy's float64 by accumulated rounding alone, as the hand-written
# JAX shows: 100 leapfrog steps move positions of size ~1 by ~5e-5 (nbody), 100 epochs move
# weights of size ~0.1 by ~2e-4 (mlp_training), means of 2500 points of size ~10 differ by
# ~6e-5 (kmeans), sums over 0.8 million pixels by ~2e-5 relative (image_filter).
FLOAT32_DRIFT = (1e-3, 1e-3)
TOLERANCES = {name: FLOAT32_DRIFT for name in ("image_filter", "kmeans", "mlp_training", "nbody")}

TARGET_MEDIAN_SPEEDUP = 1.0
TARGET_LOOP_SPEEDUP = 3.0
TARGET_HAND_RATIO = 1.25


@dataclass
class Conversion:
    ok: bool
    error: str | None = None
    findings: list = field(default_factory=list)  # what np2jax left unconverted, as it printed


@dataclass
class ProgramRun:
    name: str
    conversions: dict = field(default_factory=dict)  # "eager" | "jit" -> Conversion | None
    results: dict = field(default_factory=dict)  # variant -> VerifyResult
    numpy_times: list = field(default_factory=list)

    @property
    def numpy_s(self) -> float | None:
        return statistics.median(self.numpy_times) if self.numpy_times else None

    def steady(self, variant: str, device: str) -> float | None:
        result = self.results.get(variant)
        if result is None or not result.ok or device not in result.jax:
            return None
        return result.jax[device].steady_s

    def compile_s(self, variant: str, device: str) -> float | None:
        result = self.results.get(variant)
        timing = result.jax.get(device) if result is not None else None
        if timing is None or timing.first_call_s is None or timing.median_s is None:
            return None
        return max(0.0, timing.first_call_s - timing.median_s)

    def speedup(self, variant: str, device: str) -> float | None:
        steady, numpy_s = self.steady(variant, device), self.numpy_s
        return numpy_s / steady if steady and numpy_s else None

    def speedup_32(self, variant: str, device: str) -> str:
        """The variant run again in JAX's 32-bit defaults (the verifier's precision trial):
        its speed-up over NumPy, and whether 32 bits still give NumPy's results."""
        result = self.results.get(variant)
        trial = result.x32.get(device) if result is not None else None
        if trial is None:
            return "-"
        if not trial.enough:
            return "not enough"
        steady, numpy_s = (trial.timing.steady_s if trial.timing else None), self.numpy_s
        return _ratio(numpy_s / steady if steady and numpy_s else None)


# -- preparing the variants ----------------------------------------------------------------

def program_names(only: list[str] | None) -> list[str]:
    names = sorted(p.stem for p in PROGRAMS.glob("*.py") if not p.stem.endswith("_jax"))
    if only:
        unknown = [n for n in only if n not in names]
        if unknown:
            raise VerifyUsageError(f"--only: no program {unknown[0]!r}; choose from {', '.join(names)}")
        names = [n for n in names if n in only]
    return names


def resized(source: str, sizes: dict[str, int]) -> str:
    for constant, value in sizes.items():
        source, count = re.subn(rf"^{constant} = .*$", f"{constant} = {value!r}", source,
                                count=1, flags=re.MULTILINE)
        if not count:
            raise ValueError(f"no module-level constant {constant}")
    return source


def copy_program(source: Path, target: Path, sizes: dict[str, int]) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(resized(source.read_text(encoding="utf-8"), sizes), encoding="utf-8")
    return target


def convert(original: Path, out: Path, jit: bool) -> Conversion | None:
    """Run `np2jax convert` (in a child, as a user would). None: this np2jax has no --jit."""
    command = [sys.executable, "-m", "np2jax", "convert", str(original), "--out", str(out),
               "--format", "json"] + (["--jit"] if jit else [])
    done = subprocess.run(command, check=False, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if jit and done.returncode == 2 and "No such option: --jit" in done.stdout + done.stderr:
        return None
    try:
        report = json.loads(done.stdout)
    except ValueError:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return Conversion(False, f"np2jax convert exit {done.returncode}: {last}")
    errors = [e.get("message", str(e)) if isinstance(e, dict) else str(e)
              for e in report.get("errors", [])]
    converted = out / original.name
    if errors or not converted.is_file():
        return Conversion(False, "; ".join(errors) or f"no {converted}", report.get("findings", []))
    return Conversion(True, findings=report.get("findings", []))


def run_program(name: str, workdir: Path, options: VerifyOptions, devices, small: bool,
                try_jit: bool) -> ProgramRun:
    """Convert (eager, and with --jit unless an earlier program found it missing), then
    verify each variant against the original."""
    sizes = SMALL_SIZES.get(name, {}) if small else {}
    original = copy_program(PROGRAMS / f"{name}.py", workdir / "numpy" / f"{name}.py", sizes)
    hand = copy_program(PROGRAMS / f"{name}_jax.py", workdir / "hand" / f"{name}.py", sizes)
    run = ProgramRun(name)
    rtol, atol = TOLERANCES.get(name, (None, None))
    options = dataclasses.replace(options, rtol=rtol, atol=atol)
    targets = {"hand": hand}
    for variant, jit in (("eager", False), ("jit", True)):
        conversion = convert(original, workdir / variant, jit) if try_jit or not jit else None
        run.conversions[variant] = conversion
        if conversion is not None and conversion.ok:
            targets[variant] = workdir / variant / original.name
    for variant in VARIANTS:
        if variant in targets:
            # the hand-written JAX runs with 64-bit types on too: the same dtypes as the
            # converted variants (its own precision trial is not needed)
            chosen = dataclasses.replace(options, x64=True, x32_trial=False) \
                if variant == "hand" else options
            result = verify_pair(Pair(original, targets[variant], label=name), chosen, devices)
            run.results[variant] = result
            if result.numpy is not None:
                run.numpy_times.extend(result.numpy.times_s or [result.numpy.first_call_s])
    return run


# -- the report ----------------------------------------------------------------------------

def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2g}x"


def _verdict(run: ProgramRun, variant: str) -> str:
    if variant != "hand":
        conversion = run.conversions.get(variant)
        if conversion is None:
            return "n/a"
        if not conversion.ok:
            return "convert failed"
    result = run.results.get(variant)
    if result is None:
        return "-"
    return {"equal": "equal", "stochastic-equal": "equal (stat.)"}.get(result.verdict, result.verdict)


def jit_or_unavailable(runs: list[ProgramRun], text: str) -> str:
    unavailable = runs and all(r.conversions.get("jit", 0) is None for r in runs)
    return JIT_UNAVAILABLE if unavailable else text


def device_table(runs: list[ProgramRun], device: str) -> Table:
    table = Table(title=f"converted code speed on {device} (speed-up = NumPy time / variant time)",
                  title_justify="left", box=box.MARKDOWN)
    for heading in ("program", "loop-heavy", "numpy", "eager speed-up", "jit speed-up",
                    "eager / jit in 32 bits", "hand JAX speed-up", "jit time / hand",
                    "compile eager / jit / hand", "equal: eager / jit / hand"):
        table.add_column(heading, justify="left" if heading in ("program", "loop-heavy") else "right")
    for run in runs:
        jit_s, hand_s = run.steady("jit", device), run.steady("hand", device)
        jit_speedup = _ratio(run.speedup("jit", device))
        jit_vs_hand = _ratio(jit_s / hand_s if jit_s and hand_s else None)
        if run.conversions.get("jit", 0) is None:
            jit_speedup = jit_vs_hand = "n/a"
        compile_times = " / ".join(fmt_seconds(run.compile_s(v, device)) for v in VARIANTS)
        table.add_row(run.name, "yes" if run.name in LOOP_HEAVY else "no",
                      fmt_seconds(run.numpy_s), _ratio(run.speedup("eager", device)), jit_speedup,
                      f"{run.speedup_32('eager', device)} / {run.speedup_32('jit', device)}",
                      _ratio(run.speedup("hand", device)), jit_vs_hand, compile_times,
                      " / ".join(_verdict(run, v) for v in VARIANTS))
    return table


def summary(runs: list[ProgramRun], device: str) -> dict:
    """The targets, each with its figures, the programs that miss it (None: no figure, the
    variant failed or differs) and whether it is met (None: nothing measured, e.g. no --jit)."""
    jit = {r.name: r.speedup("jit", device) for r in runs}
    vs_hand = {}
    for run in runs:
        jit_s, hand_s = run.steady("jit", device), run.steady("hand", device)
        vs_hand[run.name] = jit_s / hand_s if jit_s and hand_s else None
    measured = [v for v in jit.values() if v is not None]
    median = statistics.median(measured) if measured else None
    checks = {
        f"median jit speed-up >= {TARGET_MEDIAN_SPEEDUP:g}x": (
            {"median": median}, [] if median is None or median >= TARGET_MEDIAN_SPEEDUP else ["median"]),
        f"loop-heavy jit speed-up >= {TARGET_LOOP_SPEEDUP:g}x": (
            {n: v for n, v in jit.items() if n in LOOP_HEAVY},
            [n for n, v in jit.items() if n in LOOP_HEAVY and (v is None or v < TARGET_LOOP_SPEEDUP)]),
        f"jit time within {TARGET_HAND_RATIO:g}x of hand JAX": (
            vs_hand, [n for n, v in vs_hand.items() if v is None or v > TARGET_HAND_RATIO]),
    }
    if device != "cpu":
        checks["jit speed-up >= 10x on a GPU"] = (jit, [n for n, v in jit.items() if v is None or v < 10])
    targets = {name: {"values": values, "missed_by": misses, "met": None if not measured else not misses}
               for name, (values, misses) in checks.items()}
    hand = [v for v in (r.speedup("hand", device) for r in runs) if v is not None]
    eager = [v for v in (r.speedup("eager", device) for r in runs) if v is not None]
    return {"targets": targets, "jit measured": f"{len(measured)} of {len(runs)}",
            "median hand JAX speed-up": statistics.median(hand) if hand else None,
            "median eager speed-up": statistics.median(eager) if eager else None}


def summary_lines(runs: list[ProgramRun], device: str) -> list[str]:
    found = summary(runs, device)
    lines = []
    for target, state in found["targets"].items():
        if state["met"] is None:
            lines.append(f"{target}: {jit_or_unavailable(runs, 'no jit variant ran and agreed')}")
            continue
        values = state["values"]
        if "median" in values:
            shown = (f"{values['median']:.2g}x over the {found['jit measured']} programs whose jit "
                     f"variant ran and agreed: {'met' if state['met'] else 'missed'}")
        else:
            misses = [f"{n} {_ratio(values[n])}" for n in state["missed_by"]]
            shown = "met" if state["met"] else "missed by " + ", ".join(misses)
        lines.append(f"{target}: {shown}")
    for key in ("median eager speed-up", "median hand JAX speed-up"):
        if found[key] is not None:
            lines.append(f"{key}: {found[key]:.2g}x")
    return lines


def problem_lines(runs: list[ProgramRun]) -> list[str]:
    lines = []
    for run in runs:
        for variant in VARIANTS:
            conversion = run.conversions.get(variant)
            if conversion is not None and not conversion.ok:
                lines.append(f"{run.name} {variant}: convert failed: {conversion.error}")
            result = run.results.get(variant)
            if result is not None and not result.ok:
                problems = "; ".join(result.problems()[:2]) or result.error or result.verdict
                lines.append(f"{run.name} {variant}: {result.verdict}: {problems}")
            elif result is not None and variant != "hand" and result.uses_jax is False:
                lines.append(f"{run.name} {variant}: note: the converted program does not use JAX")
    return lines


def finding_lines(runs: list[ProgramRun]) -> list[str]:
    """Each finding once: [eager] for the plain conversion, [jit] for those only --jit adds."""
    lines = []
    for run in runs:
        seen = set()
        for variant in ("eager", "jit"):
            conversion = run.conversions.get(variant)
            for finding in conversion.findings if conversion else ():
                key = (finding.get("line"), finding.get("code"), finding.get("message"))
                if key not in seen:
                    seen.add(key)
                    lines.append(f"{run.name}.py:{finding.get('line')} [{variant}] {finding.get('code')} "
                                 f"{finding.get('name')}: {finding.get('message')}")
    return lines


def as_json(runs: list[ProgramRun], devices: list[str], options: VerifyOptions, small: bool) -> dict:
    return {
        "devices": devices, "repeat": options.repeat, "size": "small" if small else "full",
        "jit_available": not all(r.conversions.get("jit", 0) is None for r in runs),
        "programs": [{
            "name": r.name, "loop_heavy": r.name in LOOP_HEAVY, "numpy_s": r.numpy_s,
            "conversions": {v: (None if c is None else {"ok": c.ok, "error": c.error,
                                                        "findings": c.findings})
                            for v, c in r.conversions.items()},
            "variants": {v: res.as_dict() for v, res in r.results.items()},
            "speedup": {d: {v: r.speedup(v, d) for v in VARIANTS} for d in devices},
        } for r in runs],
        "summary": {d: summary(runs, d) for d in devices},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="all", help="cpu, gpu or all (the available ones)")
    parser.add_argument("--repeat", type=int, default=5, help="timed calls after the first one")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds for each run")
    parser.add_argument("--size", choices=("full", "small"), default="full",
                        help="small: tiny inputs, for a smoke test")
    parser.add_argument("--only", action="append", help="run only this program (repeatable)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    console = Console(width=200)
    try:
        # x32_trial: each converted variant (64-bit, NumPy's dtypes) also runs in JAX's
        # 32-bit defaults, so the table shows what 64 bits cost
        options = VerifyOptions(devices=parse_devices(args.device), repeat=args.repeat, x32_trial=True,
                                timeout_s=args.timeout)
        if options.repeat < 1:
            raise VerifyUsageError("--repeat must be at least 1")
        names = program_names(args.only)
        devices = resolve_devices(options.devices)
    except VerifyUsageError as exc:
        print(f"converted_speed.py: {exc}", file=sys.stderr)
        return 2
    small = args.size == "small"
    runs, try_jit = [], True
    workdir = Path(tempfile.mkdtemp(prefix="np2jax-speed-"))
    try:
        for name in names:
            console.print(f"[dim]{name}...[/dim]")
            runs.append(run_program(name, workdir, options, devices, small, try_jit))
            try_jit = runs[-1].conversions["jit"] is not None
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    device_names = [d for d, _ in devices]
    for device in device_names:
        console.print(device_table(runs, device))
        console.print()
        for line in summary_lines(runs, device):
            console.print(line, markup=False)
        console.print()
    for title, lines in (("problems", problem_lines(runs)),
                         ("what np2jax left unconverted (its findings)", finding_lines(runs))):
        if lines:
            console.print(f"{title}:")
            for line in lines:
                console.print(f"  {line}", markup=False, highlight=False)
    if args.json:
        write_atomic(args.json, json.dumps(as_json(runs, device_names, options, small),
                                                indent=2, default=str) + "\n")
    ran = [res for r in runs for res in r.results.values()]
    failed = [r for r in runs for c in r.conversions.values() if c is not None and not c.ok]
    return 0 if all(res.ok for res in ran) and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
