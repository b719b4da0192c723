"""The command line: exit codes, output formats, configuration, and what gets written."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from np2jax.catalog import rule_docs
from np2jax.cli import app

from helpers import X64_IMPORTS

runner = CliRunner()
INPLACE = "import numpy as np\nx = np.zeros(3)\nx[0] = 1.0\n"  # convert fixes it; check reports it
LEFT = "import numpy as np\ndef f(x):\n    x[0] = 1.0\n    return x\n"  # into a parameter: left, reported
CLEAN = "import numpy as np\ny = np.sum([1, 2])\n"  # list argument: fixable
RENAMES_ONLY = "import numpy as np\ny = np.sum(np.ones(2))\n"


def invoke(*args, cwd: Path | None = None):
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return runner.invoke(app, [str(a) for a in args])
    finally:
        os.chdir(old)


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)
    return path


def test_check_exits_1_and_names_the_code(tmp_path):
    source = write(tmp_path / "a.py", INPLACE)
    result = invoke("check", source)
    assert result.exit_code == 1
    assert f"{source}:3:1: NJ201 " in result.output


def test_check_exits_0_when_only_renames_are_needed(tmp_path):
    result = invoke("check", write(tmp_path / "a.py", RENAMES_ONLY))
    assert result.exit_code == 0, result.output
    assert "NJ" not in result.output.split("np2jax check")[0]


def test_check_show_fixes_lists_the_rewrites(tmp_path):
    result = invoke("check", write(tmp_path / "a.py", CLEAN), "--show-fixes")
    assert "NJ101" in result.output and "NJ110" in result.output


def test_check_json_format(tmp_path):
    source = write(tmp_path / "a.py", INPLACE)
    result = invoke("check", source, "--format", "json")
    payload = json.loads(result.stdout)
    (finding,) = payload["findings"]
    assert set(finding) == {"path", "line", "col", "code", "name", "message", "severity", "fixable",
                            "cell", "fix"}  # fix: only a fixable finding's
    assert finding["cell"] is None  # a notebook's cell, counted from 1
    assert (finding["path"], finding["line"], finding["code"]) == (str(source), 3, "NJ201")
    assert finding["fixable"] is True and finding["severity"] == "error"
    assert finding["fix"]["edits"] == [{"content": "x = x.at[0].set(1.0)",
                                        "location": {"row": 3, "column": 1},
                                        "end_location": {"row": 3, "column": 11}}]
    left = json.loads(invoke("check", write(tmp_path / "b.py", LEFT), "--format", "json").stdout)
    assert sorted((f["code"], f["fixable"]) for f in left["findings"]) == [("NJ201", False), ("NJ209", False)]
    assert not any("fix" in f for f in left["findings"])


def test_check_exits_2_on_unparsable_files_and_still_checks_the_rest(tmp_path):
    write(tmp_path / "bad.py", "import numpy as np\nx = (\n")
    write(tmp_path / "good.py", INPLACE)
    result = invoke("check", tmp_path)
    assert result.exit_code == 2
    assert "bad.py:" in result.output and "syntax error" in result.output
    assert "good.py:3:1: NJ201" in result.output


def test_usage_errors_exit_2(tmp_path):
    assert invoke("check").exit_code == 2
    assert invoke("check", tmp_path / "missing.py").exit_code == 2
    assert invoke("convert", write(tmp_path / "a.py", CLEAN)).exit_code == 2  # no mode
    assert invoke("rule", "NJ999").exit_code == 2


def test_select_and_ignore(tmp_path):
    source = write(tmp_path / "a.py", INPLACE + "y = np.zeros(3, dtype=np.float64)\n")
    assert "NJ401" in invoke("check", source, "--x32").output  # NJ401 is the 32-bit mode's
    only = invoke("check", source, "--x32", "--select", "NJ4")
    assert "NJ401" in only.output and "NJ201 " not in only.output
    assert invoke("check", source, "--x32", "--ignore", "NJ201,NJ401").exit_code == 0


def test_config_from_nearest_pyproject_and_flags_override(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.np2jax]\nignore = ["NJ201"]\nexclude = ["skip_*.py"]\n')
    write(tmp_path / "pkg" / "a.py", INPLACE)
    write(tmp_path / "pkg" / "skip_me.py", INPLACE)
    assert invoke("check", tmp_path / "pkg").exit_code == 0
    result = invoke("check", tmp_path / "pkg", "--ignore", "NJ4")
    assert result.exit_code == 1 and "a.py:3:1: NJ201" in result.output
    assert "skip_me" not in result.output


def test_bad_config_is_one_clear_line(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.np2jax]\nselct = ["NJ2"]\n')
    result = invoke("check", write(tmp_path / "a.py", CLEAN))
    assert result.exit_code == 2
    assert "pyproject.toml: unknown key(s) in [tool.np2jax]: selct" in result.output


def test_rule_lists_every_rule_and_prints_one(tmp_path):
    listing = invoke("rule").output
    for code in rule_docs():
        assert code in listing
    doc = invoke("rule", "NJ201").output
    for heading in ("What it does", "Why", "Example", "Converted form", "Fix safety",
                    "What it does not convert"):
        assert heading in doc
    assert invoke("rule", "subscript-assignment").output == doc


def test_convert_out_keeps_relative_paths_and_skips_other_files(tmp_path):
    write(tmp_path / "src" / "pkg" / "a.py", CLEAN)
    write(tmp_path / "src" / "b.py", "print('no numpy here')\n")
    write(tmp_path / "src" / "data.txt", "x")
    out = tmp_path / "out"
    result = invoke("convert", tmp_path / "src", "--out", out)
    assert result.exit_code == 0, result.output
    assert (out / "pkg" / "a.py").read_text() == X64_IMPORTS + "\ny = jnp.sum(jnp.array([1, 2]))\n"
    assert (out / "b.py").read_text() == "print('no numpy here')\n"
    assert not (out / "data.txt").exists()
    invoke("convert", tmp_path / "src", "--out", out, "--copy-other")
    assert (out / "data.txt").read_text() == "x"
    assert "files converted" in result.output


def test_convert_single_file_goes_to_out_slash_name(tmp_path):
    source = write(tmp_path / "deep" / "one.py", CLEAN)
    invoke("convert", source, "--out", tmp_path / "out")
    assert (tmp_path / "out" / "one.py").exists()


def test_convert_diff_writes_nothing(tmp_path):
    source = write(tmp_path / "a.py", CLEAN)
    result = invoke("convert", source, "--diff")
    assert "-y = np.sum([1, 2])" in result.output and "+y = jnp.sum(jnp.array([1, 2]))" in result.output
    assert source.read_text() == CLEAN
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py"]


def test_convert_in_place_rewrites_and_keeps_mode(tmp_path):
    source = write(tmp_path / "a.py", CLEAN)
    source.chmod(0o751)
    result = invoke("convert", source, "--in-place")
    assert result.exit_code == 0
    assert "jnp.sum" in source.read_text()
    assert stat.S_IMODE(source.stat().st_mode) == 0o751
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py"]  # no temporary files left


def test_convert_refuses_out_inside_the_input_tree(tmp_path):
    write(tmp_path / "a.py", CLEAN)
    result = invoke("convert", tmp_path, "--out", tmp_path / "converted")
    assert result.exit_code == 2 and "inside the input tree" in result.output


def test_convert_json_has_changes_findings_and_summary(tmp_path):
    source = write(tmp_path / "a.py", INPLACE + LEFT.split("\n", 1)[1])
    payload = json.loads(invoke("convert", source, "--diff", "--format", "json").stdout)
    assert sorted(f["code"] for f in payload["findings"]) == ["NJ201", "NJ209"]
    assert {c["code"] for c in payload["changes"]} == {"NJ101", "NJ201"}
    assert payload["summary"] == {"converted": 1, "unchanged": 0, "failed": 0}


@pytest.mark.parametrize("encoded, encoding", [
    ("# -*- coding: latin-1 -*-\nimport numpy as np\nname = 'café'\ny = np.sum([1, 2])\n", "latin-1"),
    ("\ufeffimport numpy as np\ny = np.sum([1, 2])\n", "utf-8"),
    ("import numpy as np\r\ny = np.sum([1, 2])\r\nz = np.ones(2)\r\n", "utf-8"),
])
def test_encodings_boms_and_line_endings_are_kept(tmp_path, encoded, encoding):
    source = write(tmp_path / "a.py", encoded.encode(encoding))
    assert invoke("convert", source, "--in-place").exit_code == 0
    data = source.read_bytes()
    text = data.decode(encoding)
    assert "jnp.sum(jnp.array([1, 2]))" in text
    assert text.startswith("\ufeff") == encoded.startswith("\ufeff")
    assert ("café" in text) == ("café" in encoded)
    assert data.count(b"\r\n") == data.count(b"\n") if "\r\n" in encoded else b"\r" not in data


def test_undecodable_and_binary_files_fail_alone_and_are_left_untouched(tmp_path):
    bad = write(tmp_path / "bad.py", b"import numpy as np\nx = '\xff\xfe'\n")
    binary = write(tmp_path / "bin.py", b"\x00\x01numpy")
    good = write(tmp_path / "good.py", CLEAN)
    result = invoke("convert", tmp_path, "--in-place")
    assert result.exit_code == 2
    assert "bad.py:2: cannot decode as utf-8" in result.output
    assert "bin.py: binary file" in result.output
    assert bad.read_bytes() == b"import numpy as np\nx = '\xff\xfe'\n"
    assert binary.read_bytes() == b"\x00\x01numpy"
    assert "jnp" in good.read_text()


def test_check_does_not_import_jax(tmp_path):
    source = write(tmp_path / "a.py", INPLACE)
    probe = ("import sys, atexit\n"
             "atexit.register(lambda: print('JAX_LOADED' if 'jax' in sys.modules else 'NO_JAX'))\n"
             "from np2jax.cli import main\nsys.argv = ['np2jax', 'check', sys.argv[1]]\nmain()\n")
    result = subprocess.run([sys.executable, "-c", probe, str(source)], capture_output=True, text=True)
    assert result.returncode == 1, result.stderr
    assert "NJ201" in result.stdout and "NO_JAX" in result.stdout


def test_two_roots_mapping_to_the_same_output_path_do_not_overwrite(tmp_path):
    write(tmp_path / "a" / "x.py", CLEAN)
    write(tmp_path / "b" / "x.py", INPLACE)
    result = invoke("convert", tmp_path / "a", tmp_path / "b", "--out", tmp_path / "out")
    assert result.exit_code == 2
    assert "would overwrite" in result.output
    assert "jnp.sum" in (tmp_path / "out" / "x.py").read_text()


def test_in_place_leaves_symlinked_files_alone(tmp_path):
    target = write(tmp_path / "real.py", CLEAN)
    link = tmp_path / "tree" / "link.py"
    link.parent.mkdir()
    link.symlink_to(target)
    result = invoke("convert", tmp_path / "tree", "--in-place")
    assert result.exit_code == 2 and "symbolic link" in result.output
    assert link.is_symlink() and target.read_text() == CLEAN


def test_syntax_errors_are_placed_exactly(tmp_path):
    source = write(tmp_path / "bad.py", "import numpy as np\ndef f(:\n    pass\n")
    result = invoke("check", source)
    assert f"{source}:2: syntax error: invalid syntax" in result.output


def test_check_json_summary_counts_checked_files(tmp_path):
    payload = json.loads(invoke("check", write(tmp_path / "a.py", INPLACE), "--format", "json").stdout)
    assert payload["summary"] == {"checked": 1, "failed": 0}


def test_convert_diff_with_out_prints_the_diff_and_writes_the_tree(tmp_path):
    source = write(tmp_path / "src" / "a.py", CLEAN)
    result = invoke("convert", tmp_path / "src", "--out", tmp_path / "out", "--diff")
    assert "+y = jnp.sum(jnp.array([1, 2]))" in result.output
    assert (tmp_path / "out" / "a.py").read_text().startswith(X64_IMPORTS)
    assert source.read_text() == CLEAN
    assert invoke("convert", source, "--in-place", "--diff").exit_code == 2


@pytest.mark.parametrize("command", [[], ["convert"], ["check"], ["verify"], ["rule"]],
                         ids=lambda c: " ".join(c) or "np2jax")
def test_h_is_help_on_every_command(command):
    short, long = invoke(*command, "-h"), invoke(*command, "--help")
    assert short.exit_code == long.exit_code == 0
    assert "Usage: np2jax" in short.output and short.output == long.output


def invoke_stdin(data: bytes, *args, cwd: Path | None = None):
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return runner.invoke(app, [str(a) for a in args], input=data)
    finally:
        os.chdir(old)


def test_convert_dash_reads_stdin_and_writes_the_result_to_stdout(tmp_path):
    source = INPLACE + LEFT.split("\n", 1)[1]
    (tmp_path / "cwd").mkdir()
    result = invoke_stdin(source.encode(), "convert", "-", cwd=tmp_path / "cwd")
    assert result.exit_code == 1  # LEFT's write into a parameter is left for you
    assert list((tmp_path / "cwd").iterdir()) == []  # nothing written
    invoke("convert", write(tmp_path / "a.py", source), "--out", tmp_path / "out")
    assert result.stdout == (tmp_path / "out" / "a.py").read_text()  # the same conversion
    assert "-:5:5: NJ201 " in result.stderr and "np2jax convert" in result.stderr
    assert "converted tree written" not in result.output


def test_convert_dash_keeps_the_encoding_and_gives_back_what_it_cannot_convert(tmp_path):
    latin = "# -*- coding: latin-1 -*-\nimport numpy as np\nname = 'café'\ny = np.sum([1, 2])\n"
    result = invoke_stdin(latin.encode("latin-1"), "convert", "-", "-q")
    assert result.exit_code == 0
    assert result.stdout_bytes.decode("latin-1") == latin.replace(
        "import numpy as np\n", X64_IMPORTS + "\n").replace(
        "np.sum([1, 2])", "jnp.sum(jnp.array([1, 2]))")
    broken = b"import numpy as np\nx = (\n"
    failed = invoke_stdin(broken, "convert", "-", "--stdin-filename", "pkg/mod.py")
    assert failed.exit_code == 2 and failed.stdout_bytes == broken
    assert "error: pkg/mod.py:2: syntax error" in failed.stderr


def test_convert_dash_diff_and_json(tmp_path):
    diff = invoke_stdin(CLEAN.encode(), "convert", "-", "--diff", "-q")
    assert diff.exit_code == 0
    assert diff.stdout.startswith("--- a/-\n+++ b/-\n") and "+y = jnp.sum(jnp.array([1, 2]))" in diff.stdout
    report = invoke_stdin(INPLACE.encode(), "convert", "-", "--format", "json")
    assert report.stdout.startswith(X64_IMPORTS)
    assert json.loads(report.stderr)["summary"] == {"converted": 1, "unchanged": 0, "failed": 0}


def test_check_dash_reports_stdin_under_its_name(tmp_path):
    plain = invoke_stdin(INPLACE.encode(), "check", "-")
    assert plain.exit_code == 1 and plain.stdout.startswith("-:3:1: NJ201 ")
    named = invoke_stdin(INPLACE.encode(), "check", "--stdin-filename", "src/model.py",
                         "--format", "json")
    assert [f["path"] for f in json.loads(named.stdout)["findings"]] == ["src/model.py"]
    # the configuration is the one of the named file's folder, even if the file is not there
    write(tmp_path / "pyproject.toml", '[tool.np2jax]\nignore = ["NJ201"]\n')
    (tmp_path / "src").mkdir()
    assert invoke_stdin(INPLACE.encode(), "check", "-", "--stdin-filename", "src/new.py",
                        cwd=tmp_path).exit_code == 0


@pytest.mark.parametrize("args, problem", [
    (["check", "-", "a.py"], "cannot be combined"),
    (["check", "a.py", "--stdin-filename", "x.py"], "give - as the path"),
    (["check"], "give the files or folders"),
    (["convert", "-", "--out", "out"], "--out, --in-place"),
    (["convert", "-", "--in-place"], "--out, --in-place"),
])
def test_stdin_usage_errors(tmp_path, args, problem):
    write(tmp_path / "a.py", CLEAN)
    result = invoke_stdin(CLEAN.encode(), *args, cwd=tmp_path)
    assert result.exit_code == 2 and problem in result.output
    assert not (tmp_path / "out").exists()


def test_statistics_count_each_rule_once(tmp_path):
    for i in range(3):
        write(tmp_path / f"m{i}.py", INPLACE + LEFT.split("\n", 1)[1] + "y = np.sum([1, 2])\n")
    result = invoke("check", tmp_path, "--statistics")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "6\tNJ201\t[-] subscript-assignment",  # 3 rewritten by convert, 3 left
        "3\tNJ110\t[*] list-as-array-argument",
        "3\tNJ209\t[ ] mutated-argument",
        "12 finding(s), 6 fixable (`np2jax convert` rewrites them)",
    ]
    rows = json.loads(invoke("check", tmp_path, "--statistics", "--format", "json").stdout)
    assert rows[0] == {"code": "NJ201", "name": "subscript-assignment", "count": 6,
                       "fixable": False, "fixable_count": 3}
    assert [r["code"] for r in rows] == ["NJ201", "NJ110", "NJ209"]
    assert invoke("check", tmp_path, "--statistics", "-q").stdout.count("\n") == 3
    assert invoke("check", tmp_path, "--statistics", "--format", "sarif").exit_code == 2


def test_exit_zero_keeps_findings_from_failing_but_not_errors(tmp_path):
    source = write(tmp_path / "a.py", LEFT)
    assert invoke("check", source).exit_code == 1
    zero = invoke("check", source, "--exit-zero")
    assert zero.exit_code == 0 and "NJ201" in zero.stdout
    assert invoke("convert", source, "--diff", "--exit-zero").exit_code == 0
    write(tmp_path / "bad.py", "import numpy as np\nx = (\n")
    assert invoke("check", tmp_path, "--exit-zero").exit_code == 2


@pytest.mark.parametrize("comment, silenced", [
    ("# noqa: NJ201", True),
    ("# NOQA:NJ2", True),  # a prefix, as in ignore[NJ2]
    ("# noqa: E501, NJ201", True),
    ("# noqa", True),  # bare: every rule, as in ruff
    ("# noqa: E501", False),  # another linter's code
    ("# noqa:", False),  # no code: ruff's invalid directive, silences nothing
    ("# np2jax: ignore[NJ201]", True),
])
def test_noqa_is_honoured_like_np2jax_ignore(tmp_path, comment, silenced):
    source = write(tmp_path / "a.py", LEFT.replace("x[0] = 1.0", f"x[0] = 1.0  {comment}"))
    check = invoke("check", source)
    assert ("NJ201" in check.stdout) != silenced
    inplace = write(tmp_path / "b.py", INPLACE.replace("x[0] = 1.0", f"x[0] = 1.0  {comment}"))
    converted = invoke("convert", inplace, "--diff", "-q").stdout
    assert ("x.at[0]" in converted) != silenced  # a silenced fix is not applied either


def _help(*command: str, columns: int) -> str:
    """`np2jax COMMAND --help` as rich renders it `columns` wide, without colour."""
    result = runner.invoke(app, [*command, "--help"],
                           env={"COLUMNS": str(columns), "FORCE_COLOR": None, "NO_COLOR": "1",
                                "TERM": "dumb"})
    assert result.exit_code == 0
    return result.stdout


def _panel(text: str, title: str) -> list[str]:
    """The rows of a help panel (`╭─ Options ─...`), without the borders."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"╭─ {title} "))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("╰"))
    return [line.strip("│").rstrip() for line in lines[start + 1:end]]


