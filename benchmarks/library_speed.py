"""What compiling buys on real libraries: each package's hot functions timed on NumPy, converted
eager and converted --jit, with the XLA compilations their steady calls make.

A sibling of real_projects.py (the same pinned packages, sdists and convert commands), in two
phases, so that the second runs on a machine without libcst or a network (a GPU machine):

    python benchmarks/library_speed.py prepare --work DIR [--sdists FOLDER] [--only NAME ...]
    python benchmarks/library_speed.py run --work DIR [--device cpu|gpu|all] [--repeat N]
        [--only NAME ...] [--json F] [--timeout S]
    python benchmarks/library_speed.py show --json F      # a saved run's tables again

`prepare` unpacks each pinned sdist (DIR/sdists, where --sdists copies them first; downloaded
when missing: real_projects.py's fetch), converts the library with `np2jax convert --x64` and with `--x64 --jit`, and writes
DIR/NAME/{numpy,eager,jit}/PKG (the library's own files, no tests; numpy = the original), DIR/NAME/facts.json
(which functions --jit compiled, NJ501, and which it left eager, NJ502 with its reason) and
DIR/manifest.json. DIR is then all `run` needs (2 MB; the sdists can stay behind).

`run` imports nothing of np2jax's converter: for each package, each variant (numpy =
the original tree, eager, jit) runs in its own child process (the tree first on sys.path,
JAX's 64-bit mode as the converted modules set it, the device chosen by JAX_PLATFORMS). The
child calls each hot function of the spec table (HOT, below) on realistic inputs:

- first: the first run (compile + run), on the inputs of seed 0, whose results are compared
  with NumPy's (np2jax.verify's tolerances, by the precision the child ran in);
- steady: the median of --repeat runs, each on new inputs of the same shapes (seeds 1, 2...,
  built before the clock starts), each blocked on its JAX arrays (np2jax.verify's _child
  helpers). New values each run are what a program calling the library does, and they show a
  compilation keyed on values (a static argument) that the same inputs would hide;
- compiles: XLA compilations (JAX's monitoring event /jax/core/compile/backend_compile_duration,
  checked on JAX 0.10.2 and 0.11.2, CPU and GPU) during the first run and during the steady runs. A function
  whose every steady run compiles "recompiles every call": slower than eager, reported and
  counted.

A run of a "batch" hot function calls it once per item (transforms3d's functions take one
rotation), so its time is a loop over the batch, as a user of the library writes it.

Exit 0 when every variant ran and agrees with NumPy, 1 when one differs or fails, 2 on bad
arguments (as converted_speed.py).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
VARIANTS = ("numpy", "eager", "jit")
COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"


# -- the hot functions -----------------------------------------------------------------------

@dataclass(frozen=True)
class Hot:
    """One hot function: `module.name`, and the calls one timed run makes (`inputs(rng)` ->
    a list of argument tuples; one tuple for a function that takes the whole batch)."""

    module: str
    name: str
    inputs: Callable
    what: str  # the inputs, in words

    @property
    def label(self) -> str:
        return f"{self.module.split('.', 1)[-1]}.{self.name}"


BATCH = 25  # rotations (or cash flows) a run of a one-item-a-call function goes through


def _unit_quaternions(rng, n):
    q = rng.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def _rotations(rng, n):
    """n random rotation matrices (from unit quaternions, w first)."""
    w, x, y, z = _unit_quaternions(rng, n).T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], 1)


def _affines(rng, n):
    """n 4x4 rigid transforms in pyrr's row-vector layout (translation in the last row)."""
    out = np.zeros((n, 4, 4))
    out[:, :3, :3] = _rotations(rng, n)
    out[:, 3, :3] = rng.uniform(-10, 10, (n, 3))
    out[:, 3, 3] = 1.0
    return out


def _angles(rng, n):
    return [tuple(float(a) for a in row) for row in rng.uniform(-np.pi, np.pi, (n, 3))]


def _series(rng, n):
    """A random walk with noise: what nolds' measures are meant for."""
    return np.cumsum(rng.normal(size=n)) + rng.normal(scale=0.5, size=n)


NVALS = [32, 64, 128]  # nolds' window sizes (its default: ~30 sizes from 4 to a tenth of the series)


def _cash_flows(rng, n, periods):
    """n projects: an investment, then `periods` uncertain returns."""
    flows = rng.normal(1_000.0, 400.0, (n, periods + 1))
    flows[:, 0] = -rng.uniform(0.5, 0.9, n) * flows[:, 1:].sum(axis=1)
    return flows


def _loans(rng, n):
    """n loans: monthly rate, number of months, principal."""
    rate = rng.uniform(0.02, 0.09, n) / 12
    nper = rng.integers(60, 361, n).astype(float)
    pv = rng.uniform(1e4, 5e5, n)
    return rate, nper, pv


def _ensembles(rng, n, members):
    """n observations and an ensemble forecast of `members` each, skilful but noisy."""
    truth = rng.normal(size=n)
    forecasts = truth[:, None] + rng.normal(0.3, 1.0, (n, members))
    return truth + rng.normal(scale=0.5, size=n), forecasts


