"""Jupyter notebooks: converted and checked as one module, cell by cell, through the real
command line; the converted notebook's code is run against the original's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from np2jax.api import check_source, convert_source
from helpers import X64_IMPORTS, invoke
from np2jax.files import SourceError
from np2jax.verify.compare import compare_values

MAGICS = ["%matplotlib inline\n", "!pip list\n", "x?\n", "    !echo {i}\n", "%%time\n"]


def code(source, number: int, outputs=True) -> dict:
    return {"cell_type": "code", "execution_count": number, "id": f"code-{number}",
            "metadata": {"tags": [f"t{number}"]},
            "outputs": [{"name": "stdout", "output_type": "stream", "text": [f"out {number}\n"]}]
            if outputs else [], "source": source}


def realistic() -> dict:
    """Imports in the first code cell, an array made in one cell and written in place in a
    later one, markdown and raw cells, line and cell magics, a shell line, a help line."""
    return {
        "cells": [
            {"cell_type": "markdown", "id": "intro", "metadata": {},
             "source": ["# Heat\n", "Uses `np.zeros`; stays as it is.\n"]},
            code(["%matplotlib inline\n", "import numpy as np\n", "!pip list\n"], 1),
            code("x = np.zeros(4)\nscale = np.sum([1.0, 2.0])", 2),
            code(["x[0] = 1.0\n", "x?\n", "for i in range(3):\n", "    !echo {i}\n",
                  "    x[i + 1] += i * scale"], 3),
            {"cell_type": "raw", "id": "raw", "metadata": {"format": "text/plain"},
             "source": "été, as it was"},
            code(["%%time\n", "y = x * 2"], 4),
            code("total = float(y.sum())\nlabel = 'sum: ' + str(total)", 5),
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                    "name": "python3"},
                     "language_info": {"name": "python", "version": "3.11"}},
        "nbformat": 4, "nbformat_minor": 5,
    }


def write(path: Path, notebook: dict) -> Path:
    """As Jupyter writes it (nbformat: indent 1, no ASCII escaping, a final newline)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def source(cell: dict) -> str:
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def test_a_realistic_notebook_is_converted_cell_by_cell(tmp_path):
    original = realistic()
    path = write(tmp_path / "heat.ipynb", original)
    result = invoke("convert", path, "--in-place")
    assert result.exit_code == 0, result.output
    text = path.read_text(encoding="utf-8")
    assert text.startswith('{\n "cells": [\n  {\n   "cell_type"') and text.endswith("}\n")
    assert "été" in text  # not escaped, like the original
    converted = json.loads(text)
    cells, before = converted["cells"], original["cells"]
    assert converted["metadata"] == original["metadata"]
    assert (converted["nbformat"], converted["nbformat_minor"]) == (4, 5)
    assert [c["id"] for c in cells] == [c["id"] for c in before]
    assert [c.get("metadata") for c in cells] == [c.get("metadata") for c in before]
    assert cells[0] == before[0] and cells[4] == before[4]  # markdown and raw untouched
    # the imports go to the first code cell; magics and shell lines are kept exactly
    assert source(cells[1]) == X64_IMPORTS + "\n%matplotlib inline\n!pip list\n"
    assert source(cells[2]) == "x = jnp.zeros(4)\nscale = jnp.sum(jnp.array([1.0, 2.0]))"
    assert source(cells[3]) == ("x = x.at[0].set(1.0)\nx?\nfor i in range(3):\n"
                                "    !echo {i}\n    x = x.at[i + 1].add(i * scale)")
    for magic in MAGICS:
        assert sum(source(c).count(magic) for c in cells) == \
            sum(source(c).count(magic) for c in before), magic
    # a cell keeps the form of its source (a list of lines or a string)
    assert [type(c["source"]) for c in cells] == [type(c["source"]) for c in before]
    assert isinstance(cells[1]["source"], list) and cells[1]["source"][0] == "import jax\n"
    # outputs and execution counts go for the changed cells only
    for index in (1, 2, 3):
        assert cells[index]["outputs"] == [] and cells[index]["execution_count"] is None
    for index in (5, 6):
        assert cells[index] == before[index]
    # a second run changes nothing
    again = invoke("convert", path, "--in-place")
    assert again.exit_code == 0 and path.read_text(encoding="utf-8") == text