COMMANDS = ("convert", "check", "verify", "prove", "rule")


def test_help_texts_have_no_hard_line_breaks():
    """At 250 columns every help text fits on one line: a line break written into one (a
    docstring's) would still break it mid-sentence."""
    assert len(_panel(_help(columns=250), "Commands")) == len(COMMANDS)
    for command in COMMANDS:
        for row in _panel(_help(command, columns=250), "Options"):
            assert row.lstrip().startswith("-"), (command, row)  # no continuation line


def test_help_keeps_a_readable_column_at_80_columns():
    for command in ("convert", "check"):
        (row,) = [r for r in _panel(_help(command, columns=80), "Options") if "--format" in r]
        assert row.index("text (the default)") <= 40  # short metavars leave the help its room


def test_check_help_documents_only_what_check_does():
    text = " ".join(_help("check", columns=250).split())
    assert "--diff" not in text and "converted programs" not in text
    assert "NJ401" in text and "--statistics" in text and "--exit-zero" in text
    assert "--diff" in _help("convert", columns=250)


def test_converted_tree_written_only_when_something_was(tmp_path):
    out = tmp_path / "out"
    missing = invoke("convert", tmp_path / "missing.py", "--out", out)
    binary = invoke("convert", write(tmp_path / "bin.py", b"\x00\x01numpy"), "--out", out)
    for result in (missing, binary):
        assert result.exit_code == 2 and "converted tree written" not in result.output
    assert not out.exists()
    good = invoke("convert", write(tmp_path / "a.py", CLEAN), "--out", out)
    assert f"converted tree written to {out}" in good.stdout


