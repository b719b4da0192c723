"""Tests of rules/api/proven.json, the API table proven by running NumPy/SciPy and JAX side
by side, and of its generator np2jax.apiproof (how the analysis uses the table:
tests/rules/test_api_arguments.py)."""

from __future__ import annotations

import json
import importlib
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import jax
import numpy as np
import pytest
import scipy

from np2jax import apiproof
from np2jax.catalog import api_table

ROOT = Path(__file__).resolve().parents[2]
PROOF_PATH = ROOT / "rules" / "api" / "proven.json"


@pytest.fixture(scope="module")
def proof() -> dict:
    return json.loads(PROOF_PATH.read_text())


def _installed() -> dict:
    return {"numpy": np.__version__, "scipy": scipy.__version__, "jax": jax.__version__}


# --- the table itself ---------------------------------------------------------------------


def test_provenance_is_recorded(proof):
    provenance = proof["provenance"]
    assert set(provenance["versions"]) >= {"numpy", "scipy", "jax"}
    assert provenance["date"] and provenance["run_seconds"] > 0
    assert provenance["grid"]["dtypes"] and provenance["grid"]["edges"]
    assert provenance["grid"]["python_numbers"] == [
        f"{number!r} beside {dtype}" for number, dtype in apiproof.PYTHON_NUMBERS] + [
        apiproof.INT_ARRAY_CASE]
    assert provenance["summary"]["callables"] == len(proof["callables"])
    assert provenance["summary"] == apiproof.summarize(proof["callables"])


def test_every_callable_with_a_jax_counterpart_is_in_it(proof):
    callables = {name for name, entry in api_table().items()
                 if entry.get("jax") and entry["kind"] in ("function", "ufunc", "class", "dtype")}
    assert callables <= set(proof["callables"])


def test_the_grid_names_only_samples_it_defines():
    grid = tomllib.loads((ROOT / "rules" / "api" / "proof_grid.toml").read_text())
    constants = {"None", "inf", "-inf", "like", "pos_like", "mask_like", "increasing_like",
                 "int_like", "add_indices", "range5", "bytes16"}

    def names(value):
        if isinstance(value, str) and value.startswith("@list:"):
            yield from value[len("@list:"):].split(",")
        elif isinstance(value, str) and value.startswith(("@numpy.", "@dtype:")):
            return
        elif isinstance(value, str) and value.startswith("@"):
            yield value[1:]
        elif isinstance(value, (list, tuple)):
            for item in value:
                yield from names(item)
        elif isinstance(value, dict):
            for item in value.values():
                yield from names(item)

    used = set(names([grid["values"], grid["required"], grid["families"], grid["functions"],
                      grid["data_candidates"]]))
    assert used - constants - set(grid["samples"]) == set()


@pytest.mark.parametrize("name, part, key, expected", [
    # the cases of the issue, each the reason a program of ../shared/corpus-semantics differed
    ("scipy.signal.convolve2d", "boundary", "'wrap'", "differs"),
    ("scipy.signal.convolve2d", "boundary", "'fill'", "same"),
    ("scipy.ndimage.map_coordinates", "order", "<omitted>", "differs"),
    ("scipy.ndimage.map_coordinates", "order", "3", "differs"),
    ("scipy.ndimage.map_coordinates", "order", "1", "same"),
    ("numpy.gradient", "edge_order", "2", "differs"),
    ("numpy.percentile", "method", "'median_unbiased'", "differs"),
    ("numpy.percentile", "method", "'midpoint'", "same"),
    ("numpy.percentile", "method", "'nearest'", "differs"),
    ("numpy.nanpercentile", "method", "'nearest'", "differs"),
    ("scipy.signal.convolve2d", "fillvalue", "1.5", "differs"),
    ("scipy.ndimage.map_coordinates", "mode", "'constant'", "differs"),
    ("scipy.ndimage.map_coordinates", "mode", "'nearest'", "same"),
    ("numpy.take", "mode", "'clip'", "same"),
    ("numpy.nan_to_num", "copy", "False", "differs"),
    ("numpy.take", "mode", "'raise'", "differs"),
])
def test_known_differences_are_in_the_table(proof, name, part, key, expected):
    verdict = proof["callables"][name]["params"][part]["values"][key]
    assert verdict.split(":")[0] == expected, verdict