def _python_of(notebook: dict) -> str:
    """The notebook's code as plain Python: magic, shell and help lines dropped."""
    magic = re.compile(r"^\s*(%|!|\?)|\?\s*$")
    lines = []
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            for line in source(cell).splitlines():
                lines.append(re.sub(r"\S.*", "pass", line) if magic.search(line) else line)
    return "\n".join(lines) + "\n"


def _run(code: str) -> dict:
    namespace: dict = {}
    exec(compile(code, "<notebook>", "exec"), namespace)  # noqa: S102 - the point of the test
    return {name: namespace[name] for name in ("x", "scale", "y", "total", "label")}


def test_the_converted_notebook_computes_what_the_original_did(tmp_path):
    path = write(tmp_path / "heat.ipynb", realistic())
    reference = _run(_python_of(realistic()))
    assert invoke("convert", path, "--in-place").exit_code == 0
    converted = json.loads(path.read_text(encoding="utf-8"))
    code_text = _python_of(converted)
    assert "jnp." in code_text and "np." not in code_text.replace("jnp.", "")
    got = _run(code_text)
    assert type(got["x"]).__module__.startswith("jax")
    assert compare_values("notebook", reference, got) is None


def test_findings_name_the_cell_and_the_line(tmp_path):
    notebook = realistic()
    notebook["cells"][5]["source"] = ["%%time\n", "alias = x\n", "x[1] = 5.0"]  # x is shared
    path = write(tmp_path / "nb.ipynb", notebook)
    result = invoke("check", path)
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.startswith(str(path))]
    assert len(lines) >= 3
    assert f"{path}:cell 3:2:16: NJ110" in result.output  # np.sum([1.0, 2.0]) in cell 3, line 2
    assert f"{path}:cell 6:3:1: NJ201" in result.output
    assert "because `x` is also reachable through `alias = x`" in result.output
    assert all(re.match(rf"{re.escape(str(path))}:cell \d+:\d+:\d+: NJ\d+ ", line) for line in lines)
    as_json = json.loads(invoke("check", path, "--format", "json").output)
    (finding,) = [f for f in as_json["findings"] if f["code"] == "NJ201" and f["cell"] == 6]
    assert (finding["line"], finding["col"]) == (3, 1)
    # a plain Python file has "cell": null
    plain = tmp_path / "plain.py"
    plain.write_text("import numpy as np\nx = np.sum([1, 2])\n")
    as_json = json.loads(invoke("check", plain, "--format", "json").output)
    assert as_json["findings"][0]["cell"] is None