HOT: dict[str, list[Hot]] = {
    # 3-D rotations: every function takes one rotation, so a run converts a batch one by one
    "transforms3d": [
        Hot("transforms3d.euler", "euler2mat", lambda r: _angles(r, BATCH), f"{BATCH} Euler triples"),
        Hot("transforms3d.euler", "mat2euler", lambda r: [(m,) for m in _rotations(r, BATCH)],
            f"{BATCH} 3x3 rotations"),
        Hot("transforms3d.quaternions", "quat2mat",
            lambda r: [(q,) for q in _unit_quaternions(r, BATCH)], f"{BATCH} quaternions"),
        Hot("transforms3d.quaternions", "mat2quat", lambda r: [(m,) for m in _rotations(r, BATCH)],
            f"{BATCH} 3x3 rotations"),
        Hot("transforms3d.quaternions", "qmult",
            lambda r: list(zip(_unit_quaternions(r, BATCH), _unit_quaternions(r, BATCH))),
            f"{BATCH} quaternion pairs"),
        Hot("transforms3d.quaternions", "rotate_vector",
            lambda r: list(zip(r.normal(size=(BATCH, 3)), _unit_quaternions(r, BATCH))),
            f"{BATCH} vectors and quaternions"),
    ],
    # graphics math: 4x4 transforms one by one, vectors in batches (pyrr's functions take both)
    "pyrr": [
        Hot("pyrr.matrix44", "multiply", lambda r: list(zip(_affines(r, BATCH), _affines(r, BATCH))),
            f"{BATCH} 4x4 pairs"),
        Hot("pyrr.matrix44", "inverse", lambda r: [(m,) for m in _affines(r, BATCH)], f"{BATCH} 4x4"),
        Hot("pyrr.matrix44", "create_from_quaternion",
            lambda r: [(q,) for q in _unit_quaternions(r, BATCH)], f"{BATCH} quaternions"),
        Hot("pyrr.matrix33", "create_from_x_rotation",
            lambda r: [(float(a),) for a in r.uniform(-np.pi, np.pi, BATCH)], f"{BATCH} angles"),
        Hot("pyrr.vector3", "cross", lambda r: [(r.normal(size=(20_000, 3)), r.normal(size=(20_000, 3)))],
            "20000 vector pairs, one call"),
        Hot("pyrr.vector", "normalise", lambda r: [(r.normal(size=(20_000, 3)),)],
            "20000 vectors, one call"),
    ],
    # nonlinear time-series measures on one series (sampen and corr_dim loop over every point)
    # Eager JAX compiles each operation once per shape, and nolds' loops make a new shape at
    # each window size (hurst_rs, dfa: ~30 compilations a size) or each point (sampen: its
    # slices shrink by one each step, thousands of compilations): three window sizes, and no
    # sampen, keep the first calls within minutes on a 2-core CPU.
    "nolds": [
        Hot("nolds", "hurst_rs", lambda r: [(_series(r, 2_000), NVALS)], "2000 points, 3 window sizes"),
        Hot("nolds", "dfa", lambda r: [(_series(r, 2_000), NVALS)], "2000 points, 3 window sizes"),
        Hot("nolds", "corr_dim", lambda r: [(_series(r, 300), 4)], "300 points, emb_dim 4"),
    ],
    # cash flows: one project or a whole loan book a call
    "numpy-financial": [
        Hot("numpy_financial", "npv", lambda r: [(0.05, v) for v in _cash_flows(r, BATCH, 120)],
            f"{BATCH} projects of 121 flows"),
        Hot("numpy_financial", "irr", lambda r: [(v,) for v in _cash_flows(r, 20, 30)],
            "20 projects of 31 flows"),
        Hot("numpy_financial", "mirr", lambda r: [(v, 0.06, 0.04) for v in _cash_flows(r, BATCH, 30)],
            f"{BATCH} projects of 31 flows"),
        Hot("numpy_financial", "pmt", lambda r: [_loans(r, 100_000)], "100000 loans, one call"),
        Hot("numpy_financial", "ipmt",
            lambda r: [(rate, np.minimum(12.0, nper), nper, pv) for rate, nper, pv in [_loans(r, 100_000)]],
            "100000 loans, one call"),
    ],
    # proper scoring rules of probabilistic forecasts
    "properscoring": [
        Hot("properscoring", "crps_ensemble", lambda r: [_ensembles(r, 1_000, 50)],
            "1000 obs x 50 members"),
        Hot("properscoring", "crps_gaussian",
            lambda r: [(r.normal(size=100_000), r.normal(size=100_000), r.uniform(0.5, 2, 100_000))],
            "100000 obs"),
        Hot("properscoring", "brier_score",
            lambda r: [((r.uniform(size=100_000) < 0.3).astype(float), r.uniform(size=100_000))],
            "100000 obs"),
        Hot("properscoring", "threshold_brier_score",
            lambda r: [(*_ensembles(r, 1_000, 50), np.linspace(-2, 2, 9))],
            "1000 obs x 50 members, 9 thresholds"),
    ],
    # geodesy: coordinate conversions of whole tracks in one call
    "pymap3d": [
        Hot("pymap3d", "geodetic2ecef",
            lambda r: [(r.uniform(-89, 89, 100_000), r.uniform(-180, 180, 100_000),
                        r.uniform(0, 10_000, 100_000))], "100000 points, one call"),
        Hot("pymap3d", "ecef2geodetic",
            lambda r: [(r.uniform(-7e6, 7e6, 100_000), r.uniform(-7e6, 7e6, 100_000),
                        r.uniform(-7e6, 7e6, 100_000))], "100000 points, one call"),
        Hot("pymap3d", "geodetic2enu",
            lambda r: [(r.uniform(40, 41, 100_000), r.uniform(-80, -79, 100_000),
                        r.uniform(0, 500, 100_000), 40.5, -79.5, 100.0)], "100000 points, one call"),
    ],
    # state estimation: one predict/update step of a constant-velocity filter a call, and
    # the Gaussian density of a whole track
    "filterpy": [
        Hot("filterpy.kalman.kalman_filter", "predict",
            lambda r: [(r.normal(size=(4, 1)), np.eye(4), _constant_velocity(), np.eye(4) * 0.01)
                       for _ in range(BATCH)], f"{BATCH} steps, 4 states"),
        Hot("filterpy.kalman.kalman_filter", "update",
            lambda r: [(r.normal(size=(4, 1)), np.eye(4), r.normal(size=(2, 1)), np.eye(2) * 0.5,
                        np.eye(2, 4)) for _ in range(BATCH)], f"{BATCH} steps, 4 states, 2 measured"),
        Hot("filterpy.stats.stats", "gaussian",
            lambda r: [(r.normal(size=100_000), 0.5, 2.0)], "100000 points, one call"),
    ],
    # numerical differentiation: finite-difference weights and derivatives of sampled data,
    # and the Shanks extrapolation of three estimates
    "numdifftools": [
        Hot("numdifftools.fornberg", "fd_weights",
            lambda r: [(np.sort(r.uniform(-1.0, 1.0, 7)), 0.0, 2) for _ in range(BATCH)],
            f"{BATCH} stencils of 7 points"),
        Hot("numdifftools.fornberg", "fd_derivative",
            lambda r: [(np.sin(x), x) for x in [np.linspace(0.0, 3.0, 2000)]],
            "2000 samples, one call"),
        Hot("numdifftools.extrapolation", "dea3",
            lambda r: [tuple(1.0 + r.normal(size=1000) * 10.0 ** -k for k in (2, 3, 4))
                       for _ in range(BATCH)], f"{BATCH} calls of 1000 estimates"),
    ],
    # fuzzy logic: membership functions over a universe, and defuzzification of a set
    "scikit-fuzzy": [
        Hot("skfuzzy.membership.generatemf", "trimf",
            lambda r: [(np.linspace(0.0, 10.0, 2001), np.sort(r.uniform(0.0, 10.0, 3)))
                       for _ in range(BATCH)], f"{BATCH} triangles on 2001 points"),
        Hot("skfuzzy.membership.generatemf", "gaussmf",
            lambda r: [(np.linspace(0.0, 10.0, 2001), r.uniform(2.0, 8.0), r.uniform(0.5, 2.0))
                       for _ in range(BATCH)], f"{BATCH} Gaussians on 2001 points"),
        Hot("skfuzzy.defuzzify.defuzz", "centroid",
            lambda r: [(np.linspace(0.0, 10.0, 2001), np.exp(-(np.linspace(0.0, 10.0, 2001)
                                                               - r.uniform(2.0, 8.0)) ** 2))
                       for _ in range(BATCH)], f"{BATCH} sets of 2001 points"),
    ],
    # attitude estimation: quaternion algebra, one quaternion or rotation a call
    "ahrs": [
        Hot("ahrs.common.orientation", "q2R", lambda r: [(q,) for q in _unit_quaternions(r, BATCH)],
            f"{BATCH} quaternions"),
        Hot("ahrs.common.orientation", "q_prod",
            lambda r: list(zip(_unit_quaternions(r, BATCH), _unit_quaternions(r, BATCH))),
            f"{BATCH} products"),
        Hot("ahrs.common.orientation", "dcm2quat", lambda r: [(m,) for m in _rotations(r, BATCH)],
            f"{BATCH} 3x3"),
        Hot("ahrs.common.orientation", "q2euler",
            lambda r: [(q,) for q in _unit_quaternions(r, BATCH)], f"{BATCH} quaternions"),
    ],
    # design of experiments: Latin hypercubes optimised over iterations, full factorials,
    # central composite designs, and scaling a sample to its bounds
    "pyDOE3": [
        Hot("pyDOE3.doe_lhs", "lhs", lambda r: [(5, 50, "maximin", 20, None, None, int(s))
                                                for s in r.integers(0, 2**31, 5)],
            "5 maximin designs, 5 factors x 50 samples, 20 iterations"),
        Hot("pyDOE3.doe_factorial", "fullfact", lambda r: [([4, 3, 5, 2, 6],)],
            "4x3x5x2x6 levels, one call"),
        Hot("pyDOE3.doe_composite", "ccdesign", lambda r: [(n,) for n in (2, 3, 4, 5, 6) * 5],
            f"{BATCH} designs of 2 to 6 factors"),
        Hot("pyDOE3.utils", "scale_samples",
            lambda r: [(r.uniform(size=(100_000, 4)), [(-1.0, 1.0), (0.0, 10.0), (5.0, 6.0), (-3.0, 0.0)])],
            "100000 samples of 4 factors, one call"),
    ],
    # finite differences: the weights of uniform stencils, and those of every point of a
    # non-uniform grid (one batched solve, or one point at a time)
    "findiff": [
        Hot("findiff.coefs", "coefficients",
            lambda r: [(d, a) for d in (1, 2, 3) for a in (2, 4, 6, 8)],
            "derivatives 1 to 3 at accuracies 2 to 8, 12 calls"),
        Hot("findiff.coefs", "calc_coefs_non_uni_batched",
            lambda r: [(2, 4, np.sort(r.uniform(0.0, 10.0, 2000)))], "2000 grid points, one call"),
        Hot("findiff.coefs", "coefficients_non_uni",
            lambda r: [(2, 4, x, i) for x in [np.sort(r.uniform(0.0, 10.0, 2000))]
                       for i in range(0, 2000, 2000 // BATCH)], f"{BATCH} points of a 2000-point grid"),
    ],
}


def _constant_velocity(dt: float = 0.1) -> np.ndarray:
    """The transition of a 2-D constant-velocity model: positions move by velocity * dt."""
    return np.eye(4) + np.eye(4, k=2) * dt


# -- the child: one variant of one package -----------------------------------------------------

def _load_child_helpers():
    """np2jax.verify._child's _block and _encode, loaded by path (that module imports nothing
    of np2jax, so the child needs no np2jax package on its path)."""
    import importlib.util

    path = ROOT / "np2jax" / "verify" / "_child.py"
    spec = importlib.util.spec_from_file_location("_np2jax_verify_child", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class CompileCounter:
    """XLA compilations (and traces) seen by JAX's monitoring listeners, process-wide."""

    def __init__(self):
        self.compiles = 0
        self.traces = 0
        self.installed = False

    def install(self) -> bool:
        jax = sys.modules.get("jax")
        if jax is None or self.installed:
            return self.installed
        import jax.monitoring

        def on_duration(event, *args, **kwargs):
            if event == COMPILE_EVENT:
                self.compiles += 1
            elif event == TRACE_EVENT:
                self.traces += 1

        jax.monitoring.register_event_duration_secs_listener(on_duration)
        self.installed = True
        return True

    def snapshot(self) -> tuple[int, int]:
        return self.compiles, self.traces


def measure(function: Callable, calls_of: Callable[[int], list], repeat: int, counter: CompileCounter,
            block: Callable, budget_s: float, deadline: float | None = None) -> dict:
    """Time `function` on the calls of seed 0 (first: compile + run), then on those of seeds
    1..repeat (steady), counting compilations in each phase; returns the first run's results.

    Steady runs stop early when the next would pass `budget_s` (from this function's start,
    estimated at 1.5 times the last run) or the child's `deadline` (a perf_counter time); the
    first steady run is always made unless the deadline forbids it (the first run, compile
    included, is its estimate), so that a slow compilation leaves one steady figure."""
    calls = first_calls = calls_of(0)
    before = counter.snapshot()
    started = time.perf_counter()
    results = [function(*args) for args in calls]
    block(results)
    first = time.perf_counter() - started
    after_first = counter.snapshot()
    times, stopped_early = [], False
    for seed in range(1, repeat + 1):
        now = time.perf_counter()
        estimate = 1.5 * times[-1] if times else first
        if (times and now - started + estimate > budget_s) or \
                (deadline is not None and now + estimate > deadline):
            stopped_early = True
            break
        calls = calls_of(seed)
        before_run = time.perf_counter()
        block([function(*args) for args in calls])
        times.append(time.perf_counter() - before_run)
    after = counter.snapshot()
    return {"results": results if len(first_calls) > 1 else results[0], "first_s": first,
            "times_s": times, "stopped_early": stopped_early, "calls_per_run": len(first_calls),
            "first_compiles": after_first[0] - before[0], "steady_compiles": after[0] - after_first[0],
            "steady_traces": after[1] - after_first[1]}


def child_main(spec_path: str) -> int:
    """Run one variant of one package: spec = {tree, package, labels, repeat, budget_s,
    deadline_s, result, table}; writes a pickle {ok, jax, x64, platforms, device_kind, versions,
    functions: {label: measure()'s figures, the results encoded as np2jax.verify's child does}}
    after each function (a timeout loses only the functions not yet run)."""
    import importlib
    import pickle

    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    deadline = time.perf_counter() + spec["deadline_s"] if spec.get("deadline_s") else None
    sys.path.insert(0, spec["tree"])
    helpers = _load_child_helpers()
    table = HOT
    if spec.get("table"):  # another spec table (a test's), from a file that defines HOT
        table = {"Hot": Hot, "np": np}
        exec(compile(Path(spec["table"]).read_text(), spec["table"], "exec"), table)  # noqa: S102
        table = table["HOT"]
    hot = {h.label: h for h in table[spec["package"]]}
    counter = CompileCounter()
    payload = {"ok": True, "jax": False, "x64": False, "platforms": [], "functions": {},
               "versions": {"python": sys.version.split()[0], "numpy": np.__version__}}

    def write():
        temporary = spec["result"] + ".part"
        with open(temporary, "wb") as handle:
            pickle.dump(payload, handle, protocol=4)
        os.replace(temporary, spec["result"])

    for label in spec["labels"]:
        entry = hot[label]
        try:
            module = importlib.import_module(entry.module)
            function = getattr(module, entry.name)
        except BaseException as exc:  # noqa: BLE001 - reported, the next function still runs
            payload["functions"][label] = {"ok": False, "stage": "import", "error": helpers._one_line(exc)}
            write()
            continue
        if counter.install() and not payload["jax"]:
            jax = sys.modules["jax"]
            payload["jax"] = True
            payload["x64"] = bool(jax.config.jax_enable_x64)
            devices = jax.devices()
            payload["platforms"] = sorted({d.platform for d in devices})
            payload["device_kind"] = devices[0].device_kind if devices else None
            payload["versions"]["jax"] = jax.__version__
            payload["versions"]["jaxlib"] = getattr(sys.modules.get("jaxlib"), "__version__", None)
        inner = getattr(function, "__wrapped__", function)
        defined_in = f"{getattr(inner, '__module__', entry.module)}.{getattr(inner, '__qualname__', entry.name)}"
        jitted = hasattr(function, "lower") and hasattr(function, "trace")  # a jax.jit wrapper

        def calls_of(seed, entry=entry):
            return entry.inputs(np.random.default_rng(seed))

        try:
            found = measure(function, calls_of, spec["repeat"], counter, helpers._block,
                            spec["budget_s"], deadline)
            found["tree"] = helpers._encode(found.pop("results"))
            found["ok"] = True
        except BaseException as exc:  # noqa: BLE001
            found = {"ok": False, "stage": "call", "error": helpers._one_line(exc)}
        found.update(defined_in=defined_in, jitted=jitted)
        payload["functions"][label] = found
        write()
    write()
    return 0


# -- the parent: running the children ----------------------------------------------------------

def run_child(tree: Path, package: str, labels: list[str], repeat: int, platform: str | None,
              timeout_s: float, table: Path | None = None) -> dict:
    """One variant in a child process (killed, with all it started, after timeout_s)."""
    import pickle

    workdir = Path(tempfile.mkdtemp(prefix="np2jax-libspeed-"))
    try:
        result = workdir / "result.pkl"
        spec = workdir / "spec.json"
        spec.write_text(json.dumps({"tree": str(tree.resolve()), "package": package, "labels": labels,
                                    "repeat": repeat, "budget_s": 0.6 * timeout_s / max(1, len(labels)),
                                    "deadline_s": 0.85 * timeout_s,
                                    "result": str(result), "table": str(table) if table else None}),
                        encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k not in ("JAX_ENABLE_X64", "PYTHONSTARTUP")}
        env.update({"PYTHONDONTWRITEBYTECODE": "1", "TF_CPP_MIN_LOG_LEVEL": "2",
                    "XLA_PYTHON_CLIENT_PREALLOCATE": "false"})
        if platform:
            env["JAX_PLATFORMS"] = platform
        started = time.monotonic()
        process = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "_child", str(spec)],
                                   cwd=workdir, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)
        try:
            _, stderr = process.communicate(timeout=timeout_s)
            error = None if process.returncode == 0 else \
                f"exit {process.returncode}: {(stderr.strip().splitlines() or [''])[-1][:200]}"
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            error = f"timeout after {timeout_s:g} s"
        payload = {"ok": False, "functions": {}}
        if result.exists():
            with open(result, "rb") as handle:
                payload = pickle.load(handle)
        payload["error"] = error
        payload["wall_s"] = time.monotonic() - started
        return payload
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


# -- the parent: figures and the report ---------------------------------------------------------

def recompile_verdict(found: dict | None) -> str:
    """The compilations of a variant's steady runs: "none", "every call" (each steady run
    compiled at least once: a compile keyed on values, slower than eager) or "N in M runs"."""
    if not found or not found.get("ok"):
        return "-"
    runs, compiles = len(found.get("times_s", [])), found.get("steady_compiles", 0)
    if not runs:
        return "not measured"
    if compiles == 0:
        return "none"
    if runs and compiles >= runs:
        return "every call"
    return f"{compiles} in {runs} runs"


def steady_s(found: dict | None) -> float | None:
    """The median of the steady runs (None when none fitted the time limit)."""
    if not found or not found.get("ok"):
        return None
    times = found.get("times_s") or []
    return statistics.median(times) if times else None


def compare(numpy_found: dict | None, found: dict | None, x64: bool) -> tuple[bool | None, str | None]:
    """(equal, problem) of a variant's first-run results against NumPy's, with np2jax.verify's
    tolerances for the precision the variant ran in; (None, why) when one side has none."""
    from np2jax.verify.compare import Tolerance, compare_trees, decode

    if not numpy_found or not numpy_found.get("ok"):
        return None, "NumPy failed: " + ((numpy_found or {}).get("error") or "no result")
    if not found or not found.get("ok"):
        return False, (found or {}).get("error") or "no result"
    outputs = compare_trees(decode(numpy_found["tree"]), decode(found["tree"]),
                            tolerance=Tolerance(x64=x64, floor32=not x64), root="result")
    problems = [o.problem() for o in outputs if not o.equal]
    return not problems, (problems[0] if problems else None)


_LINE = re.compile(r" \(line \d+\)")


def short_reason(reason: str | None, width: int = 64) -> str:
    """An NJ502 reason cut to its first clause: "it uses a `try` statement"."""
    if not reason:
        return ""
    text = _LINE.sub("", reason)
    for stop in (": ", ", and ", "; ", " (I/O", ", which"):
        at = text.find(stop, 12)
        if at > 0:
            text = text[:at]
    return text if len(text) <= width else text[:width - 1] + "…"


def compiled_cell(facts: dict, defined_in: str | None, jitted: bool | None) -> str:
    fact = facts.get(defined_in or "")
    if fact is None:
        text = "no finding"
    elif fact["compiled"]:
        text = "yes (NJ501)"
    else:
        text = "no: " + short_reason(fact["reason"])
    if jitted is not None and bool(jitted) != bool(fact and fact["compiled"]):
        text += f" [the jit tree's function is {'' if jitted else 'not '}a jax.jit]"
    return text


def function_figures(hot: Hot, runs: dict, device: str, facts: dict) -> dict:
    """Everything about one hot function on one device: NumPy's time, and for eager and jit
    the first and steady times, speed-ups, compilations and agreement with NumPy."""
    numpy_found = runs["numpy"]["functions"].get(hot.label)
    numpy_s = steady_s(numpy_found)
    figures = {"function": hot.label, "inputs": hot.what,
               "defined_in": (numpy_found or {}).get("defined_in"),
               "numpy_s": numpy_s, "numpy_first_s": (numpy_found or {}).get("first_s"),
               "numpy_error": None if numpy_found and numpy_found.get("ok") else
               (numpy_found or {}).get("error") or runs["numpy"].get("error") or "no result"}
    jit_found = runs[("jit", device)]["functions"].get(hot.label)
    figures["jitted"] = (jit_found or {}).get("jitted")
    fact = facts.get(figures["defined_in"] or "")
    figures["compiled"] = bool(fact and fact["compiled"])
    figures["eager_reason"] = fact["reason"] if fact and not fact["compiled"] else None
    figures["compiled_cell"] = compiled_cell(facts, figures["defined_in"], figures["jitted"])
    for variant in ("eager", "jit"):
        payload = runs[(variant, device)]
        found = payload["functions"].get(hot.label)
        equal, problem = compare(numpy_found, found, payload.get("x64", False))
        steady = steady_s(found)
        figures[variant] = {
            "ok": bool(found and found.get("ok")), "first_s": (found or {}).get("first_s"),
            "steady_s": steady, "times_s": (found or {}).get("times_s", []),
            "speedup": numpy_s / steady if numpy_s and steady else None,
            "first_compiles": (found or {}).get("first_compiles"),
            "steady_compiles": (found or {}).get("steady_compiles"),
            "steady_traces": (found or {}).get("steady_traces"),
            "recompiles": recompile_verdict(found), "equal": equal, "problem": problem,
            "error": (found or {}).get("error") or (None if found else payload.get("error") or "no result"),
        }
    return figures


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2g}x"


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def _equal_cell(found: dict) -> str:
    if found["equal"] is None:
        return "-"
    if not found["ok"]:
        return "failed"
    return "equal" if found["equal"] else "differs"


def package_table(name: str, version: str, device: str, rows: list[dict]):
    from rich import box
    from rich.table import Table

    from np2jax.verify.report import fmt_seconds

    table = Table(title=f"{name} {version} on {device} (speed-up = NumPy steady / variant steady; "
                        "recompiles = XLA compilations in the steady runs)",
                  title_justify="left", box=box.MARKDOWN)
    for heading in ("function", "inputs", "--jit compiled it?", "NumPy", "eager first / steady",
                    "jit first / steady", "eager speed-up", "jit speed-up",
                    "compiles in first run eager / jit", "recompiles eager / jit", "equal eager / jit"):
        table.add_column(heading, justify="left" if heading in ("function", "inputs", "--jit compiled it?")
                         else "right")
    for row in rows:
        eager, jit = row["eager"], row["jit"]
        table.add_row(
            row["function"], row["inputs"], row["compiled_cell"], fmt_seconds(row["numpy_s"]),
            f"{fmt_seconds(eager['first_s'])} / {fmt_seconds(eager['steady_s'])}",
            f"{fmt_seconds(jit['first_s'])} / {fmt_seconds(jit['steady_s'])}",
            _ratio(eager["speedup"]), _ratio(jit["speedup"]),
            f"{_count(eager['first_compiles'])} / {_count(jit['first_compiles'])}",
            f"{eager['recompiles']} / {jit['recompiles']}",
            f"{_equal_cell(eager)} / {_equal_cell(jit)}")
    return table


def summary_lines(rows: list[dict]) -> list[str]:
    """What compiling bought on these hot functions (one device)."""
    lines = []
    compiled = [r for r in rows if r["compiled"]]
    lines.append(f"hot functions --jit compiled (NJ501): {len(compiled)} of {len(rows)}"
                 + (f" ({', '.join(r['function'] for r in compiled)})" if compiled else ""))
    gains = [r["eager"]["steady_s"] / r["jit"]["steady_s"] for r in compiled
             if r["eager"]["steady_s"] and r["jit"]["steady_s"]]
    if gains:
        lines.append(f"compiled ones, jit over eager (steady): median {statistics.median(gains):.2g}x, "
                     f"range {min(gains):.2g}x to {max(gains):.2g}x")
    slower = [f"{r['function']} ({r['eager']['steady_s'] / r['jit']['steady_s']:.2g}x)" for r in compiled
              if r["jit"]["steady_s"] and r["eager"]["steady_s"] and r["jit"]["steady_s"] > r["eager"]["steady_s"]]
    if slower:
        lines.append("compiled, yet slower than eager (steady): " + ", ".join(slower))
    every = [f"{r['function']} ({v})" for r in rows for v in ("eager", "jit")
             if r[v]["recompiles"] == "every call"]
    lines.append(f"recompiles every call: {len(every)}" + (f" ({', '.join(every)})" if every else ""))
    some = [f"{r['function']} ({v}: {r[v]['recompiles']})" for r in rows for v in ("eager", "jit")
            if r[v]["recompiles"] not in ("none", "every call", "-", "not measured")]
    if some:
        lines.append("compiles in some steady runs: " + ", ".join(some))
    beats = [r for r in rows if r["jit"]["speedup"] and r["jit"]["speedup"] > 1]
    lines.append(f"jit faster than NumPy: {len(beats)} of {len(rows)}"
                 + (f" ({', '.join(r['function'] for r in beats)})" if beats else ""))
    return lines


def report_lines(rows: list[dict], uses_jax: bool, eager_findings: dict) -> list[str]:
    lines = summary_lines(rows)
    failure = first_failure(rows)
    if failure is not None:  # nothing converted ran: whether it uses JAX is unknown
        lines.insert(0, f"every converted variant failed (eager and jit, {len(rows)} function(s)), "
                        f"nothing converted was measured; the first error: {failure}")
    elif not uses_jax:  # NumPy against NumPy: a speed-up is noise, not a finding
        lines = [line for line in lines if not line.startswith("jit faster than NumPy")]
        findings = ", ".join(f"{c} {n}" for c, n in sorted(eager_findings.items()))
        lines.insert(0, "the converted library does not use JAX: convert left it on NumPy "
                        f"(its findings: {findings or 'none'}); eager and jit run NumPy's code, "
                        "and their differences from NumPy are the machine's noise")
    return lines


def first_failure(rows: list[dict]) -> str | None:
    """"FUNCTION VARIANT: ERROR" of the first converted variant's failure, when every
    converted variant (eager and jit) of every function failed; else None (and None when
    there are no rows)."""
    variants = [(row["function"], variant, row[variant]) for row in rows for variant in ("eager", "jit")]
    if not variants or any(found["ok"] for _, _, found in variants):
        return None
    function, variant, found = variants[0]
    return f"{function} {variant}: {found['error']}"


def render(console, name: str, version: str, device: str, rows: list[dict], lines: list[str],
           problems: list[str]) -> None:
    console.print(package_table(name, version, device, rows))
    for line in lines:
        console.print(f"  {line}", markup=False, highlight=False)
    for line in problems:
        console.print(f"  problem: {line}", markup=False, highlight=False)
    console.print()


def show(json_path: Path) -> int:
    """The tables again, from a `run --json` file (a GPU machine's, say)."""
    from rich.console import Console

    try:
        report = json.loads(json_path.read_text())
    except (OSError, ValueError) as exc:
        print(f"library_speed.py: --json: {exc}", file=sys.stderr)
        return 2
    console = Console(width=400)
    versions = next((c.get("versions") for p in report["packages"].values()
                     for c in p["children"].values() if c.get("jax")), {})
    console.print(f"np2jax {report.get('np2jax_commit')}, --repeat {report['repeat']}, "
                  f"run took {report.get('wall_s', 0):.0f} s; {versions}", highlight=False)
    ok = True
    for name, package in report["packages"].items():
        for key, device in package["devices"].items():
            uses_jax = device.get("uses_jax", package["children"].get(f"eager/{key}", {}).get("jax", True))
            lines = report_lines(device["functions"], uses_jax, package.get("eager_findings", {}))
            render(console, name, package["version"], device.get("label", key), device["functions"],
                   lines, device["problems"])
            ok = ok and not device["problems"]
    return 0 if ok else 1


def problem_lines(name: str, rows: list[dict], runs: dict) -> list[str]:
    lines = []
    for key, payload in runs.items():
        if payload.get("error"):
            lines.append(f"{name} {key if isinstance(key, str) else '/'.join(key)}: {payload['error']}")
    for row in rows:
        if row["numpy_error"]:
            lines.append(f"{name} {row['function']} numpy: {row['numpy_error']}")
        for variant in ("eager", "jit"):
            found = row[variant]
            if not found["ok"]:
                lines.append(f"{name} {row['function']} {variant}: {found['error']}")
            elif found["equal"] is False:
                lines.append(f"{name} {row['function']} {variant}: differs: {found['problem']}")
    return lines


def run_benchmark(work: Path, only: list[str] | None, device: str, repeat: int, timeout_s: float,
                  json_path: Path | None) -> int:
    from rich.console import Console

    from np2jax.verify.core import VerifyUsageError, parse_devices, resolve_devices

    console = Console(width=400)  # wide enough that no cell wraps (a wrapped row breaks the Markdown)
    manifest_path = work / "manifest.json"
    try:
        if repeat < 1:
            raise VerifyUsageError("--repeat must be at least 1")
        if not manifest_path.is_file():
            raise VerifyUsageError(f"--work: no {manifest_path}; run `prepare --work {work}` first")
        manifest = json.loads(manifest_path.read_text())
        unknown = [n for n in only or () if n not in HOT]
        if unknown:
            raise VerifyUsageError(f"--only: no package {unknown[0]!r}; choose from {', '.join(HOT)}")
        missing = [n for n in only or HOT if n not in manifest["packages"]]
        if missing and only:
            raise VerifyUsageError(f"--only: {missing[0]} is not prepared in {work}")
        devices = resolve_devices(parse_devices(device))
    except VerifyUsageError as exc:
        print(f"library_speed.py: {exc}", file=sys.stderr)
        return 2
    started = time.monotonic()
    report = {"work": str(work), "prepared": manifest.get("prepared"),
              "np2jax_commit": manifest.get("np2jax_commit"), "repeat": repeat,
              "devices": [d for d, _ in devices], "packages": {}}
    ok = True
    for name, hots in HOT.items():
        if name not in manifest["packages"] or (only and name not in only):
            continue
        entry = manifest["packages"][name]
        facts_path = work / name / "facts.json"
        facts = json.loads(facts_path.read_text()) if facts_path.is_file() else {}
        labels = [h.label for h in hots]
        console.print(f"[dim]{name}: numpy...[/dim]")
        runs = {"numpy": run_child(work / name / "numpy", name, labels, repeat, "cpu", timeout_s)}
        for device_name, platform in devices:
            for variant in ("eager", "jit"):
                console.print(f"[dim]{name}: {variant} on {device_name}...[/dim]")
                runs[(variant, device_name)] = run_child(work / name / variant, name, labels, repeat,
                                                         platform, timeout_s)
        package = {"version": entry["version"], "eager_findings": entry.get("eager_findings", {}),
                   "compiled_in_library": entry.get("compiled"),
                   "left_eager_in_library": entry.get("left_eager"), "devices": {},
                   "children": {("/".join(k) if isinstance(k, tuple) else k):
                                {key: v for key, v in payload.items() if key != "functions"}
                                for k, payload in runs.items()}}
        for device_name, _ in devices:
            rows = [function_figures(h, runs, device_name, facts) for h in hots]
            kind = runs[("jit", device_name)].get("device_kind")
            label = device_name + (f" ({kind})" if kind else "")
            eager_run = runs[("eager", device_name)]
            uses_jax = any(runs[(v, device_name)].get("jax") for v in ("eager", "jit")) \
                or not eager_run["functions"]
            lines = report_lines(rows, uses_jax, entry.get("eager_findings", {}))
            problems = problem_lines(name, rows, runs)
            render(console, name, entry["version"], label, rows, lines, problems)
            ok = ok and not problems
            package["devices"][device_name] = {"label": label, "uses_jax": uses_jax, "functions": rows,
                                               "summary": lines, "problems": problems}
        report["packages"][name] = package
        report["wall_s"] = time.monotonic() - started
        if json_path:  # after each package: a run stopped midway keeps what it measured
            json_path.write_text(json.dumps(report, indent=1, default=str) + "\n")
    report["wall_s"] = time.monotonic() - started
    console.print(f"run took {report['wall_s']:.0f} s", highlight=False)
    if json_path:
        json_path.write_text(json.dumps(report, indent=1, default=str) + "\n")
    return 0 if ok else 1


# -- prepare ---------------------------------------------------------------------------------

def function_facts(report: dict, package_dir: Path) -> dict:
    """From `convert --jit`'s JSON: {"module.function": {"compiled": bool, "reason": str|None,
    "line": int}} for every function it compiled (NJ501) or left eager (NJ502)."""
    facts = {}
    entries = [(c, True) for c in report.get("changes", []) if c.get("code") == "NJ501"]
    entries += [(f, False) for f in report.get("findings", []) if f.get("code") == "NJ502"]
    for entry, compiled in entries:
        message = entry.get("message") or ""
        if "`" not in message:
            continue
        name = message.split("`")[1]
        path = Path(entry["path"]).resolve().relative_to(package_dir.resolve().parent)
        module = ".".join(path.with_suffix("").parts)
        module = module.removesuffix(".__init__")
        reason = None
        if not compiled:
            reason = message.split("(eager JAX): ", 1)[-1] if "(eager JAX): " in message else message
        facts[f"{module}.{name}"] = {"compiled": compiled, "reason": reason, "line": entry.get("line")}
    return facts


def prepare(work: Path, only: list[str] | None, sdists: Path | None) -> int:
    from real_projects import PROJECTS, convert_command, fetch, library_files, run, unpack

    work.mkdir(parents=True, exist_ok=True)
    (work / "sdists").mkdir(exist_ok=True)
    if sdists:
        for archive in sdists.iterdir():
            if archive.is_file() and not (work / "sdists" / archive.name).exists():
                shutil.copy2(archive, work / "sdists" / archive.name)
    manifest = {"prepared": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "np2jax_commit": _git_commit(), "packages": {}}
    for project in PROJECTS:
        if only and project.name not in only:
            continue
        archive = fetch(project, work / "sdists")
        base = work / project.name
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir(parents=True)
        staging = Path(tempfile.mkdtemp(prefix="np2jax-libspeed-prepare-"))
        try:
            unpack(archive, staging / "sdist")
            package_dir = staging / "sdist" / project.package
            files = library_files(package_dir, project.exclude)
            entry = {"version": project.version, "package": project.package, "x64": project.x64,
                     "library_files": len(files), "commands": {}}
            for variant in VARIANTS:
                target = base / variant / project.package
                for path in files:  # the library's files only: its tests stay behind
                    (target / path.relative_to(package_dir)).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(path, target / path.relative_to(package_dir))
                if variant == "numpy":
                    continue
                out = staging / f"out-{variant}"
                command = convert_command(project, package_dir, out, project.x64, variant == "jit")
                done = run(command)
                try:
                    report = json.loads(done.stdout)
                except ValueError:
                    print(f"{project.name}: convert ({variant}) printed no JSON: {done.stderr[-500:]}",
                          file=sys.stderr)
                    return 1
                for path in out.rglob("*.py"):
                    shutil.copy2(path, target / path.relative_to(out))
                shown = [str(p).replace(str(package_dir), project.package) for p in command[3:]]
                entry["commands"][variant] = "np2jax convert " + " ".join(
                    a.replace(str(out), f"OUT-{variant}") for a in shown[1:])
                entry[f"{variant}_findings"] = _codes(report)
                entry[f"{variant}_errors"] = report.get("errors", [])
                if variant == "jit":
                    facts = function_facts(report, package_dir)
                    (base / "facts.json").write_text(json.dumps(facts, indent=1, sort_keys=True))
                    entry["compiled"] = sum(f["compiled"] for f in facts.values())
                    entry["left_eager"] = sum(not f["compiled"] for f in facts.values())
            manifest["packages"][project.name] = entry
            print(f"{project.name}: {entry['library_files']} library files; --jit compiled "
                  f"{entry['compiled']} functions, left {entry['left_eager']} eager", flush=True)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    previous = work / "manifest.json"
    if previous.exists() and only:  # a partial prepare keeps the other packages
        old = json.loads(previous.read_text())
        manifest["packages"] = {**old.get("packages", {}), **manifest["packages"]}
    previous.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    return 0


def _codes(report: dict) -> dict:
    counts: dict[str, int] = {}
    for finding in report.get("findings", []):
        counts[finding["code"]] = counts.get(finding["code"], 0) + 1
    return counts


def _git_commit() -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=False)
    except OSError:
        return None
    return done.stdout.strip() or None


