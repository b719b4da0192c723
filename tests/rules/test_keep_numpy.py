"""Functions kept on NumPy as written (NJ104 kept-on-numpy): the configuration's entries
(`keep-numpy`, `--keep-numpy`), the pragma, and a tree whose kept functions other modules
call. The fixtures (fixtures/kept-on-numpy) run each case both ways."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from np2jax.api import Config, convert_paths, convert_source
from np2jax.cli import app
from np2jax.config import ConfigError, keep_spec, load_config, path_matches
from np2jax.verify.compare import compare_values

FUNCTIONS = """
import numpy as np


def f(x):
    return np.cumsum(x) * 2.0


class C:
    def m(self, y):
        return np.sum(y)

    class Inner:
        def deep(self, z):
            return np.sum(z)


def g(x):
    return np.cumsum(x)
"""


def _kept_names(text: str, *entries: str, path: str = "pkg/mod.py") -> list[str]:
    result = convert_source(text, Config(keep_numpy=entries), path)
    return [f.message.split("`")[1] for f in result.findings if f.code == "NJ104"]


def test_spec_parses_path_qualname_and_reason():
    assert keep_spec("pkg/mod.py::C.m") == ("pkg/mod.py", "C.m", "")
    assert keep_spec("mod.py::f=matches the reference = exactly") == (
        "mod.py", "f", "matches the reference = exactly")
    for bad in ("mod.py", "::f", "mod.py::", "mod.py::f.<locals>.g", "mod.py::1f"):
        with pytest.raises(ValueError, match="PATH::QUALNAME"):
            keep_spec(bad)


@pytest.mark.parametrize("suffix, matches", [
    ("mod.py", True), ("pkg/mod.py", True), ("src/pkg/mod.py", True), ("./pkg/mod.py", True),
    ("od.py", False), ("other/mod.py", False), ("a/src/pkg/mod.py", False), ("*", True),
    ("pkg/*.py", True),
])
def test_path_is_matched_as_a_suffix_part_by_part(suffix, matches):
    assert path_matches("/home/u/src/pkg/mod.py", suffix) is matches


def test_entries_name_functions_methods_and_nested_classes_methods():
    assert _kept_names(FUNCTIONS, "mod.py::f") == ["f"]
    assert _kept_names(FUNCTIONS, "pkg/mod.py::C.m", "mod.py::C.Inner.deep") == ["C.m", "C.Inner.deep"]
    assert _kept_names(FUNCTIONS, "other.py::f", "mod.py::m", "mod.py::C") == []


def test_kept_function_stays_numpy_and_the_others_convert():
    result = convert_source(FUNCTIONS, Config(keep_numpy=("mod.py::f=bit for bit",)), "pkg/mod.py")
    converted = result.converted
    assert "    x = _np2jax_as_numpy(x)\n" \
           "    return np.cumsum(x) * 2.0\n" in converted
    assert converted.count("def _np2jax_as_numpy(") == 1  # the prologue's helper, written once
    assert "return jnp.cumsum(jnp.asarray(x))" in converted  # g converts
    (finding,) = [f for f in result.findings if f.code == "NJ104"]
    assert (finding.line, finding.severity, finding.fixable) == (5, "warning", False)
    assert "(bit for bit)" in finding.message
    # its one NumPy call counts as left on NumPy; the entry line calls the helper, no NumPy
    # function, and is no boundary call
    assert result.coverage.call_sites == 4 and result.coverage.moved == 3
    assert result.coverage.boundaries == 0
    assert result.kept_entries == ["mod.py::f=bit for bit"]


def test_pragma_with_and_without_reason():
    text = textwrap.dedent("""
        import numpy as np


        def f(x):  # np2jax: keep-numpy -- the reference rounds this way
            return np.cumsum(x)


        def g(
            x,
        ):  # np2jax: keep-numpy
            return np.cumsum(x)


        def h(x):  # np2jax: keep-numpyish
            return np.cumsum(x)
    """)
    result = convert_source(text)
    messages = {f.message.split("`")[1]: f.message for f in result.findings if f.code == "NJ104"}
    assert set(messages) == {"f", "g"}
    assert "(the reference rounds this way)" in messages["f"]
    assert "pragma" in messages["g"]
    assert "return jnp.cumsum(jnp.asarray(x))" in result.converted  # h converts


def test_a_module_that_converts_nothing_gets_no_prologue():
    text = "import numpy as np\n\n\ndef f(x):  # np2jax: keep-numpy\n    return np.sum(x)\n"
    assert convert_source(text).converted == text


def test_pyproject_key_is_keep_numpy_in_kebab_case(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.np2jax]\nkeep-numpy = ["mod.py::f", "pkg/mod.py::C.m=reason"]\n')
    assert load_config(tmp_path).keep_numpy == ("mod.py::f", "pkg/mod.py::C.m=reason")
    (tmp_path / "pyproject.toml").write_text('[tool.np2jax]\nkeep_numpy = ["mod.py::f"]\n')
    with pytest.raises(ConfigError, match=r"keep_numpy \(did you mean keep-numpy\?\)"):
        load_config(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.np2jax]\nkeep-numpy = ["mod.py"]\n')
    with pytest.raises(ConfigError, match="PATH::QUALNAME"):
        load_config(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.np2jax]\nkeep-numpy = "mod.py::f"\n')
    with pytest.raises(ConfigError, match="keep-numpy must be a list of strings"):
        load_config(tmp_path)


def _invoke(cwd: Path, *args):
    import os

    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(app, [str(a) for a in args])
    finally:
        os.chdir(old)


def test_cli_keep_numpy_adds_to_the_file_and_warns_of_entries_naming_nothing(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(FUNCTIONS)
    (tmp_path / "pyproject.toml").write_text('[tool.np2jax]\nkeep-numpy = ["mod.py::g"]\n')
    result = _invoke(tmp_path, "convert", "pkg", "--diff", "--no-cache",
                     "--keep-numpy", "pkg/mod.py::C.m=exact sums", "--keep-numpy", "mod.py::nothing",
                     "--keep-numpy", "elsewhere.py::f")
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert "warning: keep-numpy entry 'mod.py::nothing' names no function of the files processed" in lines
    assert "warning: keep-numpy entry 'elsewhere.py::f' names no function of the files processed" in lines
    assert not any("pkg/mod.py::C.m" in line or "'mod.py::g'" in line for line in lines)
    assert "`C.m` is kept on NumPy as written (exact sums)" in result.output
    assert "`g` is kept on NumPy as written (asked by --keep-numpy)" in result.output
    check = _invoke(tmp_path, "check", "pkg", "--no-cache", "--keep-numpy", "mod.py::f")
    assert "NJ104 `f` is kept on NumPy" in check.output and "NJ104 `g`" in check.output
    bad = _invoke(tmp_path, "check", "pkg", "--keep-numpy", "mod.py")
    assert bad.exit_code == 2 and "PATH::QUALNAME" in bad.output


CORE = """
import numpy as np


