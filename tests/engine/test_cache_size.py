"""The result cache stays under $NP2JAX_CACHE_MAX_MB: a run that stores entries deletes the
least recently used ones when the cache is bigger (np2jax.cache.prune)."""

from __future__ import annotations

import os

import pytest

from helpers import invoke
from np2jax.api import check_paths
from np2jax.cache import CacheSettingError, prune, size_limit
from np2jax.config import Config


def _entries(folder):
    return sorted(folder.glob("*/*.json"))


def _write(folder, name: str, size: int, mtime: float):
    entry = folder / name[:2] / f"{name}.json"
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_text("x" * size)
    os.utime(entry, (mtime, mtime))
    return entry


def test_prune_deletes_the_least_recently_used_down_to_three_quarters(tmp_path):
    old = [_write(tmp_path, f"a{i}", 100, 1000 + i) for i in range(6)]
    recent = [_write(tmp_path, f"b{i}", 100, 5000 + i) for i in range(4)]
    run = _write(tmp_path / "runs", "", 0, 0)  # placeholder folder layout: runs/<hash>.json
    run.unlink()
    freed = prune(tmp_path, limit=800)  # 1000 bytes held: down to 600
    assert freed == 400
    assert _entries(tmp_path) == sorted(old[4:] + recent)


def test_prune_leaves_a_cache_under_the_limit_alone(tmp_path):
    entries = [_write(tmp_path, f"c{i}", 100, 1000 + i) for i in range(3)]
    assert prune(tmp_path, limit=300) == 0
    assert _entries(tmp_path) == entries


@pytest.mark.parametrize("value, expected", [("", 512 * 1024 * 1024), ("1", 1024 * 1024),
                                             ("0.5", 512 * 1024)])
def test_the_limit_is_read_from_the_environment(monkeypatch, value, expected):
    monkeypatch.setenv("NP2JAX_CACHE_MAX_MB", value)
    assert size_limit() == expected


@pytest.mark.parametrize("value", ["lots", "-1", "nan"])
def test_a_bad_limit_is_one_clear_error(tmp_path, monkeypatch, cache_dir, value):
    monkeypatch.setenv("NP2JAX_CACHE_MAX_MB", value)
    with pytest.raises(CacheSettingError, match="NP2JAX_CACHE_MAX_MB"):
        size_limit()
    source = tmp_path / "a.py"
    source.write_text("import numpy as np\nx = np.zeros(3)\nx[0] = 1\n")
    for command in (["check", str(source)], ["convert", str(source), "--out", str(tmp_path / "o")]):
        result = invoke(*command)
        assert result.exit_code == 2, result.output
        assert "NP2JAX_CACHE_MAX_MB" in result.output


def test_a_run_keeps_the_cache_under_the_limit(tmp_path, monkeypatch, cache_dir):
    """Checks of many different files, with a limit that holds a few entries: the cache
    never ends a run much above the limit, and the entries kept are the newest."""
    monkeypatch.setenv("NP2JAX_CACHE_MAX_MB", str(20_000 / 1024 / 1024))  # 20 kB
    for i in range(12):
        source = tmp_path / f"m{i}.py"
        source.write_text(f"import numpy as np\nx{i} = np.zeros({i + 3})\nx{i}[0] = {i}\n")
        check_paths([source], Config(), jobs=1)
        held = sum(e.stat().st_size for e in _entries(cache_dir))
        assert held <= 20_000
    last = tmp_path / "m11.py"
    assert check_paths([last], Config(), jobs=1).problems  # still cached, still right