def main(argv: list[str] | None = None) -> int:
    if str(ROOT) not in sys.path:  # np2jax from this checkout (a machine where it is not installed)
        sys.path.insert(1, str(ROOT))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    prep = commands.add_parser("prepare", help="unpack and convert (needs np2jax's converter)")
    prep.add_argument("--work", type=Path, required=True)
    prep.add_argument("--sdists", type=Path, help="copy these sdists into WORK/sdists first")
    prep.add_argument("--only", nargs="*", help="package names (default: all)")
    timed = commands.add_parser("run", help="time the hot functions (needs NumPy, JAX, rich; no libcst)")
    timed.add_argument("--work", type=Path, required=True)
    timed.add_argument("--device", default="all", help="cpu, gpu or all (the available ones)")
    timed.add_argument("--repeat", type=int, default=5, help="steady runs after the first one")
    timed.add_argument("--only", nargs="*", help="package names (default: all)")
    timed.add_argument("--timeout", type=float, default=240.0, help="seconds each child may run")
    timed.add_argument("--json", type=Path, help="also write every figure to this file")
    again = commands.add_parser("show", help="print the tables of a `run --json` file again")
    again.add_argument("--json", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "show":
        return show(args.json)
    if args.command == "prepare":
        return prepare(args.work, args.only, args.sdists)
    return run_benchmark(args.work, args.only, args.device, args.repeat, args.timeout, args.json)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "_child":
        sys.exit(child_main(sys.argv[2]))
    sys.exit(main())
