"""Test configuration shared by every test module."""

import os
import tempfile

import pytest

# trees the tests run other suites on (tests/data/prove_example has its own tests/)
collect_ignore = ["data"]


def pytest_addoption(parser):
    parser.addoption("--long", action="store_true",
                     help="Generated programs: thousands of examples instead of 200 (NP2JAX_LONG=1).")


# The tests that take seconds each: they run converted programs under JAX (which compiles
# each), the verifier's child processes, libcst's own metadata providers over large files,
# or whole trees through the CLI. `-m quick` runs every other test that is not `slow`.
HEAVY = {
    "test_fixtures.py": {"test_both_versions_run_and_agree",
                         "test_converted_random_programs_are_deterministic_and_never_reuse_a_key"},
    "test_metadata_fast_path.py": "all",
    "test_generated_programs.py": "all",
    "test_never_silent.py": "all",
    "test_verify.py": "all",
    "test_prove.py": "all",  # whole suites recorded and replayed in child processes
    "test_jit_masks.py": "all",
    "test_jit_gather.py": "all",
    "test_jit_cond.py": {"test_generated_branches_convert_only_when_the_results_agree"},
    "test_benchmarks.py": "all",
    # a tiny package timed in the benchmark's child processes (JAX imported in each)
    "test_library_speed.py": {"test_a_static_argument_that_changes_each_call_recompiles_every_call",
                              "test_a_plain_jit_compiles_once_then_never",
                              "test_numpy_side_has_no_jax_and_results_agree",
                              "test_a_different_result_is_reported_not_hidden",
                              "test_the_report_names_the_recompiling_function_and_show_prints_it_again"},
    "test_examples.py": "all",
    "test_progress.py": "all",
    "test_crash_safety.py": {"test_sigkill_mid_run_leaves_every_file_old_or_new"},
    "test_single_pass.py": {"test_the_examples_and_fixtures_end_as_with_the_discovery_pass"},
    "test_bad_input.py": {"test_long_but_valid_expressions_convert"},
    "test_catalog.py": {"test_fixable_rule_doc_example_runs_equal"},
    "test_html_report.py": {"test_page_renders_in_a_headless_browser", "test_cli_html_with_verify",
                            "test_finding_links_land_on_the_marked_line_in_a_browser"},
    "test_report_formats.py": {"test_convert_verify_in_sarif_and_quiet"},
    "test_coverage_report.py": "all",  # a tree through the CLI, in a child process each
    # the API table's generator, run on a few callables in child processes
    "test_api_proof.py": {"test_a_sample_of_the_claims_holds_with_the_installed_versions",
                          "test_the_generator_proves_what_the_libraries_do",
                          "test_the_generator_records_its_provenance_and_prints_its_counts"},
}


def pytest_configure(config):
    # results cached by np2jax must not outlive the test session nor come from another one
    # (each xdist worker has its own)
    os.environ["NP2JAX_CACHE_DIR"] = tempfile.mkdtemp(prefix="np2jax-test-cache-")
    _jax_compilation_cache(config)
    config.addinivalue_line(
        "markers", "slow: builds a wheel or a venv; deselect with -m 'not slow'")
    config.addinivalue_line(
        "markers", "quick: neither slow nor heavy (conftest.HEAVY): `pytest -m quick`")
    if config.getoption("--long"):
        os.environ["NP2JAX_LONG"] = "1"  # read when test_generated_programs is imported


def pytest_collection_modifyitems(config, items):
    """Marks `quick` the tests that are neither slow nor HEAVY. Under pytest-xdist (--dist
    loadgroup), the tests that share a module-scoped fixture (a wheel built, a tree
    verified, the SARIF schema loaded) run on one worker, which makes it once."""
    for item in items:
        heavy = HEAVY.get(item.path.name, ())
        name = getattr(item, "originalname", item.name)
        if not item.get_closest_marker("slow") and not (heavy == "all" or name in heavy):
            item.add_marker(pytest.mark.quick)
        info = getattr(item, "_fixtureinfo", None)
        shared = sorted(name for name, defs in (info.name2fixturedefs.items() if info else ())
                        if defs and defs[-1].scope in ("module", "package", "session"))
        if shared:
            item.add_marker(pytest.mark.xdist_group(f"{item.module.__name__}:{shared[0]}"))


def _jax_compilation_cache(config) -> None:
    """JAX's persistent compilation cache for the session's processes (xdist workers, the
    verifier's children, the programs the CLI runs), kept in pytest's cache folder for the
    next run (`--cache-clear` empties it). Much of the suite's time is XLA compiling the same
    small programs again: a random-distributions fixture compiles for half a minute, then
    again under jax_debug_key_reuse. JAX keys each entry by the program and its own
    version; with a size limit it locks the folder around reads and writes, so processes
    can share it. NP2JAX_TEST_JAX_CACHE=0, or a JAX_COMPILATION_CACHE_DIR of your own,
    leaves it off."""
    if os.environ.get("NP2JAX_TEST_JAX_CACHE") == "0" or os.environ.get("JAX_COMPILATION_CACHE_DIR"):
        return
    cache = getattr(config, "cache", None)  # None under -p no:cacheprovider: this session only
    folder = cache.mkdir("jax-compilation") if cache is not None else tempfile.mkdtemp(
        prefix="np2jax-test-jax-")
    os.environ.update(JAX_COMPILATION_CACHE_DIR=str(folder),
                      JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
                      JAX_COMPILATION_CACHE_MAX_SIZE=str(2 << 30))


@pytest.fixture(autouse=True)
def _restore_jax_x64():
    """A converted program run with --x64 turns jax_enable_x64 on for the whole process; put
    it back so that no test depends on the order tests run in."""
    yield
    import sys

    jax = sys.modules.get("jax")
    if jax is not None and jax.config.jax_enable_x64:
        jax.config.update("jax_enable_x64", False)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A fresh result cache for the test (np2jax.cache reads $NP2JAX_CACHE_DIR)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("NP2JAX_CACHE_DIR", str(folder))
    return folder