def smooth(x):
    return np.convolve(x, np.ones(3) / 3.0, mode="same")


def clip_below(x, lo):
    x[x < lo] = lo


def table(n):
    return np.arange(n, dtype=float) ** 2


def view(x):
    return x[1:]
"""

APP = """
import numpy as np

from pkg import core
from pkg.core import clip_below, smooth, table


def main():
    a = np.linspace(-1.0, 1.0, 7)
    b = a * 3.0
    clip_below(b, 0.5)
    c = np.cos(a)
    core.clip_below(c, 0.75)
    t = table(4)
    t[0] = -1.0
    d = np.sin(a)
    v = core.view(d)
    v[0] = 5.0
    return {"s": smooth(a * 2.0), "b": b, "c": c, "t": t, "d": d,
            "sum": np.sum(b) + np.sum(t) + np.sum(np.exp(a))}
"""


def _run_main(root: Path):
    code = ("import pickle, sys; import numpy as np; sys.path.insert(0, sys.argv[1]); "
            "from pkg.app import main; "
            "sys.stdout.buffer.write(pickle.dumps({k: np.asarray(v) for k, v in main().items()}))")
    done = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, check=True)
    return pickle.loads(done.stdout)


def test_functions_kept_in_one_module_called_from_another(tmp_path):
    """A kept function writing its argument, returning a view of it, or giving a NumPy
    result another module writes: the callers' arrays stay NumPy (their islands), the
    rest of the caller converts, and both trees give the same results."""
    source = tmp_path / "src"
    (source / "pkg").mkdir(parents=True)
    (source / "pkg" / "__init__.py").write_text("")
    (source / "pkg" / "core.py").write_text(CORE.lstrip("\n"))
    (source / "pkg" / "app.py").write_text(APP.lstrip("\n"))
    out = tmp_path / "out"
    config = Config(cache=False, keep_numpy=("core.py::smooth", "core.py::clip_below",
                                             "core.py::table", "pkg/core.py::view"))
    run = convert_paths([source], config, out=out)
    core = (out / "pkg" / "core.py").read_text()
    app_text = (out / "pkg" / "app.py").read_text()
    assert "    x[x < lo] = lo\n" in core and "np.convolve(x, np.ones(3) / 3.0" in core
    assert core.count("x = _np2jax_as_numpy(x") == 3
    assert "b = np.array(a * 3.0)" in app_text  # passed for a parameter clip_below writes
    assert "c = np.array(jnp.cos(a))" in app_text
    assert "d = np.array(jnp.sin(a))" in app_text  # view returns a view of it
    assert "a = jnp.asarray(np.linspace" in app_text and "jnp.exp(a)" in app_text
    assert "    t[0] = -1.0\n" in app_text and "    v[0] = 5.0\n" in app_text
    assert sorted(f.message.split("`")[1] for f in run.findings if f.code == "NJ104") == [
        "clip_below", "smooth", "table", "view"]
    assert compare_values("main()", _run_main(source), _run_main(out)) is None


def test_converting_again_adds_no_second_prologue():
    text = ("import numpy as np\n\n\ndef f(x):  # np2jax: keep-numpy\n    \"\"\"Doc.\"\"\"\n"
            "    return np.cumsum(x)\n\n\ndef main():\n    return {\"a\": f(np.ones(3))}\n")
    once = convert_source(text).converted
    assert once.count("x = _np2jax_as_numpy(x)") == 1
    assert '    """Doc."""\n    x = _np2jax_as_numpy(x)' in once  # after the docstring
    again = convert_source(once + "y = np.zeros(2)\n").converted  # something else converts
    assert again.count("x = _np2jax_as_numpy(x)") == 1 and "y = jnp.zeros(2)" in again
    assert again.count("def _np2jax_as_numpy(") == 1


def test_run_result_lists_the_entries_naming_nothing(tmp_path):
    (tmp_path / "mod.py").write_text(FUNCTIONS)
    config = Config(cache=False, keep_numpy=("mod.py::f", "mod.py::C.nothing", "x.py::f"))
    run = convert_paths([tmp_path], config)
    assert run.unmatched_kept(config) == ["mod.py::C.nothing", "x.py::f"]