@pytest.mark.parametrize("name, parameter, case, expected", [
    # np.append converts its values with np.asarray: 300 beside uint8 is an int64 array
    ("numpy.append", "values", "300 beside uint8", apiproof.AS_ARRAY),
    ("numpy.append", "values", "0.1 beside float32", apiproof.AS_ARRAY),
    # beside float32 only a float64 array promotes as NumPy's int64 does (JAX: int64 + float32 is float32)
    ("numpy.hstack", "tup", "5 beside float32", apiproof.AS_FLOAT_ARRAY),
    ("numpy.stack", "arrays", "5 beside int32", apiproof.AS_ARRAY),
    # np.where takes a Python number as weak, as JAX does
    ("numpy.where", "x", "300 beside uint8", "same"),
    ("numpy.where", "y", "0.1 beside float32", "same"),
    # JAX's index of a 0-d query is int32 however the number is given
    ("numpy.searchsorted", "v", "5 beside int32", "differs"),
    # an int64 array beside float32: NumPy computes in float64, JAX in float32
    ("numpy.dot", "b", "int64 array beside float32", apiproof.AS_FLOAT_ARRAY),
    ("numpy.where", "y", "int64 array beside float32", apiproof.AS_FLOAT_ARRAY),
    ("numpy.take", "a", "int64 array beside float32", "same"),
    # a number option of the base call (full_like's fill value) and a ufunc's `*args`:
    # NumPy refuses 300 for uint8 data, JAX wraps it to 44
    ("numpy.full_like", "fill_value", "300 beside uint8", apiproof.NUMPY_RAISES),
    ("numpy.insert", "values", "300 beside uint8", apiproof.NUMPY_RAISES),
    ("numpy.maximum", "args", "300 beside uint8", apiproof.NUMPY_RAISES),
    ("numpy.maximum", "args", "0.1 beside float32", "same"),
])
def test_python_numbers_are_in_the_table(proof, name, parameter, case, expected):
    verdict = proof["callables"][name]["python_numbers"][parameter][case]
    assert verdict == expected or verdict.split(":")[0] == expected, verdict


@pytest.mark.parametrize("name, dtype, expected", [
    # NumPy computes these in float64 whatever the data: JAX too, given float64 data
    ("numpy.cov", "float32", apiproof.DTYPE_AS_FLOAT64),
    ("numpy.interp", "float32", apiproof.DTYPE_AS_FLOAT64),
    # NumPy keeps integers: float64 data does not mend JAX's float result
    ("numpy.convolve", "int64", "differs"),
    ("numpy.add.accumulate", "uint8", "differs"),
    ("numpy.sum", "int16", "same"),
    # complex data is run near zero too: JAX's complex sinh loses relative accuracy there
    # (a complex-step derivative divides it out), NumPy's complex log1p does
    ("numpy.sinh", "complex128", "differs: " + apiproof.NEAR_ZERO),
    ("numpy.log1p", "complex128", "differs: " + apiproof.NEAR_ZERO),
    ("numpy.sin", "complex128", "same"),
])
def test_dtype_verdicts_are_in_the_table(proof, name, dtype, expected):
    verdict = proof["callables"][name]["dtypes"][dtype]
    assert verdict == expected or verdict.split(":")[0] == expected \
        or verdict.startswith(expected + ","), verdict


@pytest.mark.parametrize("name, option, dtype, expected", [
    # NumPy casts bincount's weights to float64; JAX keeps int64 and refuses bool
    ("numpy.bincount", "weights", "int64", "differs"),
    ("numpy.bincount", "weights", "bool", "differs"),
    ("numpy.average", "weights", "int64", "same"),
])
def test_array_options_of_other_dtypes_are_in_the_table(proof, name, option, dtype, expected):
    verdict = proof["callables"][name]["option_dtypes"][option][dtype]
    assert verdict == expected or verdict.split(":")[0] == expected, verdict


@pytest.mark.parametrize("name", ["numpy.linalg.eigh", "numpy.linalg.eigvalsh", "numpy.linalg.cholesky"])
def test_an_option_of_jax_alone_is_proven_with_every_jax_run(proof, name):
    """symmetrize_input=False: JAX reads one triangle as NumPy does, so a NaN (or any
    value) in the other triangle no longer makes the results differ."""
    record = proof["callables"][name]
    assert record["jax_kwargs"] == {"symmetrize_input": False}
    assert record["edges"]["nan"] in ("same", "raises") or record["edges"]["nan"].startswith("numpy raises")