def test_a_magic_that_runs_python_hides_nothing_from_the_analysis():
    """`%time normalize(p)` calls a function the conversion would rewrite to return its
    argument: the names a magic uses are treated as used by code np2jax cannot see, so the
    function stays as it was (with a finding) and an import the magic uses stays."""
    notebook = {"cells": [
        code("import numpy as np\ndef normalize(p):\n    p /= p.sum()\n", 1),
        code("p = np.ones(4)\nnormalize(p)\n%time normalize(p)\n%timeit np.sum(p)", 2),
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    text = json.dumps(notebook, indent=1) + "\n"
    result = convert_source(text, path="nb.ipynb")
    cells = json.loads(result.converted)["cells"]
    assert "return p" not in source(cells[0]) and "import numpy as np" in source(cells[0])
    assert source(cells[1]).endswith("normalize(p)\n%time normalize(p)\n%timeit np.sum(p)")
    nj209 = [f for f in result.findings if f.code == "NJ209"]
    assert nj209 and nj209[0].cell == 1
    # the magic keeps NumPy: said where it is used, at its column in the magic
    (nj102,) = [f for f in result.findings if f.code == "NJ102"]
    assert (nj102.cell, nj102.line, nj102.col) == (2, 4, 9)
    assert "_np2jax_magic_" not in " ".join(f.message for f in result.findings)


def test_shell_lines_with_python_and_magic_assignments():
    notebook = {"cells": [code(
        "import numpy as np\nfiles = !ls\nx = np.zeros(2)\n!echo {x}\nx[0] = 1.0\n"
        "t = %timeit -o np.sum(x)", 1)], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    result = convert_source(json.dumps(notebook), path="nb.ipynb")
    new = source(json.loads(result.converted)["cells"][0])
    # `!echo {x}` hands x to the shell line: the write into x is left, and said why
    assert "files = !ls\n" in new and "!echo {x}\n" in new and "x[0] = 1.0\n" in new
    assert "t = %timeit -o np.sum(x)" in new and "import numpy as np" in new
    (finding,) = [f for f in result.findings if f.code == "NJ201"]
    assert (finding.cell, finding.line) == (1, 5) and "!echo {x}" in finding.message


def test_unchanged_notebooks_are_not_rewritten(tmp_path):
    no_numpy = {"cells": [code("print(1)", 1)], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    nothing_to_do = {"cells": [code("import numpy as np\nn = 3", 1)],
                     "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    markdown_only = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "np.sum"}],
                     "metadata": {}, "nbformat": 4, "nbformat_minor": 4}
    paths = []
    for name, notebook in (("a", no_numpy), ("b", nothing_to_do), ("c", markdown_only)):
        path = tmp_path / "src" / f"{name}.ipynb"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(notebook, indent=2, sort_keys=True))  # another style
        paths.append(path)
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in paths}
    result = invoke("convert", tmp_path / "src", "--in-place")
    assert result.exit_code in (0, 1), result.output
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in paths} == before
    result = invoke("convert", tmp_path / "src", "--out", tmp_path / "out")
    for path in paths:
        assert (tmp_path / "out" / path.name).read_bytes() == path.read_bytes()


def test_a_changed_notebook_keeps_its_json_style(tmp_path):
    notebook = {"cells": [code("import numpy as np\nv = np.sum([1, 2])  # é", 1)],
                "metadata": {"z": 1, "a": 2}, "nbformat": 4, "nbformat_minor": 2}
    path = tmp_path / "styled.ipynb"
    path.write_text(json.dumps(notebook, indent=2))  # ASCII escapes, no final newline
    assert invoke("convert", path, "--in-place").exit_code == 0
    text = path.read_text()
    expected = json.loads(text)
    assert text == json.dumps(expected, indent=2) and "\\u00e9" in text
    assert list(expected["metadata"]) == ["z", "a"]  # key order kept
    assert source(expected["cells"][0]) == X64_IMPORTS + "\nv = jnp.sum(jnp.array([1, 2]))  # é"


def test_diff_out_and_discovery(tmp_path):
    src = tmp_path / "src"
    write(src / "heat.ipynb", realistic())
    write(src / ".ipynb_checkpoints" / "heat-checkpoint.ipynb", realistic())
    (src / "mod.py").write_text("import numpy as np\nv = np.sum([1, 2])\n")
    (src / "data.txt").write_text("data")
    before = (src / "heat.ipynb").read_bytes()
    result = invoke("convert", src, "--diff")
    assert result.exit_code == 0, result.output
    assert f"--- a/{src / 'heat.ipynb'}:cell 3\n+++ b/{src / 'heat.ipynb'}:cell 3\n" in result.output
    assert "-x = np.zeros(4)\n-scale = np.sum([1.0, 2.0])\n+x = jnp.zeros(4)\n" in result.output
    assert '"execution_count"' not in result.output  # cell sources, not the JSON
    assert "checkpoint" not in result.output
    assert (src / "heat.ipynb").read_bytes() == before
    result = invoke("convert", src, "--out", tmp_path / "out", "--copy-other")
    assert result.exit_code == 0, result.output
    written = json.loads((tmp_path / "out" / "heat.ipynb").read_text(encoding="utf-8"))
    assert "jnp.zeros" in source(written["cells"][2])
    assert (tmp_path / "out" / "data.txt").exists() and (tmp_path / "out" / "mod.py").exists()
    assert not (tmp_path / "out" / ".ipynb_checkpoints").exists()


def test_verify_skips_notebooks_with_a_note(tmp_path):
    path = write(tmp_path / "src" / "heat.ipynb", realistic())
    result = invoke("convert", path.parent, "--out", tmp_path / "out", "--verify")
    assert result.exit_code == 0, result.output
    assert f"note: {path}: notebooks are not verified" in result.output


@pytest.mark.parametrize("mode", ["check", "convert"])
def test_a_syntax_error_names_the_cell(tmp_path, mode):
    notebook = realistic()
    notebook["cells"][3]["source"] = ["x[0] = 1.0\n", "def broken(:\n", "    pass"]
    bad = write(tmp_path / "src" / "bad.ipynb", notebook)
    good = write(tmp_path / "src" / "good.ipynb", realistic())
    data = bad.read_bytes()
    args = ["check"] if mode == "check" else ["convert", "--in-place"]
    result = invoke(args[0], tmp_path / "src", *args[1:])
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert errors == [f"error: {bad}:cell 4:2: syntax error: invalid syntax"]
    assert bad.read_bytes() == data
    if mode == "convert":
        assert "jnp.zeros" in good.read_text(encoding="utf-8")
    else:
        assert f"{good}:cell 3:2:16: NJ110" in result.output


@pytest.mark.parametrize("text, words", [
    ('{"cells": [', "invalid notebook JSON: Expecting value"),
    ('[1, 2]', "not a Jupyter notebook"),
    ('{"cells": [{"cell_type": "code", "source": 3}], "nbformat": 4}', "cell 1: not a notebook cell"),
])
def test_a_broken_notebook_is_one_error(text, words):
    with pytest.raises(SourceError) as raised:
        convert_source(text, path="nb.ipynb")
    assert words in str(raised.value) and str(raised.value).startswith("nb.ipynb")
    assert "\n" not in str(raised.value)


def test_the_api_checks_notebooks_by_path():
    text = json.dumps({"cells": [code("import numpy as np\nx = np.zeros(2)\ny = x\nx[0] = 1", 1)],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    (finding,) = check_source(text, path="nb.ipynb")
    assert (finding.code, finding.cell, finding.line, finding.col) == ("NJ201", 1, 4, 1)
    assert finding.format().startswith("nb.ipynb:cell 1:4:1: NJ201 ")


def test_a_notebook_of_another_language_is_left_alone():
    text = json.dumps({"cells": [code("library(numpy)\nx <- np.zeros(3)", 1)],
                       "metadata": {"kernelspec": {"language": "R", "name": "ir"}},
                       "nbformat": 4, "nbformat_minor": 5})
    result = convert_source(text, path="r.ipynb")
    assert result.converted == text and not result.findings


def test_cells_of_other_cell_magics_are_kept_and_seen_as_uses():
    """A %%bash cell first: the imports go to the next cell, not above `%%bash`. A %%timeit
    cell runs code np2jax does not convert: the names it uses count as used there, so the
    write into `x` after it is left (with the reason), not rewritten behind its back, and
    `x` stays NumPy so that the write runs (a NumPy island)."""
    notebook = {"cells": [
        code("%%bash\necho start\n\necho more", 1),
        code("import numpy as np\nx = np.zeros(3)\nv = np.sum([1, 2])", 2),
        code("%%timeit\nx.sum()", 3),
        code("x[0] = 1.0", 4),
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    result = convert_source(json.dumps(notebook), path="nb.ipynb")
    cells = json.loads(result.converted)["cells"]
    assert [source(c) for c in cells] == [
        "%%bash\necho start\n\necho more",
        X64_IMPORTS + "\nimport numpy as np\nx = np.zeros(3)\nv = jnp.sum(jnp.array([1, 2]))",
        "%%timeit\nx.sum()", "x[0] = 1.0"]
    assert (cells[0]["execution_count"], cells[2]["execution_count"]) == (1, 3)  # not cleared
    (finding,) = [f for f in result.findings if f.code == "NJ201"]
    assert (finding.cell, finding.line) == (4, 1) and "%%timeit" in finding.message
    assert finding.message.endswith("`x` stays NumPy so that it runs (`np.zeros` kept).")


def test_a_notebook_calls_a_function_of_the_tree_rewritten_to_return_its_argument(tmp_path):
    """NJ209 across the tree: the module's function returns its argument and the
    notebook's call assigns the result, both or neither."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "ops.py").write_text("import numpy as np\n\n\ndef normalize(p):\n    p /= p.sum()\n")
    write(src / "use.ipynb", {"cells": [
        code("import numpy as np\nfrom ops import normalize", 1),
        code("p = np.ones(4)\nnormalize(p)\ntotal = float(p.sum())", 2),
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    result = invoke("convert", src, "--in-place")
    assert result.exit_code == 0, result.output
    assert "    return p\n" in (src / "ops.py").read_text()
    cells = json.loads((src / "use.ipynb").read_text())["cells"]
    assert source(cells[1]) == "p = jnp.ones(4)\np = normalize(p)\ntotal = float(p.sum())"
