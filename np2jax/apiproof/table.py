"""The whole table: proving every callable in worker processes, summarizing the verdicts into
the table's provenance, merging a part or some callables into an existing table, and the
command line (`python -m np2jax.apiproof`)."""

from __future__ import annotations

import argparse
import datetime
import fnmatch
import hashlib
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from np2jax.apiproof.verdicts import (
    AS_ARRAY, AS_FLOAT_ARRAY, AS_SPELLED, CALLABLE_TIMEOUT_S, DEFAULT_OUT, DIFFERS, DTYPE_AS_FLOAT64,
    GRID_PATH, INTEGER_PARAMS, INT_ARRAY_CASE, NUMPY_RAISES, OPTION_DTYPES,
    OPTION_DTYPE_CASES, PARTS, PART_NAMES, PYTHON_NUMBERS, RAISES, ROOT, SAME, TABLE_PATH,
    SIGNED_ZEROS, TASKS_PER_WORKER, TOLERANCES, UNSIGNED_ZEROS,
)
from np2jax.apiproof.grid import Samples
from np2jax.apiproof.running import short
from np2jax.apiproof.prover import Prover, method_entries, spec_for


def _environment(cache: str | None = None):
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
    warnings.simplefilter("ignore")
    import jax
    import numpy as np

    jax.config.update("jax_enable_x64", True)
    if cache:  # XLA's compilations are most of the run: a second run reads them from disk
        jax.config.update("jax_compilation_cache_dir", cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    np.seterr(all="ignore")
    return {"np": np, "jax": jax}


_WORKER: dict = {}


def _init_worker(grid: dict, cache: str | None = None) -> None:
    env = _environment(cache)
    _WORKER.update(env=env, grid=grid, samples=Samples(grid, env["np"]))


def prove_one(name: str, entry: dict) -> tuple[str, dict, float]:
    start = time.perf_counter()
    grid, env, samples = _WORKER["grid"], _WORKER["env"], _WORKER["samples"]
    if entry.get("kind") == "method":
        ufunc = spec_for(name.rpartition(".")[0], grid).get("args", ["@M"])
        grid = dict(grid, functions={**grid["functions"],
                                     name: _method_spec(entry["method"], ufunc[0])})
    try:
        prover = Prover(name, entry, grid, samples, env)
        result = prover.prove_part(grid["part"]) if grid.get("part") else prover.prove()
    except Exception as exc:  # noqa: BLE001 - a bug of the grid for one callable
        result = {"jax": entry["jax"], "skipped": f"the generator failed: {short(exc)}"}
    return name, result, time.perf_counter() - start


def _method_spec(method: str, ufunc_data: str = "@M") -> dict:
    """The data of `numpy.<ufunc>.<method>`: the ufunc's own kind of data where it takes
    integers only (`np.bitwise_xor.reduce(bits)`: its grid's @ints), else mixed floats."""
    if ufunc_data in ("@ints", "@counts"):
        vector = f"{ufunc_data}v"
        return {"outer": {"args": [vector, vector]},
                "reduceat": {"args": [vector, "@segments"], "params": {"indices": ["@segments"]}}
                }.get(method, {"args": [ufunc_data]})
    return {"outer": {"args": ["@v3", "@v4"]},
            "reduceat": {"args": ["@v", "@segments"], "params": {"indices": ["@segments"]}}
            }.get(method, {"args": ["@M"]})


def callables(table: dict) -> dict[str, dict]:
    chosen = {name: entry for name, entry in table.items()
              if entry.get("jax") and entry.get("kind") in ("function", "ufunc", "class", "dtype")}
    chosen.update(method_entries(table))
    return chosen


_NO_COUNTS = {SAME: 0, DIFFERS: 0, RAISES: 0, NUMPY_RAISES: 0}  # a table older than a part


def _bucket(verdict: str) -> str | None:
    """same, differs, raises (both) or numpy raises (JAX returns where NumPy raises)."""
    if verdict in (SAME, RAISES, AS_ARRAY, AS_FLOAT_ARRAY, DTYPE_AS_FLOAT64):
        return verdict
    if verdict.startswith(NUMPY_RAISES):
        return NUMPY_RAISES
    if verdict.startswith(AS_SPELLED):
        return AS_SPELLED
    return DIFFERS if verdict.startswith(DIFFERS) else None


def summarize(results: dict) -> dict:
    """The counts a run proved: callables (proven, or skipped with the reason why), their
    base calls' verdicts, parameters (same for every value tried, for some, for none), and
    the verdicts of parameter values, dtypes and edge values."""
    def buckets():
        return {SAME: 0, DIFFERS: 0, RAISES: 0, NUMPY_RAISES: 0}

    counts = {"callables": len(results), "proven": 0, "skipped": 0,
              "verdicts": buckets(),
              "parameters": {SAME: 0, DIFFERS: 0, "partly": 0},
              "parameter_values": dict(buckets(), **{AS_SPELLED: 0}), "dtypes": dict(buckets(), **{DTYPE_AS_FLOAT64: 0}),
              "edges": buckets(),
              INTEGER_PARAMS: dict(buckets(), **{AS_SPELLED: 0}), OPTION_DTYPES: buckets(),
              "python_numbers": dict(buckets(), **{AS_ARRAY: 0, AS_FLOAT_ARRAY: 0})}
    counts["zero_signs"] = {UNSIGNED_ZEROS: 0, SIGNED_ZEROS: 0}
    for result in results.values():
        if "skipped" in result:
            counts["skipped"] += 1
            continue
        counts["proven"] += 1
        text = json.dumps(result)
        # NJ417 mends the one-array results (a tuple's item says where: " (item 0)")
        counts["zero_signs"][UNSIGNED_ZEROS] += f'{UNSIGNED_ZEROS}"' in text
        counts["zero_signs"][SIGNED_ZEROS] += SIGNED_ZEROS in text or f"{UNSIGNED_ZEROS} (item" in text
        counts["verdicts"][_bucket(result["verdict"]) or DIFFERS] += 1
        for cases in result.get("python_numbers", {}).values():
            for verdict in cases.values():
                if _bucket(verdict):
                    counts["python_numbers"][_bucket(verdict)] += 1
        for part in ("dtypes", "edges"):
            for verdict in result.get(part, {}).values():
                if _bucket(verdict):
                    counts[part][_bucket(verdict)] += 1
        for part in (INTEGER_PARAMS, OPTION_DTYPES):
            for values in result.get(part, {}).values():
                for verdict in values.values():
                    if _bucket(verdict):
                        counts[part][_bucket(verdict)] += 1
        for record in result.get("params", {}).values():
            verdicts = [_bucket(v) for v in record.get("values", {}).values() if _bucket(v)]
            for verdict in verdicts:
                counts["parameter_values"][verdict] += 1
            if record.get("data") or not verdicts:
                continue
            if DIFFERS not in verdicts:
                counts["parameters"][SAME] += 1
            elif any(v != DIFFERS for v in verdicts):
                counts["parameters"]["partly"] += 1
            else:
                counts["parameters"][DIFFERS] += 1
    return counts


def describe(provenance: dict) -> str:
    """The run time and the counts of a table's provenance, as lines to print."""
    summary = provenance["summary"]

    def line(label, counts):
        return f"  {label:<18} same {counts[SAME]}, different {counts[DIFFERS]}, both raise " \
               f"{counts[RAISES]}, only NumPy raises {counts[NUMPY_RAISES]}"

    parameters = summary["parameters"]
    return "\n".join([
        f"ran {summary['callables']} callables in {provenance['run_seconds']} s "
        f"({provenance['jobs']} jobs, {provenance['cpu_seconds']} CPU s): "
        f"{summary['proven']} proven, {summary['skipped']} skipped",
        line("base calls:", summary["verdicts"]),
        f"  {'parameters:':<18} {sum(parameters.values())} options: same for every value "
        f"{parameters[SAME]}, for some {parameters['partly']}, for none {parameters[DIFFERS]}",
        line("option values:", summary["parameter_values"])
        + f", same as JAX's spelling {summary['parameter_values'].get(AS_SPELLED, 0)}",
        line("dtypes:", summary["dtypes"])
        + f", same as float64 data {summary['dtypes'].get(DTYPE_AS_FLOAT64, 0)}",
        line("edge values:", summary["edges"]),
        line("options, int64:", summary.get(INTEGER_PARAMS, _NO_COUNTS)),
        line("array options:", summary.get(OPTION_DTYPES, _NO_COUNTS)),
        line("Python numbers:", summary["python_numbers"])
        + f", same as a 64-bit array {summary['python_numbers'][AS_ARRAY]}, as a float64 "
          f"array {summary['python_numbers'][AS_FLOAT_ARRAY]}",
    ] + ([f"  {'zeros signed:':<18} {zeros[UNSIGNED_ZEROS]} callables give -0.0 where NumPy's "
          f"zeros are 0.0 (NJ417), {zeros[SIGNED_ZEROS]} other zeros' signs (equal numbers)"]
         if (zeros := summary.get("zero_signs")) else []) + [f"  ({PART_NAMES[part]} run apart in {provenance[part]['run_seconds']} s, "
         f"{provenance[part]['date']}: --part {part.replace('_', '-')})"
         for part in PARTS if part in provenance])


def build(jobs: int, only: list[str] | None = None, log=print, cache: str | None = None,
          partial: Path | None = None, part: str | None = None,
          grid_path: Path = GRID_PATH) -> dict:
    start = time.perf_counter()
    grid_text = grid_path.read_text(encoding="utf-8")
    grid = tomllib.loads(grid_text)
    grid["part"] = part
    policy = tomllib.loads((ROOT / "rules" / "api" / "policy.toml").read_text(encoding="utf-8"))
    grid["keyword_renames"] = policy.get("keyword_renames", {})
    table = json.loads(TABLE_PATH.read_text(encoding="utf-8"))
    todo = callables(table["entries"])
    if only:
        todo = {k: v for k, v in todo.items() if any(fnmatch.fnmatchcase(k, p) for p in only)}
    results: dict[str, dict] = {}
    timings: dict[str, float] = {}
    if partial is not None and partial.exists():  # --resume: what an interrupted run proved
        for line in partial.read_text(encoding="utf-8").splitlines():
            name, result, seconds = json.loads(line)
            if name in todo:
                results[name], timings[name] = result, seconds
        log(f"resuming: {len(results)} callables already proven")
    pending = [(name, entry) for name, entry in todo.items() if name not in results]
    with open(partial, "a", encoding="utf-8") if partial is not None else _NoFile() as sink:
        for name, result, seconds in _run_pool(pending, jobs, grid, cache, log, len(todo), start,
                                               done=len(results)):
            results[name], timings[name] = result, seconds
            sink.write(json.dumps([name, result, seconds]) + "\n")
            sink.flush()
    import jax
    import jaxlib
    import numpy
    import scipy

    seconds = time.perf_counter() - start
    slowest = sorted(timings.items(), key=lambda item: -item[1])[:10]
    return {
        "provenance": {
            "generated_by": "python -m np2jax.apiproof",
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
            "versions": {"numpy": numpy.__version__, "scipy": scipy.__version__,
                         "jax": jax.__version__, "jaxlib": jaxlib.__version__,
                         "python": platform.python_version()},
            "platform": f"{platform.system()} {platform.machine()}, JAX on CPU, jax_enable_x64",
            "run_seconds": round(seconds, 1),
            "cpu_seconds": round(_cpu_seconds(), 1),
            "jobs": jobs,
            "compilation_cache": bool(cache),
            "slowest": {name: round(s, 1) for name, s in slowest},
            "grid": {"file": "rules/api/proof_grid.toml",
                     "sha256": hashlib.sha256(grid_text.encode()).hexdigest(),
                     "dtypes": grid["dtypes"], "edges": grid["edges"],
                     "python_numbers": [f"{n!r} beside {d}" for n, d in PYTHON_NUMBERS]
                     + [INT_ARRAY_CASE], INTEGER_PARAMS: ["int64"],
                     OPTION_DTYPES: list(OPTION_DTYPE_CASES)},
            "tolerances": {k: {"rtol": r, "atol": a} for k, (r, a) in TOLERANCES.items()},
            "verdicts": "same: equal values, dtype, shape and structure; raises: both raise; "
                        "differs: why. Parameter values are keyed by their repr ('wrap', 2, None, "
                        "(0, 1)); <omitted>: the call without it.",
            "only": only or None,
            "summary": None if part else summarize(results),
        },
        "callables": dict(sorted(results.items())),
    }


def merge_part(table: dict, run: dict, part: str) -> dict:
    """`table` with the `part` verdicts ("python_numbers", "dtypes") of `run` (a --part
    build) in place of its own, the run's time and versions recorded beside the table's
    provenance."""
    callables_ = table["callables"]
    for name, result in run["callables"].items():
        entry = callables_.get(name)
        if entry is None or "skipped" in entry:
            continue
        entry.pop(part, None)
        if result.get(part):
            entry[part] = result[part]
    provenance = table["provenance"]
    provenance[part] = {
        key: run["provenance"][key] for key in ("date", "versions", "run_seconds", "cpu_seconds",
                                                "jobs", "only")}
    provenance[part]["generated_by"] = f"python -m np2jax.apiproof --part {part.replace('_', '-')}"
    provenance[part]["grid_sha256"] = run["provenance"]["grid"]["sha256"]
    provenance["grid"][part] = run["provenance"]["grid"][part]
    provenance["summary"] = summarize(callables_)
    return table


def merge_callables(table: dict, run: dict) -> dict:
    """`table` with the callables of `run` (an --only build) proven again in place of its
    own; the run is recorded in the provenance's `merged` list, the summary recounted."""
    table["callables"].update(run["callables"])
    table["callables"] = dict(sorted(table["callables"].items()))
    provenance = table["provenance"]
    provenance.setdefault("merged", []).append({
        key: run["provenance"][key] for key in ("date", "versions", "run_seconds", "only")}
        | {"grid_sha256": run["provenance"]["grid"]["sha256"]})
    provenance["summary"] = summarize(table["callables"])
    return table


class _NoFile:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def write(self, _text):
        pass

    def flush(self):
        pass


def _worker_main(connection, grid: dict, cache: str | None) -> None:
    _init_worker(grid, cache)
    while True:
        task = connection.recv()
        if task is None:
            return
        connection.send(prove_one(*task))


def _run_pool(pending: list, jobs: int, grid: dict, cache, log, total: int, start: float, done: int):
    """Each callable in one of `jobs` worker processes; a worker that takes longer than
    CALLABLE_TIMEOUT_S over one callable (a hang in compiled code, which no signal can
    interrupt) is killed and replaced, and the callable recorded as timed out. A worker is
    replaced after TASKS_PER_WORKER callables too: JAX's caches grow with each."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    queue = list(reversed(pending))
    workers: list[dict] = []

    def start_worker():
        parent, child = context.Pipe()
        process = context.Process(target=_worker_main, args=(child, grid, cache), daemon=True)
        process.start()
        return {"process": process, "pipe": parent, "task": None, "since": 0.0, "count": 0}

    def assign(worker):
        if queue:
            worker["task"] = queue.pop()
            worker["since"] = time.perf_counter()
            worker["pipe"].send(worker["task"])
            return True
        return False

    for _ in range(min(jobs, len(queue))):
        worker = start_worker()
        workers.append(worker)
        assign(worker)
    while any(w["task"] is not None for w in workers):
        ready = multiprocessing.connection.wait([w["pipe"] for w in workers if w["task"] is not None],
                                                timeout=5)
        for worker in list(workers):
            if worker["task"] is None:
                continue
            name, entry = worker["task"]
            failed = None
            if worker["pipe"] in ready:
                try:
                    yield worker["pipe"].recv()
                except EOFError:
                    failed = "the process crashed"
            elif not worker["process"].is_alive():
                failed = "the process crashed"
            elif time.perf_counter() - worker["since"] > CALLABLE_TIMEOUT_S:
                failed = f"timed out after {CALLABLE_TIMEOUT_S} s"
            else:
                continue
            done += 1
            if done % 50 == 0:
                log(f"{done}/{total} ({time.perf_counter() - start:.0f} s)")
            worker["task"] = None
            worker["count"] += 1
            if failed is not None:
                yield name, {"jax": entry["jax"], "skipped": failed}, time.perf_counter() - worker["since"]
            if failed is not None or worker["count"] >= TASKS_PER_WORKER:
                _stop(worker)
                workers[workers.index(worker)] = worker = start_worker()
            if not assign(worker):
                _stop(worker)
    for worker in workers:
        _stop(worker)


def _stop(worker: dict) -> None:
    process = worker["process"]
    if process.is_alive():
        try:
            worker["pipe"].send(None)
        except (BrokenPipeError, OSError):
            pass
        process.join(2)
    if process.is_alive():
        process.kill()
        process.join()


def _cpu_seconds() -> float:
    """This process's and its finished workers' CPU time."""
    import resource

    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(u.ru_utime + u.ru_stime for u in usage)


def dump(table: dict) -> str:
    return json.dumps(table, sort_keys=True, indent=0, separators=(",", ":")) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Generate rules/api/proven.json: which calls of the API table JAX computes "
                    "as NumPy/SciPy does, proven by running both side by side.")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--grid", type=Path, default=GRID_PATH,
                        help="the grid of values and dtypes (default: rules/api/proof_grid.toml)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", nargs="*", help="fnmatch patterns of the callables to run "
                        "(merged into the table at --out when there is one)")
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "np2jax-apiproof"),
                        help="JAX's persistent compilation cache ('' for none): most of a run "
                             "is XLA compiling, which a second run reads from there")
    parser.add_argument("--resume", action="store_true",
                        help="keep what the interrupted run into the same --out proved")
    parser.add_argument("--part", choices=[p.replace("_", "-") for p in PARTS],
                        help="prove only this part (Python numbers given for data arguments, "
                             "the data cast to each dtype of the grid, or the options again on "
                             "int64 data) and merge the verdicts into the table at --out (a "
                             "fraction of a full run)")
    args = parser.parse_args(argv)
    part = args.part.replace("-", "_") if args.part else None
    partial = args.out.with_name(args.out.name + ".partial")
    if not args.resume and partial.exists():
        partial.unlink()
    table = build(args.jobs, args.only, log=lambda m: print(m, file=sys.stderr, flush=True),
                  cache=args.cache or None, partial=partial, part=part, grid_path=args.grid)
    if part:
        table = merge_part(json.loads(args.out.read_text(encoding="utf-8")), table, part)
    elif args.only and args.out.exists():
        table = merge_callables(json.loads(args.out.read_text(encoding="utf-8")), table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(dump(table))
    partial.unlink(missing_ok=True)
    print(f"wrote {args.out}")
    print(describe(table["provenance"]))