def test_convert_html_says_where_the_report_went(tmp_path):
    source = write(tmp_path / "a.py", CLEAN)
    report = tmp_path / "report.html"
    text = invoke("convert", source, "--diff", "--html", report)
    assert text.stdout.splitlines()[-1] == f"HTML report written to {report}" and report.exists()
    machine = invoke("convert", source, "--diff", "--html", report, "--format", "json")
    assert json.loads(machine.stdout)["summary"]["converted"] == 1  # stdout stays JSON
    assert f"HTML report written to {report}" in machine.stderr
    piped = invoke_stdin(CLEAN.encode(), "convert", "-", "--html", report)
    assert piped.stdout.startswith(X64_IMPORTS) and "HTML report" in piped.stderr
    (tmp_path / "taken").mkdir()
    failed = invoke("convert", source, "--diff", "--html", tmp_path / "taken")
    assert failed.exit_code == 2 and "HTML report written" not in failed.output
    assert "HTML report written" not in invoke("convert", source, "--diff", "--html", report,
                                               "-q").output


def test_check_reports_nothing_on_code_already_jax(tmp_path):
    """A module importing both NumPy and jax.numpy (issue 20): `jnp.clip(x, 0.0, 1.0)` is no
    NJ204 (`out` is NumPy's), `k /= jnp.sum(k)` of a fresh `jnp.ones` no NJ203; check says
    nothing and exits 0, and convert leaves the JAX code as it is."""
    source = write(tmp_path / "a.py", "import numpy as np\nimport jax.numpy as jnp\n\n"
                   "x = jnp.linspace(0.0, 2.0, 5)\ny = jnp.clip(x, 0.0, 1.0)\n"
                   "k = jnp.ones((5, 5))\nk /= jnp.sum(k)\nz = np.zeros(3)\n")
    check = invoke("check", source, "--no-cache")
    assert check.exit_code == 0, check.output
    assert "NJ2" not in check.output and "left for you" not in check.output
    convert = invoke("convert", source, "--diff", "--no-cache")
    assert "y = jnp.clip(x, 0.0, 1.0)" in convert.stdout and "-k /= jnp.sum(k)" not in convert.stdout


