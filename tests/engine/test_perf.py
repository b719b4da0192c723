"""Tool speed features: parallel runs (-j), the result cache, the text pre-filter.

No timings here: each test checks what the feature must never change (the results) and
that it does what it says (no processing on a cache hit, no parse for a file the pre-filter
skips, no libcst import on a warm re-check)."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import fail_on
from np2jax import engine as engine_module
from np2jax import cache as cache_module
from np2jax.api import check_paths, convert_paths
from np2jax.config import Config, load_config
from np2jax.pipeline import process
from np2jax.tree import ModuleContext

MUTATOR = "import numpy as np\n\n\ndef normalize(v):\n    v /= v.sum()\n"
CALLER = ("import numpy as np\nfrom pkg.mod_a import normalize\n\n\ndef main():\n"
          "    x = np.ones(3)\n    normalize(x)\n    return x\n")
PLAIN = "def add(a, b):\n    return a + b\n"
LISTS = "import numpy as np\n\n\ndef main():\n    return np.sum([1, 2]) + np.float64(3)\n"
X32 = Config(x64=False)  # NJ401 (np.float64 above) is the 32-bit mode's rule


def _tree(root: Path, files: dict[str, str]) -> Path:
    pkg = root / "pkg"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    for name, text in files.items():
        (pkg / name).write_text(text)
    return pkg


def _summary(run):
    return ([(r.path, r.converted, r.findings, r.changes) for r in run.files],
            [str(e) for e in run.errors])


@pytest.fixture(autouse=True)
def _workers_even_for_small_trees(monkeypatch):
    """The trees here are tiny: -j N must still use worker processes."""
    monkeypatch.setattr(engine_module, "PARALLEL_MIN_CHARS", 0)


@pytest.fixture
def computed(monkeypatch):
    """The paths np2jax actually processed (not served from the cache)."""
    seen: list[str] = []
    original = engine_module.process_job

    def spy(job):
        seen.append(Path(job[0]).name)
        return original(job)

    monkeypatch.setattr(engine_module, "process_job", spy)
    return seen


def test_small_batches_stay_in_process(tmp_path, monkeypatch):
    monkeypatch.setattr(engine_module, "PARALLEL_MIN_CHARS", 10_000)
    pkg = _tree(tmp_path, {"lists.py": LISTS, "plain.py": PLAIN})
    engine = engine_module.Engine(Config(cache=False), rewrite=False, jobs=2)
    engine.run([(p, p.read_text(), engine_module.ModuleContext()) for p in sorted(pkg.glob("*.py"))])
    assert engine.pool is None
    big = [(pkg / f"big{i}.py", LISTS + "#" * 10_000, engine_module.ModuleContext()) for i in range(2)]
    assert all(not isinstance(o, Exception) for o in engine.run(big).values())
    assert engine.pool is not None
    engine.close()


def test_jobs_2_gives_the_same_output_as_jobs_1(tmp_path):
    pkg = _tree(tmp_path, {"mod_a.py": MUTATOR, "mod_b.py": CALLER, "plain.py": PLAIN,
                           "lists.py": LISTS, "broken.py": "import numpy as np\nx = (\n"})
    config = Config(cache=False)
    one = convert_paths([pkg], config, jobs=1)
    two = convert_paths([pkg], config, jobs=2)
    assert _summary(one) == _summary(two)
    assert [Path(r.path).name for r in two.files] == sorted(Path(r.path).name for r in two.files)
    assert len(two.errors) == 1 and "broken.py:2: syntax error" in str(two.errors[0])
    converted = {Path(r.path).name: r.converted for r in two.files}
    assert "return v" in converted["mod_a.py"] and "x = normalize(x)" in converted["mod_b.py"]
    assert _summary(check_paths([pkg], config, jobs=1)) == _summary(check_paths([pkg], config, jobs=2))


@pytest.fixture
def forked_workers(monkeypatch):
    """Failures planted in this process reach workers only through fork (and not through
    spawn, which np2jax uses when this process runs threads, as it does once JAX ran)."""
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    monkeypatch.setattr(engine_module, "worker_context", lambda: multiprocessing.get_context("fork"))


def test_workers_fork_only_a_single_threaded_process():
    import threading

    assert engine_module.worker_context().get_start_method() == (
        "fork" if engine_module.thread_count() == 1 else "spawn")
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert engine_module.worker_context().get_start_method() == "spawn"
    finally:
        stop.set()
        thread.join()


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="threads listed by Linux only")
def test_native_threads_count_too():
    """Threads started outside Python (JAX's runtime, BLAS) make a fork unsafe as well."""
    code = ("import threading\n"
            "from np2jax import engine\n"
            "before = engine.worker_context().get_start_method()\n"
            "import jax.numpy as jnp; jnp.ones(3).block_until_ready()\n"
            "print(before, threading.active_count(), engine.thread_count() > 1,\n"
            "      engine.worker_context().get_start_method())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, python_threads, native, after = done.stdout.split()
    assert (before, python_threads, native, after) == ("fork", "1", "True", "spawn")


def test_spawned_workers_give_the_same_output(tmp_path, monkeypatch):
    monkeypatch.setattr(engine_module, "worker_context", lambda: multiprocessing.get_context("spawn"))
    pkg = _tree(tmp_path, {"mod_a.py": MUTATOR, "mod_b.py": CALLER, "lists.py": LISTS})
    config = Config(cache=False)
    assert _summary(convert_paths([pkg], config, jobs=2)) == _summary(
        convert_paths([pkg], config, jobs=1))


def test_a_crash_in_a_worker_is_one_error_for_that_file(tmp_path, monkeypatch, forked_workers):
    fail_on(monkeypatch, "lists.py")
    pkg = _tree(tmp_path, {"lists.py": LISTS, "plain.py": PLAIN, "other.py": LISTS.replace("sum", "prod")})
    run = check_paths([pkg], Config(cache=False), jobs=2)
    expected = (f"{pkg / 'lists.py'}: internal error (RuntimeError: planted); the file was "
                "left untouched; please report it with this file")
    assert [str(e) for e in run.errors] == [expected]
    assert sorted(Path(r.path).name for r in run.files) == ["__init__.py", "other.py", "plain.py"]


def test_a_worker_that_dies_costs_only_its_own_file(tmp_path, monkeypatch, forked_workers):
    from np2jax import pipeline

    real = pipeline.process

    def dying(text, config, path, *args):
        if path.endswith("lists.py"):
            os._exit(3)  # as a crash in native code would
        return real(text, config, path, *args)

    monkeypatch.setattr(pipeline, "process", dying)
    pkg = _tree(tmp_path, {"lists.py": LISTS, "plain.py": PLAIN, "other.py": LISTS.replace("sum", "prod")})
    run = check_paths([pkg], Config(cache=False, x64=False), jobs=2)
    assert len(run.errors) == 1 and str(run.errors[0]).startswith(
        f"{pkg / 'lists.py'}: internal error (the worker process processing it died)")
    assert sorted(Path(r.path).name for r in run.files) == ["__init__.py", "other.py", "plain.py"]
    assert {p.code for p in run.problems} == {"NJ110", "NJ401"}  # other.py's (NJ401: 32-bit)


def test_a_cache_hit_processes_nothing_and_gives_the_same_result(tmp_path, cache_dir, computed):
    pkg = _tree(tmp_path, {"mod_a.py": MUTATOR, "mod_b.py": CALLER, "lists.py": LISTS})
    first = convert_paths([pkg], Config(), jobs=1)
    assert computed and any(cache_dir.rglob("*.json"))
    computed.clear()
    second = convert_paths([pkg], Config(), jobs=1)
    assert computed == []
    assert _summary(second) == _summary(first)
    assert _summary(second) == _summary(convert_paths([pkg], Config(cache=False), jobs=1))


def test_changed_content_is_processed_again(tmp_path, cache_dir, computed):
    pkg = _tree(tmp_path, {"lists.py": LISTS, "plain.py": PLAIN})
    check_paths([pkg], X32, jobs=1)
    (pkg / "lists.py").write_text(LISTS.replace("np.sum([1, 2])", "np.sum(np.ones(2))"))
    computed.clear()
    run = check_paths([pkg], X32, jobs=1)
    assert "lists.py" in computed
    assert [p.code for p in run.problems] == ["NJ401"]  # the list argument (NJ110) is gone


def test_changed_configuration_is_processed_again(tmp_path, cache_dir, computed):
    pkg = _tree(tmp_path, {"lists.py": LISTS})
    codes = {p.code for p in check_paths([pkg], X32, jobs=1).problems}
    assert codes == {"NJ110", "NJ401"}
    computed.clear()
    run = check_paths([pkg], Config(ignore=("NJ110",), x64=False), jobs=1)
    assert "lists.py" in computed and {p.code for p in run.problems} == {"NJ401"}
    converted = convert_paths([pkg], X32, jobs=1)
    assert "jax_enable_x64" not in converted.files[-1].converted
    computed.clear()
    converted = convert_paths([pkg], Config(x64=True), jobs=1)
    assert "lists.py" in computed and "jax_enable_x64" in converted.files[-1].converted


def test_another_engine_version_does_not_read_the_cache(tmp_path, cache_dir, computed, monkeypatch):
    pkg = _tree(tmp_path, {"lists.py": LISTS})
    check_paths([pkg], Config(), jobs=1)
    before = cache_module.engine_fingerprint.__wrapped__()
    monkeypatch.setattr(cache_module, "__version__", "999.0")
    after = cache_module.engine_fingerprint.__wrapped__()
    assert before != after
    monkeypatch.setattr(cache_module, "engine_fingerprint", lambda: after)
    computed.clear()
    check_paths([pkg], Config(), jobs=1)
    assert "lists.py" in computed


def test_another_libcst_release_does_not_read_the_cache(monkeypatch):
    """libcst's trees and scopes are what the analysis reads: a cached result is another
    release's only if that release parses and scopes the same (the key says which one)."""
    before = cache_module.engine_fingerprint.__wrapped__()
    assert "1." in cache_module._libcst_release()  # libcst's own `__version__ = "1.x.y"`
    monkeypatch.setattr(cache_module, "_libcst_release", lambda: "__version__ = '9.9.9'")
    assert cache_module.engine_fingerprint.__wrapped__() != before


def test_a_neighbour_change_reaches_an_unchanged_file(tmp_path, cache_dir):
    """mod_b's text does not change, but mod_a's normalize stops being rewritable: the
    cached conversion of mod_b (`x = normalize(x)`) must not be reused."""
    pkg = _tree(tmp_path, {"mod_a.py": MUTATOR, "mod_b.py": CALLER})
    first = {Path(r.path).name: r.converted for r in convert_paths([pkg], Config(), jobs=1).files}
    assert "x = normalize(x)" in first["mod_b.py"]
    (pkg / "mod_a.py").write_text(MUTATOR + "    print(v)\n    return 1\n")  # returns something
    cached = convert_paths([pkg], Config(), jobs=1)
    fresh = convert_paths([pkg], Config(cache=False), jobs=1)
    assert _summary(cached) == _summary(fresh)
    second = {Path(r.path).name: r.converted for r in cached.files}
    assert "x = normalize(x)" not in second["mod_b.py"]


def test_a_corrupt_entry_is_ignored_and_replaced(tmp_path, cache_dir, computed):
    pkg = _tree(tmp_path, {"lists.py": LISTS})
    first = check_paths([pkg], Config(), jobs=1)
    entries = list(cache_dir.rglob("*.json"))
    assert entries
    for number, entry in enumerate(entries):
        entry.write_text(["{not json", "", json.dumps({"result": {"findings": 3}})][number % 3])
    computed.clear()
    second = check_paths([pkg], Config(), jobs=1)
    assert "lists.py" in computed and _summary(second) == _summary(first)
    assert all(json.loads(e.read_text()) for e in entries)


def test_no_cache_writes_nothing(tmp_path, cache_dir):
    pkg = _tree(tmp_path, {"lists.py": LISTS})
    result = subprocess.run([sys.executable, "-m", "np2jax", "check", "--no-cache", "-j", "1",
                             str(pkg)], capture_output=True, text=True, check=False,
                            env={**os.environ, "NP2JAX_CACHE_DIR": str(cache_dir)})
    assert result.returncode == 1, result.stderr
    assert "NJ110" in result.stdout and not cache_dir.exists()


def test_cache_can_be_turned_off_in_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.np2jax]\ncache = false\n")
    assert load_config(tmp_path).cache is False
    (tmp_path / "pyproject.toml").write_text("[tool.np2jax]\ncache = 'no'\n")
    with pytest.raises(Exception, match="cache must be true or false"):
        load_config(tmp_path)


def test_a_warm_recheck_does_not_load_libcst(tmp_path, cache_dir):
    pkg = _tree(tmp_path, {"mod_a.py": MUTATOR, "mod_b.py": CALLER, "lists.py": LISTS})
    script = ("import sys, json; from pathlib import Path; from np2jax.api import check_paths;"
              "from np2jax.config import Config; run = check_paths([Path(sys.argv[1])], Config(), jobs=1);"
              "print(json.dumps([len(run.files), len(run.problems), 'libcst' in sys.modules]))")
    env = {**os.environ, "NP2JAX_CACHE_DIR": str(cache_dir)}
    cold = subprocess.run([sys.executable, "-c", script, str(pkg)], capture_output=True,
                          text=True, env=env, check=True)
    warm = subprocess.run([sys.executable, "-c", script, str(pkg)], capture_output=True,
                          text=True, env=env, check=True)
    files, problems, loaded = json.loads(warm.stdout)
    assert json.loads(cold.stdout) == [files, problems, True]
    assert files == 4 and problems > 0 and loaded is False


def test_the_pre_filter_does_not_parse_files_without_numpy(monkeypatch):
    def no_parse(*_):
        raise AssertionError("parsed")

    monkeypatch.setattr("np2jax.syntax.parse.parse_with_ast", no_parse)
    result = process(PLAIN, Config())
    assert result.converted == PLAIN and not result.findings
    with pytest.raises(AssertionError, match="parsed"):
        process("import scipy.linalg\n", Config())
    with pytest.raises(AssertionError, match="parsed"):
        process("np = __import__('numpy')\n", Config())


def test_a_numpy_free_tree_is_checked_without_loading_libcst(tmp_path):
    pkg = _tree(tmp_path, {"plain.py": PLAIN, "other.py": PLAIN.replace("add", "sub")})
    script = ("import sys; from pathlib import Path; from np2jax.api import check_paths;"
              "from np2jax.config import Config;"
              "run = check_paths([Path(sys.argv[1])], Config(cache=False), jobs=1);"
              "print(len(run.files), len(run.problems), 'libcst' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script, str(pkg)], capture_output=True,
                          text=True, check=True)
    assert done.stdout.split() == ["3", "0", "False"]


def test_a_file_without_numpy_calling_a_rewritten_function_is_analysed():
    """It must assign the result of its calls, so it cannot be skipped as NumPy-free."""
    text = "from pkg.mod_a import normalize\n\n\ndef g(y):\n    normalize(y)\n    return y\n"
    context = ModuleContext(name="pkg.user", external_mutators=(("pkg.mod_a.normalize", (0, "v")),))
    assert process(text, Config(), "user.py", True, context).tree_references == {
        "pkg.mod_a.normalize": 1}


def test_no_tree_rewrite_leaves_a_numpy_free_caller_behind(tmp_path):
    """The definition returns its argument only if every call in the tree assigns it."""
    user = "from pkg.mod_a import normalize\n\n\ndef g(y):\n    normalize(y)\n    return y\n"
    pkg = _tree(tmp_path, {"mod_a.py": MUTATOR, "mod_b.py": CALLER, "user.py": user})
    converted = {Path(r.path).name: r.converted for r in
                 convert_paths([pkg], Config(cache=False), jobs=1).files}
    if "return v" in converted["mod_a.py"]:
        assert "y = normalize(y)" in converted["user.py"]
    else:
        assert "x = normalize(x)" not in converted["mod_b.py"]


def test_no_tree_rewrite_leaves_a_numpy_free_notebook_behind(tmp_path):
    cell = {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
            "source": "from pkg.mod_b import main\nfrom pkg.mod_a import normalize\n"
                      "y = main()\nnormalize(y)\n"}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    pkg = _tree(tmp_path, {"mod_a.py": MUTATOR, "mod_b.py": CALLER,
                           "use.ipynb": json.dumps(notebook)})
    converted = {Path(r.path).name: r.converted for r in
                 convert_paths([pkg], Config(cache=False), jobs=1).files}
    if "return v" in converted["mod_a.py"]:
        assert "y = normalize(y)" in converted["use.ipynb"]
    else:
        assert "x = normalize(x)" not in converted["mod_b.py"]