def test_roots_are_proven_different_when_every_root_is_real(proof):
    """np.roots returns float64 when every root is real (the grid's `@roots` alternate), JAX
    complex128 always; complex roots alone would prove them alike."""
    record = proof["callables"]["numpy.roots"]
    assert record["verdict"].startswith("differs") and "complex128" in record["verdict"]
    assert record["data_alternates"] == ["roots(@roots)"]


def test_the_converter_reads_the_verdicts_the_generator_writes():
    """np2jax.analysis.references spells the generator's verdicts itself (the converter never
    imports the generator): the spellings agree."""
    from np2jax.analysis import references

    for name in ("SAME", "RAISES", "NUMPY_RAISES", "OMITTED", "AS_ARRAY", "AS_FLOAT_ARRAY",
                 "INT_ARRAY_CASE", "INTEGER_PARAMS", "DTYPE_AS_FLOAT64", "OPTION_DTYPES",
                 "UNSIGNED_ZEROS", "SIGNED_ZEROS"):
        assert getattr(references, name) == getattr(apiproof, name), name
    numbers = {f"{n!r} " for n, _ in apiproof.PYTHON_NUMBERS}
    assert numbers == {prefix for prefixes in references._NUMBER_CASES.values() for prefix in prefixes}


def test_eig_is_proven_different_for_real_input(proof):
    record = proof["callables"]["numpy.linalg.eig"]
    assert record["verdict"].startswith("differs") and "complex128" in record["verdict"]
    assert record["dtypes"]["complex128"] == "same"


# --- a sample of its claims still holds with the installed versions ------------------------

SAMPLE = ["numpy.sum", "numpy.cumsum", "numpy.percentile", "numpy.gradient", "numpy.take",
          "numpy.linalg.eig", "numpy.linalg.norm", "scipy.signal.convolve2d",
          "scipy.ndimage.map_coordinates", "scipy.special.gammaln", "numpy.nan_to_num",
          "numpy.add.reduce", "numpy.clip", "numpy.sort", "numpy.append", "numpy.hstack",
          "numpy.searchsorted"]

_RECHECK = r"""
import json, sys, tomllib
from np2jax import apiproof
names = json.loads(sys.argv[1])
grid = tomllib.loads(apiproof.GRID_PATH.read_text())
policy = tomllib.loads((apiproof.ROOT / "rules" / "api" / "policy.toml").read_text())
grid["keyword_renames"] = policy.get("keyword_renames", {})
table = json.loads(apiproof.TABLE_PATH.read_text())["entries"]
entries = apiproof.callables(table)
apiproof._init_worker(grid)
print(json.dumps({name: apiproof.prove_one(name, entries[name])[1] for name in names}))
"""