def test_every_finding_is_one_line(tmp_path):
    """A finding on an expression spanning lines quotes it on one line (issue 20): in the
    text report every finding is one `path:line:col: CODE message` line, and its JSON
    message has no line break."""
    source = write(tmp_path / "a.py", "import numpy as np\nx = np.linspace(0.0, 4.0, 5)\n"
                   "levels = (x * 90.0\n          + 100.0\n"
                   "          + np.sin(x) * 30.0 + np.cos(x) * 12.5).astype(np.uint8)\n")
    text = invoke("check", source, "--no-cache", "--quiet")
    assert text.exit_code == 1
    lines = text.stdout.splitlines()
    assert lines and all(line.startswith(f"{source}:") for line in lines), lines
    assert any(": NJ403 `(x * 90.0 + 100.0" in line for line in lines), lines
    machine = json.loads(invoke("check", source, "--no-cache", "--format", "json").stdout)
    assert machine["findings"] and all("\n" not in f["message"] for f in machine["findings"])


def test_prove_devices_must_be_known_device_names(tmp_path):
    for command in (["prove", tmp_path, tmp_path, "--devices", "xpu"],
                    ["convert", tmp_path / "pkg", "--out", tmp_path / "out", "--prove",
                     "--prove-devices", "cpu,xpu"]):
        (tmp_path / "pkg").mkdir(exist_ok=True)
        result = invoke(*command, cwd=tmp_path)
        assert result.exit_code == 2, result.output
        assert "unknown device 'xpu'" in result.output
