"""Test configuration shared by every test module."""

import os
import tempfile

import pytest


def pytest_addoption(parser):
    parser.addoption("--long", action="store_true",
                     help="Generated programs: thousands of examples instead of 300 (NP2JAX_LONG=1).")


def pytest_configure(config):
    # results cached by np2jax must not outlive the test session nor come from another one
    os.environ["NP2JAX_CACHE_DIR"] = tempfile.mkdtemp(prefix="np2jax-test-cache-")
    config.addinivalue_line(
        "markers", "slow: builds a wheel or a venv; deselect with -m 'not slow'")
    if config.getoption("--long"):
        os.environ["NP2JAX_LONG"] = "1"  # read when test_generated_programs is imported


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