def test_a_sample_of_the_claims_holds_with_the_installed_versions(proof):
    if proof["provenance"]["versions"]["numpy"] != np.__version__ or \
            proof["provenance"]["versions"]["scipy"] != scipy.__version__ or \
            proof["provenance"]["versions"]["jax"] != jax.__version__:
        pytest.skip(f"proven with {proof['provenance']['versions']}, installed {_installed()}")
    done = subprocess.run([sys.executable, "-c", _RECHECK, json.dumps(SAMPLE)], capture_output=True,
                          text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    again = json.loads(done.stdout.strip().splitlines()[-1])
    for name in SAMPLE:
        committed, now = proof["callables"][name], again[name]
        assert _bucket(now["verdict"]) == _bucket(committed["verdict"]), name
        for part in ("dtypes", "edges"):
            for key, verdict in committed.get(part, {}).items():
                assert _bucket(now[part][key]) == _bucket(verdict), (name, part, key)
        for param, record in committed.get("params", {}).items():
            for key, verdict in record.get("values", {}).items():
                assert _bucket(now["params"][param]["values"][key]) == _bucket(verdict), \
                    (name, param, key, now["params"][param]["values"][key], verdict)
        for param, cases in committed.get("python_numbers", {}).items():
            for case, verdict in cases.items():
                assert _bucket(now["python_numbers"][param][case]) == _bucket(verdict), \
                    (name, param, case, now["python_numbers"][param][case], verdict)


def _bucket(verdict: str) -> str:
    return verdict.split(":")[0]


# --- every dotted path the table maps imports, on both sides ---------------------------------

_MISSING = object()


def _resolve(dotted: str):
    """Independent of apiproof.resolve on purpose: import the longest module prefix, getattr
    the rest (`numpy.add.reduce`, `jax.scipy.stats.norm.pdf`)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, _MISSING)
            if obj is _MISSING:
                return _MISSING
        return obj
    return _MISSING


def test_every_mapped_path_imports_on_both_sides(proof):
    """Each callable the table proves, NumPy/SciPy name and JAX name, is a callable of the
    installed libraries: a verdict about a path that does not import proves nothing."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated NumPy aliases still resolve
        numpy_side = {name: _resolve(name) for name in proof["callables"]}
        jax_side = {name: _resolve(record["jax"]) for name, record in proof["callables"].items()}
    assert [n for n, obj in numpy_side.items() if obj is _MISSING or not callable(obj)] == []
    assert [n for n, obj in jax_side.items() if obj is _MISSING or not callable(obj)] == []
    # and the JAX path is the API table's counterpart (methods: the ufunc's, plus the method)
    table = api_table()
    for name, record in proof["callables"].items():
        owner, _, method = name.rpartition(".")
        expected = table[name]["jax"] if name in table else f"{table[owner]['jax']}.{method}"
        assert record["jax"] == expected, name


# --- the generator, on a tiny grid -----------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """The generator run in full (its process pool, its provenance) on two callables and a
    grid cut to two dtypes and one edge value: what it writes, and what it prints."""
    folder = tmp_path_factory.mktemp("tiny")
    grid = (ROOT / "rules" / "api" / "proof_grid.toml").read_text()
    start = grid.index("edges = [")
    grid = grid[:start] + 'edges = ["nan"]' + grid[grid.index("]", start) + 1:]
    start = grid.index("dtypes = [")
    end = grid.index("]", start) + 1
    grid = grid[:start] + 'dtypes = ["float64", "int64"]' + grid[end:]
    (folder / "grid.toml").write_text(grid)
    out = folder / "proven.json"
    script = ("from np2jax import apiproof\n"
              f"apiproof.main(['--out', {str(out)!r}, '--grid', {str(folder / 'grid.toml')!r}, "
              "'--jobs', '1', '--cache', '', "
              "'--only', 'numpy.take', 'scipy.signal.convolve2d'])\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text()), done.stdout, out.read_text()


def test_the_generator_proves_what_the_libraries_do(tiny_run):
    table, _, _ = tiny_run
    assert sorted(table["callables"]) == ["numpy.take", "scipy.signal.convolve2d"]
    take = table["callables"]["numpy.take"]
    assert sorted(take["dtypes"]) == ["float64", "int64"] and sorted(take["edges"]) == ["nan"]
    assert take["params"]["mode"]["values"]["'raise'"].startswith("differs: JAX raises NotImplementedError")
    assert take["params"]["mode"]["values"]["'clip'"] == "same"
    boundary = table["callables"]["scipy.signal.convolve2d"]["params"]["boundary"]["values"]
    assert boundary["'wrap'"].startswith("differs") and boundary["'fill'"] == "same"
    # each data argument given as a Python number beside narrow data
    assert sorted(take["python_numbers"]["a"]) == sorted(
        [f"{number!r} beside {dtype}" for number, dtype in apiproof.PYTHON_NUMBERS]
        + [apiproof.INT_ARRAY_CASE])


def _rerun_into(table: dict, folder: Path, *options: str) -> tuple[dict, str]:
    """The generator run on numpy.take into a copy of `table` (with the committed grid):
    the merged table, and what it printed."""
    out = folder / "proven.json"
    out.write_text(apiproof.dump(table))
    script = ("from np2jax import apiproof\n"
              f"apiproof.main(['--out', {str(out)!r}, '--jobs', '1', '--cache', '', "
              f"'--only', 'numpy.take', *{list(options)!r}])\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text()), done.stdout


@pytest.mark.parametrize("part, key, named", [
    ("python-numbers", "python_numbers", "Python numbers"),
    ("dtypes", "dtypes", "dtypes"),
    ("int64-params", "int64_params", "options on int64 data"),
    ("option-dtypes", "option_dtypes", "array options' dtypes"),
])
def test_a_part_alone_merges_into_a_table(tiny_run, tmp_path, part, key, named):
    """--part runs that part alone and merges it into the table at --out: the other
    verdicts stay, the run is recorded beside the table's provenance."""
    table, _, text = tiny_run
    stale = json.loads(text)
    del stale["callables"]["numpy.take"][key]
    merged, printed = _rerun_into(stale, tmp_path, "--part", part)
    take = merged["callables"]["numpy.take"]
    expected = table["callables"]["numpy.take"][key]  # its grid: fewer dtypes than the committed one
    assert expected and {k: take[key].get(k) for k in expected} == expected
    assert take["params"] == table["callables"]["numpy.take"]["params"]
    assert merged["provenance"][key]["only"] == ["numpy.take"]
    assert merged["provenance"]["summary"] == apiproof.summarize(merged["callables"])
    assert f"{named} run apart in" in printed


def test_the_generator_records_its_provenance_and_prints_its_counts(tiny_run):
    table, printed, text = tiny_run
    provenance = table["provenance"]
    assert provenance["grid"]["dtypes"] == ["float64", "int64"] and provenance["only"]
    assert provenance["run_seconds"] > 0 and provenance["jobs"] == 1
    summary = provenance["summary"]
    assert summary == apiproof.summarize(table["callables"])
    assert summary["callables"] == summary["proven"] == 2
    values = summary["parameter_values"]
    assert values["same"] and values["differs"] and values["raises"]
    assert f"ran 2 callables in {provenance['run_seconds']} s" in printed
    assert f"same {values['same']}, different {values['differs']}, both raise {values['raises']}" in printed
    assert text == apiproof.dump(table)  # canonical: a rerun diffs only where a verdict moved


def test_a_run_of_a_few_callables_merges_into_the_table(tiny_run, tmp_path):
    """--only into an existing table proves those callables again and keeps the others; the
    run is recorded in the provenance's `merged` list."""
    table, _, text = tiny_run
    kept = json.loads(text)
    kept["callables"]["numpy.fake"] = {"jax": "jax.numpy.fake", "skipped": "kept as it was"}
    del kept["callables"]["numpy.take"]["params"]
    merged, _ = _rerun_into(kept, tmp_path)
    assert merged["callables"]["numpy.fake"] == kept["callables"]["numpy.fake"]
    assert merged["callables"]["numpy.take"]["params"]["mode"]["values"]["'clip'"] == "same"
    assert merged["provenance"]["merged"][-1]["only"] == ["numpy.take"]
    assert merged["provenance"]["summary"] == apiproof.summarize(merged["callables"])


def test_summarize_counts_each_kind_of_verdict():
    results = {
        "f": {"verdict": "same", "dtypes": {"float64": "same", "str": "raises"},
              "edges": {"nan": "differs: values differ"},
              "params": {"x": {"data": True, "values": {"@v": "same"}},
                         "mode": {"values": {"'a'": "same", "'b'": "differs: JAX raises ...",
                                             "'c'": f"{apiproof.AS_SPELLED} stable=True"}},
                         "axis": {"values": {"0": "same", "5": "raises"}},
                         "order": {"values": {"3": "differs: values differ"}},
                         "k": {"values": {"9": "numpy raises: IndexError: ..."}}}},
        "g": {"verdict": "numpy raises: ValueError: ...",
              "python_numbers": {"x": {"300 beside uint8": apiproof.AS_ARRAY,
                                       "5 beside float32": apiproof.AS_FLOAT_ARRAY,
                                       "0.1 beside float32": "same"}}},
        "h": {"jax": "jax.numpy.h", "skipped": "the generator failed: ..."},
    }
    summary = apiproof.summarize(results)
    assert (summary["callables"], summary["proven"], summary["skipped"]) == (3, 2, 1)
    assert summary["verdicts"] == {"same": 1, "differs": 0, "raises": 0, "numpy raises": 1}
    assert summary["parameters"] == {"same": 2, "partly": 1, "differs": 1}
    assert summary["parameter_values"] == {"same": 3, "differs": 2, "raises": 1, "numpy raises": 1,
                                           apiproof.AS_SPELLED: 1}
    assert summary["dtypes"]["raises"] == 1 and summary["edges"]["differs"] == 1
    assert summary["python_numbers"] == {"same": 1, "differs": 0, "raises": 0, "numpy raises": 0,
                                         apiproof.AS_ARRAY: 1, apiproof.AS_FLOAT_ARRAY: 1}
