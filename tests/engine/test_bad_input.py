"""Bad input through the real command line: every bad file is one error line naming it, the
run exits 2 (README: unreadable, undecodable, unparsable or unwritable files), the rest of
the batch is still processed, the bad file's bytes are unchanged, and no traceback reaches
the user. Cases already covered by tests/cli/test_cli.py are not repeated here."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import np2jax.engine
from helpers import invoke

GOOD = "import numpy as np\ny = np.sum([1, 2])\n"
GOOD_CONVERTED = ('import jax\nimport jax.numpy as jnp\njax.config.update("jax_enable_x64", True)\n\n'
                  "y = jnp.sum(jnp.array([1, 2]))\n")


def cli(*args, timeout=120):
    """The installed command, in a child process (for crashes a CliRunner cannot survive)."""
    done = subprocess.run([sys.executable, "-m", "np2jax", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout)
    assert "Traceback" not in done.stdout + done.stderr
    return done


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.write_bytes if isinstance(data, bytes) else path.write_text)(data)
    return path


def error_lines(output: str, name: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:") and name in line]


def assert_bad_file_reported(result_output: str, exit_code: int, bad: Path, before: bytes):
    assert exit_code == 2, result_output
    lines = error_lines(result_output, bad.name)
    assert len(lines) == 1, result_output  # one line, naming the file
    assert bad.read_bytes() == before


# Each: (file name, bytes, expected words in the error line).
BAD = {
    "syntax": ("syntax.py", b"import numpy as np\ndef f(:\n    pass\n", "syntax error"),
    "undecodable": ("undecodable.py", b"import numpy as np\ns = '\xe9t\xe9'\n", "cannot decode"),
    "binary": ("binary.py", bytes(range(256)) * 4, "binary file"),
    "bad cookie": ("cookie.py", b"# -*- coding: no-such-codec -*-\nimport numpy as np\n", "encoding"),
    "notebook JSON": ("notebook.ipynb", b'{"cells": [{"cell_type": "code", "source": "import numpy',
                      "invalid notebook JSON"),
    "notebook cell syntax": ("cells.ipynb", json.dumps({"cells": [{
        "cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
        "source": ["import numpy as np\n", "def f(:\n", "    pass"]}], "metadata": {},
        "nbformat": 4, "nbformat_minor": 5}).encode(), "cells.ipynb:cell 1:2: syntax error"),
}


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("mode", ["in-place", "out", "check"])
def test_bad_file_fails_alone(tmp_path, case, mode):
    name, data, words = BAD[case]
    src = tmp_path / "src"
    bad = write(src / name, data)
    good = write(src / "z_good.py", GOOD)
    if mode == "check":
        result = invoke("check", src)
        assert "z_good.py:2:" in result.output  # the rest was checked
    elif mode == "in-place":
        result = invoke("convert", src, "--in-place")
        assert good.read_text() == GOOD_CONVERTED
    else:
        result = invoke("convert", src, "--out", tmp_path / "out")
        assert (tmp_path / "out" / "z_good.py").read_text() == GOOD_CONVERTED
        assert not (tmp_path / "out" / name).exists()
    assert_bad_file_reported(result.output, result.exit_code, bad, data)
    assert words in error_lines(result.output, name)[0]


def test_deeply_nested_parentheses_are_one_error_line(tmp_path):
    # libcst's native parser can crash the process here; CPython's parser, run first, refuses it
    data = b"import numpy as np\nx = " + b"(" * 2000 + b"1" + b")" * 2000 + b"\n"
    bad = write(tmp_path / "src" / "deep.py", data)
    good = write(tmp_path / "src" / "z_good.py", GOOD)
    done = cli("convert", tmp_path / "src", "--in-place")
    assert_bad_file_reported(done.stderr, done.returncode, bad, data)
    assert good.read_text() == GOOD_CONVERTED


@pytest.mark.parametrize("terms", [400, 1000])
def test_long_but_valid_expressions_convert(tmp_path, terms):
    # valid Python nested far deeper than Python's default recursion limit lets libcst visit
    source = write(tmp_path / "a.py", "import numpy as np\nx = " + " + ".join(["np.ones(2)"] * terms)
                   + "\ny = " + "-" * terms + "np.ones(2)\n")
    result = invoke("convert", source, "--in-place")
    assert result.exit_code == 0, result.output
    assert source.read_text().count("jnp.ones(2)") == terms + 1


@pytest.mark.parametrize("mode", ["in-place", "out", "check"])
def test_empty_file_is_fine(tmp_path, mode):
    empty = write(tmp_path / "src" / "empty.py", b"")
    args = {"in-place": ["--in-place"], "out": ["--out", tmp_path / "out"], "check": []}[mode]
    result = invoke("check" if mode == "check" else "convert", tmp_path / "src", *args)
    assert result.exit_code == 0, result.output
    assert empty.read_bytes() == b""
    if mode == "out":
        assert (tmp_path / "out" / "empty.py").read_bytes() == b""


@pytest.mark.parametrize("jit", [False, True])
def test_ten_megabytes_without_numpy_are_never_parsed(tmp_path, monkeypatch, jit):
    """A data module of 10 MB without `import` or NumPy passes through untouched and is never
    parsed: not by the tree's import graph (ast), nor --jit's decorator scan or the pipeline
    (libcst), which take seconds a megabyte. How fast: benchmarks/tool_speed.py --big-module."""
    import ast

    import libcst

    import np2jax.syntax.parse

    parsed = []

    def spy(parse):
        def parse_and_record(source, *args, **kwargs):
            parsed.append(len(source))
            return parse(source, *args, **kwargs)
        return parse_and_record

    monkeypatch.setattr(ast, "parse", spy(ast.parse))
    monkeypatch.setattr(libcst, "parse_module", spy(libcst.parse_module))
    monkeypatch.setattr(np2jax.syntax.parse, "parse_with_ast", spy(np2jax.syntax.parse.parse_with_ast))
    line = "value_{i} = {i} * 2 + 1  # padding padding padding padding\n"
    data = "".join(line.format(i=i) for i in range(180_000)).encode()
    assert len(data) > 10_000_000
    big = write(tmp_path / "src" / "big.py", data)
    write(tmp_path / "src" / "z_good.py", GOOD)
    write(tmp_path / "src" / "z_decorated.py", "import numpy as np\n\n\ndef deco(fn):\n"
                                               "    def inner(x):\n        return fn(x)\n"
                                               "    return inner\n")
    # -j 1: every parse happens in this process, where the spies see it
    result = invoke("convert", tmp_path / "src", "--in-place", "-j", "1", "--no-cache", "--exit-zero",
                    *(["--jit"] if jit else []))
    assert result.exit_code == 0, result.output
    assert big.read_bytes() == data
    assert parsed and max(parsed) < 1000, parsed  # the small files were, the big one never
    assert (tmp_path / "src" / "z_good.py").read_text() == GOOD_CONVERTED


def test_a_large_numpy_file_is_processed(tmp_path):
    # Measured: about 30 s a megabyte of NumPy code (1 MB: 30 s; 10 MB: not done after
    # 4 minutes, 2.6 GB resident). There is no documented size limit, so a file is processed
    # whatever its size; this one (~15 kB) must be converted in well under a minute.
    lines = [f"v{i} = np.sum([{i}, 1]) + {i}\n" for i in range(600)]
    data = ("import numpy as np\n" + "".join(lines)).encode()
    big = write(tmp_path / "big.py", data)
    start = time.monotonic()
    result = invoke("convert", big, "--in-place")
    assert time.monotonic() - start < 60
    assert result.exit_code == 0, result.output
    assert big.read_text().count("jnp.sum(jnp.array([") == 600


@pytest.mark.parametrize("mode", ["out", "check"])
def test_latin1_cookie_and_bom(tmp_path, mode):
    latin = write(tmp_path / "src" / "latin.py",
                  "# -*- coding: latin-1 -*-\nimport numpy as np\nname = 'café'\ny = np.sum([1, 2])\n"
                  .encode("latin-1"))
    bom = write(tmp_path / "src" / "bom.py", ("\ufeff" + GOOD).encode("utf-8"))
    before = {p: p.read_bytes() for p in (latin, bom)}
    if mode == "check":
        result = invoke("check", tmp_path / "src")
        assert result.exit_code == 1 and "latin.py:4:" in result.output and "bom.py:2:" in result.output
    else:
        result = invoke("convert", tmp_path / "src", "--out", tmp_path / "out")
        assert result.exit_code == 0, result.output
        out_latin = (tmp_path / "out" / "latin.py").read_bytes()
        assert "café".encode("latin-1") in out_latin and b"jnp.sum" in out_latin
        out_bom = (tmp_path / "out" / "bom.py").read_bytes()
        assert out_bom.startswith(b"\xef\xbb\xbf") and out_bom[3:].decode() == GOOD_CONVERTED
    assert {p: p.read_bytes() for p in before} == before


def test_mixed_line_endings_and_tabs_are_kept(tmp_path):
    mixed = write(tmp_path / "mixed.py",
                  b"import numpy as np\r\ny = np.sum([1, 2])\nz = 1  # unix\r\nw = 2\n")
    tabs = write(tmp_path / "tabs.py",
                 b"import numpy as np\ndef f():\n\tx = np.zeros(3)\n\tx[0] = 1.0\n\treturn x\n")
    result = invoke("convert", mixed, tabs, "--in-place")
    assert result.exit_code == 0, result.output
    data = mixed.read_bytes()
    assert b"jnp.sum(jnp.array([1, 2]))" in data
    assert data.endswith(b"z = 1  # unix\r\nw = 2\n")  # lines not converted keep their endings
    text = tabs.read_text()
    assert "\tx = x.at[0].set(1.0)\n" in text
    compile(text, "tabs.py", "exec")


def test_symlink_loop_in_a_tree_fails_alone(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").symlink_to("b.py")
    (src / "b.py").symlink_to("a.py")
    (src / "up").symlink_to("..")  # a folder loop: not followed
    good = write(src / "z_good.py", GOOD)
    done = cli("convert", src, "--in-place")
    assert done.returncode == 2
    assert len(error_lines(done.stderr, "a.py")) == 1 and "internal error" not in done.stderr
    assert good.read_text() == GOOD_CONVERTED


def test_a_symlink_loop_named_on_the_command_line(tmp_path):
    (tmp_path / "a.py").symlink_to("b.py")
    (tmp_path / "b.py").symlink_to("a.py")
    good = write(tmp_path / "good.py", GOOD)
    done = cli("convert", tmp_path / "a.py", good, "--in-place")
    assert done.returncode == 2
    assert len(error_lines(done.stderr, "a.py")) == 1
    assert "link loop" in done.stderr
    assert good.read_text() == GOOD_CONVERTED
    assert (tmp_path / "a.py").is_symlink()


def test_symlinks_out_of_the_tree_are_never_written_through(tmp_path):
    outside = write(tmp_path / "outside" / "lib.py", GOOD)
    write(tmp_path / "outside" / "pkg" / "mod.py", GOOD)
    src = tmp_path / "src"
    write(src / "z_good.py", GOOD)
    (src / "lib.py").symlink_to(outside)
    (src / "pkg").symlink_to(tmp_path / "outside" / "pkg", target_is_directory=True)
    result = invoke("convert", src, "--in-place")
    assert result.exit_code == 2 and len(error_lines(result.output, "lib.py")) == 1
    assert outside.read_text() == GOOD and (tmp_path / "outside" / "pkg" / "mod.py").read_text() == GOOD
    assert (src / "lib.py").is_symlink()
    result = invoke("convert", src, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "lib.py").read_text() == GOOD_CONVERTED
    assert not (tmp_path / "out" / "lib.py").is_symlink() and outside.read_text() == GOOD
    assert not (tmp_path / "out" / "pkg").exists()  # a linked folder is not walked


def without_permission_override(*args):
    """The CLI in a child that file permissions bind: as a normal user, the CLI itself; as
    root, the CLI without the capabilities that let root read and write anything (setpriv,
    util-linux), so chmod 000 and read-only folders mean what they mean for users."""
    prefix = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: permissions cannot bind")
        prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--"]
    done = subprocess.run([*prefix, sys.executable, "-m", "np2jax", *map(str, args)],
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stdout + done.stderr
    return done


def test_unreadable_file(tmp_path):
    bad = write(tmp_path / "src" / "secret.py", GOOD)
    good = write(tmp_path / "src" / "z_good.py", GOOD)
    bad.chmod(0)
    try:
        result = without_permission_override("convert", tmp_path / "src", "--in-place")
        output = result.stdout + result.stderr
        assert result.returncode == 2, output
        assert "cannot read" in error_lines(output, "secret.py")[0]
        assert good.read_text() == GOOD_CONVERTED
    finally:
        bad.chmod(0o644)
    assert bad.read_text() == GOOD


def test_unwritable_file_in_place(tmp_path):
    folder = tmp_path / "ro"
    bad = write(folder / "a.py", GOOD)
    good = write(tmp_path / "z_good.py", GOOD)
    folder.chmod(0o555)
    try:
        result = without_permission_override("convert", bad, good, "--in-place")
        output = result.stdout + result.stderr
        assert result.returncode == 2, output
        assert "cannot write" in error_lines(output, "a.py")[0]
        assert good.read_text() == GOOD_CONVERTED
    finally:
        folder.chmod(0o755)
    assert bad.read_text() == GOOD and sorted(p.name for p in folder.iterdir()) == ["a.py"]


def test_unwritable_target_under_out(tmp_path):
    """Works as root too: a file stands where --out needs a folder."""
    src = tmp_path / "src"
    write(src / "pkg" / "a.py", GOOD)
    good = write(src / "z_good.py", GOOD)
    write(tmp_path / "out" / "pkg", "not a folder")
    result = invoke("convert", src, "--out", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert len(error_lines(result.output, "a.py")) == 1 and "cannot write" in result.output
    assert (tmp_path / "out" / "z_good.py").read_text() == GOOD_CONVERTED
    assert (tmp_path / "out" / "pkg").read_text() == "not a folder"
    assert good.read_text() == GOOD


def test_a_file_deleted_during_the_run(tmp_path, monkeypatch):
    gone = write(tmp_path / "src" / "gone.py", GOOD)
    good = write(tmp_path / "src" / "z_good.py", GOOD)
    real = np2jax.engine.read_source

    def read_after_deleting(path):
        if path.name == "gone.py":
            path.unlink()  # found at discovery, gone when read
        return real(path)

    monkeypatch.setattr(np2jax.engine, "read_source", read_after_deleting)
    result = invoke("convert", tmp_path / "src", "--in-place")
    assert result.exit_code == 2
    (line,) = error_lines(result.output, "gone.py")
    assert "cannot read" in line
    assert good.read_text() == GOOD_CONVERTED
    assert not gone.exists()  # not recreated from nothing


def test_out_pointing_at_an_existing_file(tmp_path):
    src = write(tmp_path / "src" / "a.py", GOOD)
    target = write(tmp_path / "target.txt", "keep me")
    result = invoke("convert", tmp_path / "src", "--out", target)
    assert result.exit_code == 2 and "not a folder" in result.output
    assert target.read_text() == "keep me" and src.read_text() == GOOD


@pytest.mark.parametrize("where", [".", "sub/deeper"])
def test_out_equal_to_or_deep_inside_the_input_tree(tmp_path, where):
    src = write(tmp_path / "src" / "a.py", GOOD)
    result = invoke("convert", tmp_path / "src", "--out", tmp_path / "src" / where)
    assert result.exit_code == 2 and "inside the input tree" in result.output
    assert src.read_text() == GOOD
    assert sorted(p.name for p in (tmp_path / "src").iterdir()) == ["a.py"]


def test_the_same_file_given_twice(tmp_path):
    source = write(tmp_path / "src" / "a.py", GOOD)
    result = invoke("convert", source, source, tmp_path / "src", "--in-place")
    assert result.exit_code == 0, result.output
    assert source.read_text() == GOOD_CONVERTED
    assert re.search(r"files converted\s*\S\s*1\s", result.output), result.output
    result = invoke("convert", tmp_path / "src", source, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.py"]


def test_real_command_batch_with_every_kind_of_bad_file(tmp_path):
    """One batch through `python -m np2jax`: each bad file one line, exit 2, the good ones
    converted, nothing lost, no traceback."""
    src = tmp_path / "src"
    for name, data, _ in BAD.values():
        write(src / name, data)
    write(src / "empty.py", b"")
    write(src / "z_good.py", GOOD)
    before = {p: p.read_bytes() for p in src.iterdir() if p.name != "z_good.py"}
    for args in (["convert", src, "--in-place"], ["check", src]):
        done = cli(*args)
        assert done.returncode == 2, done.stderr
        for name, _, _ in BAD.values():
            assert len(error_lines(done.stderr, name)) == 1, done.stderr
        assert {p: p.read_bytes() for p in before} == before
    assert (src / "z_good.py").read_text() == GOOD_CONVERTED
