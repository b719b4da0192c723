"""Reports of check and convert through the real CLI: text (colour, --quiet, progress bar),
JSON, SARIF 2.1.0 validated against the official schema, GitHub workflow annotations."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from np2jax.catalog import find_rule, rule_docs
from np2jax.cli import app
from np2jax.report.github import escape_data, escape_property

DATA = Path(__file__).parent / "data"
FIXABLE = "import numpy as np\nx = np.zeros(3)\nx[0] = 1.0\n"  # NJ201, convert rewrites it
# NJ201 at 4:1: b aliases a, left (a and b stay NumPy); the sum converts
LEFT = "import numpy as np\na = np.zeros(3)\nb = a\nb[0] = 1.0\ns = np.sum(a)\n"
BROKEN = "import numpy as np\ndef f(:\n    pass\n"  # a syntax error on line 2
ESC = "\x1b["
FORMATS = ("text", "json", "sarif", "github")
runner = CliRunner()


def invoke(*args, cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(app, [str(a) for a in args])
    finally:
        os.chdir(old)


def run_cli(*args, cwd: Path, **env) -> subprocess.CompletedProcess:
    """np2jax in a child process, its stdout and stderr pipes (not terminals); colour and
    terminal variables come only from `env`."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS")}
    return subprocess.run([sys.executable, "-m", "np2jax", *map(str, args)], cwd=cwd, check=False,
                          capture_output=True, text=True, env={**base, **env}, timeout=300)


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "fixable.py").write_text(FIXABLE)
    (tmp_path / "pkg" / "left.py").write_text(LEFT)
    return tmp_path


@pytest.fixture(scope="module")
def sarif_validator():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)


def assert_valid_sarif(validator, log: dict) -> None:
    problems = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
                for e in validator.iter_errors(log)]
    assert not problems, problems


# -- every format, both commands, exit codes unchanged -----------------------------------------

@pytest.mark.parametrize("output_format", FORMATS)
def test_check_exit_codes_are_the_same_in_every_format(tree, output_format):
    assert invoke("check", "pkg", "--format", output_format, cwd=tree).exit_code == 1
    (tree / "clean.py").write_text("import numpy as np\ny = np.sum(np.ones(2))\n")
    assert invoke("check", "clean.py", "--format", output_format, cwd=tree).exit_code == 0
    (tree / "broken.py").write_text(BROKEN)
    assert invoke("check", "pkg", "broken.py", "--format", output_format, cwd=tree).exit_code == 2


def test_check_text_prints_findings_then_the_summary(tree):
    result = invoke("check", "pkg", cwd=tree)
    lines = result.stdout.splitlines()
    assert lines[0] == f"{Path('pkg/fixable.py')}:3:1: NJ201 " + lines[0].split(" NJ201 ", 1)[1]
    assert any(line.startswith(f"{Path('pkg/left.py')}:4:1: NJ201 ") for line in lines)
    assert "np2jax check" in result.stdout
    assert "convert fixes: NJ201 subscript-assignment" in result.stdout
    assert "left for you: NJ201 subscript-assignment" in result.stdout


def test_check_json_keeps_its_keys(tree):
    payload = json.loads(invoke("check", "pkg", "--format", "json", cwd=tree).stdout)
    assert list(payload) == ["findings", "errors", "summary", "coverage"]
    assert {(f["path"], f["line"], f["col"], f["code"], f["fixable"]) for f in payload["findings"]} \
        == {(str(Path("pkg/fixable.py")), 3, 1, "NJ201", True),
            (str(Path("pkg/left.py")), 4, 1, "NJ201", False)}
    assert payload["summary"] == {"checked": 2, "failed": 0}


def test_convert_json_keeps_its_keys(tree):
    result = invoke("convert", "pkg", "--out", "out", "--format", "json", cwd=tree)
    payload = json.loads(result.stdout)
    assert list(payload) == ["findings", "errors", "changes", "summary", "written", "coverage"]
    assert [(f["path"], f["line"]) for f in payload["findings"]] == [(str(Path("pkg/left.py")), 4)]
    assert {c["code"] for c in payload["changes"]} >= {"NJ101", "NJ201"}
    assert payload["summary"] == {"converted": 2, "unchanged": 0, "failed": 0}
    assert sorted(payload["written"]) == [str(Path("out/fixable.py")), str(Path("out/left.py"))]


def test_convert_text_highlights_nothing_off_a_terminal_and_shows_the_diff(tree):
    result = invoke("convert", "pkg", "--diff", cwd=tree)
    assert result.exit_code == 1
    assert "+x = x.at[0].set(1.0)" in result.stdout and ESC not in result.stdout
    assert "rewritten: NJ201 subscript-assignment" in result.stdout
    assert "left for you: NJ201 subscript-assignment" in result.stdout


# -- SARIF ------------------------------------------------------------------------------------

def sarif(*args, cwd: Path) -> tuple[int, dict]:
    result = invoke(*args, "--format", "sarif", cwd=cwd)
    return result.exit_code, json.loads(result.stdout)


def test_check_sarif_is_valid_and_points_at_its_rules(tree, sarif_validator):
    code, log = sarif("check", "pkg", cwd=tree)
    assert code == 1
    assert_valid_sarif(sarif_validator, log)
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "np2jax"
    assert [rule["id"] for rule in driver["rules"]] == list(rule_docs())
    for rule in driver["rules"]:
        doc = rule_docs()[rule["id"]]
        assert rule["name"] == doc.name
        assert rule["shortDescription"]["text"] == doc.summary
        assert rule["help"]["markdown"] == doc.render_markdown()
        assert rule["defaultConfiguration"]["level"] == {"error": "error", "warning": "warning",
                                                         "info": "note"}[doc.severity]
    places = set()
    for result in run["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"] == "NJ201"
        assert result["level"] == "error"
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        places.add((physical["artifactLocation"]["uri"], physical["region"]["startLine"],
                    physical["region"]["startColumn"], result["properties"]["fixable"]))
    assert places == {("pkg/fixable.py", 3, 1, True), ("pkg/left.py", 4, 1, False)}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tree.resolve().as_uri() + "/"
    assert run["invocations"][0]["executionSuccessful"] is True


def test_sarif_links_follow_the_project_urls(tree, sarif_validator, monkeypatch):
    from np2jax.report import sarif as sarif_module

    urls = {"Homepage": "https://example.org/np2jax", "Documentation": "https://example.org/docs/"}
    monkeypatch.setattr(sarif_module, "project_urls", lambda: urls)
    _, log = sarif("check", "pkg", cwd=tree)
    assert_valid_sarif(sarif_validator, log)
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == "https://example.org/np2jax"
    rule = driver["rules"][list(rule_docs()).index("NJ201")]
    assert rule["helpUri"] == "https://example.org/docs/rules.md#nj201-subscript-assignment"
    monkeypatch.setattr(sarif_module, "project_urls", lambda: {"Homepage": "not a uri"})
    assert list(sarif_validator.iter_errors(sarif("check", "pkg", cwd=tree)[1]))


def test_sarif_uris_are_percent_encoded(tree, sarif_validator):
    (tree / "odd dir").mkdir()
    (tree / "odd dir" / "a,b:c.py").write_text(LEFT)
    code, log = sarif("check", "odd dir", cwd=tree)
    assert code == 1
    assert_valid_sarif(sarif_validator, log)
    [result] = log["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] \
        == "odd%20dir/a%2Cb%3Ac.py"


def test_sarif_reports_unprocessed_files_as_error_notifications(tree, sarif_validator):
    (tree / "broken.py").write_text(BROKEN)
    code, log = sarif("check", "pkg", "broken.py", cwd=tree)
    assert code == 2
    assert_valid_sarif(sarif_validator, log)
    invocation = log["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    [notification] = invocation["toolExecutionNotifications"]
    assert notification["level"] == "error" and "syntax error" in notification["message"]["text"]
    physical = notification["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "broken.py"
    assert physical["region"]["startLine"] == 2


def test_convert_sarif_lists_what_is_left_and_is_valid(tree, sarif_validator):
    code, log = sarif("convert", "pkg", "--diff", cwd=tree)
    assert code == 1
    assert_valid_sarif(sarif_validator, log)
    [result] = log["runs"][0]["results"]
    assert result["ruleId"] == "NJ201"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/left.py"


def test_sarif_paths_outside_the_working_directory_are_absolute_uris(tree, tmp_path_factory,
                                                                      sarif_validator):
    elsewhere = tmp_path_factory.mktemp("cwd")
    code, log = sarif("check", tree / "pkg", cwd=elsewhere)
    assert code == 1
    assert_valid_sarif(sarif_validator, log)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in log["runs"][0]["results"]}
    assert uris == {(tree / "pkg" / name).resolve().as_uri() for name in ("fixable.py", "left.py")}


def test_the_vendored_schema_rejects_a_broken_log(sarif_validator):
    """The validation can fail: a result without a message is not SARIF."""
    log = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "np2jax"}},
                                         "results": [{"ruleId": "NJ201"}]}]}
    assert list(sarif_validator.iter_errors(log))


def notebook(*sources: str) -> str:
    cells = [{"cell_type": "markdown", "id": "md", "metadata": {}, "source": "# title"}]
    cells += [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "execution_count": None,
               "outputs": [], "source": text} for i, text in enumerate(sources)]
    return json.dumps({"cells": cells, "metadata": {"language_info": {"name": "python"}},
                       "nbformat": 4, "nbformat_minor": 5})


def test_notebook_findings_name_their_cell_and_point_at_no_line_of_the_file(tmp_path,
                                                                           sarif_validator):
    """A notebook's line counts inside a cell: SARIF and GitHub get the cell in the message
    (and SARIF in the properties), no line of the .ipynb file."""
    (tmp_path / "nb.ipynb").write_text(notebook("import numpy as np\na = np.zeros(3)",
                                                "b = a\nb[0] = 1.0"))
    (tmp_path / "bad.ipynb").write_text(notebook("import numpy as np", "def f(:\n    pass"))
    code, log = sarif("check", "nb.ipynb", "bad.ipynb", cwd=tmp_path)
    assert code == 2
    assert_valid_sarif(sarif_validator, log)
    [result] = log["runs"][0]["results"]
    assert result["message"]["text"].startswith("cell 3, line 2, col 1: `b[0] = ...`")
    assert result["properties"] == {"fixable": False, "cell": 3, "line": 2, "col": 1}
    assert "region" not in result["locations"][0]["physicalLocation"]
    [notification] = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert notification["message"]["text"].startswith("cell 3, line 1: syntax error")
    lines = invoke("check", "nb.ipynb", "bad.ipynb", "--format", "github", cwd=tmp_path)\
        .stdout.splitlines()
    assert lines[0].startswith("::error file=nb.ipynb,title=NJ201 subscript-assignment::"
                               "cell 3, line 2, col 1: `b[0] = ...`")
    assert lines[1].startswith("::error file=bad.ipynb,title=np2jax%3A file not processed::"
                               "cell 3, line 1: syntax error")
    text = invoke("check", "nb.ipynb", "--quiet", cwd=tmp_path).stdout
    assert text.startswith("nb.ipynb:cell 3:2:1: NJ201 ")


# -- GitHub annotations -----------------------------------------------------------------------

def test_github_escaping_follows_the_workflow_command_rules():
    assert escape_data("100% done\r\nnext: a, b") == "100%25 done%0D%0Anext: a, b"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_check_github_prints_one_annotation_per_finding_and_error(tree):
    (tree / "odd,name:1.py").write_text(LEFT)
    (tree / "broken.py").write_text(BROKEN)
    result = invoke("check", "odd,name:1.py", "pkg", "broken.py", "--format", "github", cwd=tree)
    assert result.exit_code == 2
    lines = result.stdout.splitlines()
    assert len(lines) == 4
    assert lines[0].startswith("::error file=odd%2Cname%3A1.py,line=4,col=1,"
                               "title=NJ201 subscript-assignment::`b[0] = ...`")
    assert f"::error file={Path('pkg/fixable.py')},line=3,col=1,title=NJ201" in result.stdout
    assert "::error file=broken.py,line=2,title=np2jax%3A file not processed::syntax error" \
        in result.stdout


def test_github_levels_follow_severity(tree):
    (tree / "r.py").write_text("import numpy as np\nr = np.random.rand(3)\n")
    args = ("convert", "pkg", "r.py", "--diff", "--format")
    findings = json.loads(invoke(*args, "json", cwd=tree).stdout)["findings"]
    lines = invoke(*args, "github", cwd=tree).stdout.splitlines()
    levels = {"error": "error", "warning": "warning", "info": "notice"}
    assert len(lines) == len(findings) >= 2
    assert {f["severity"] for f in findings} >= {"error", "info"}
    for finding, line in zip(findings, lines):
        assert line.startswith(f"::{levels[finding['severity']]} file={finding['path']},"
                               f"line={finding['line']},col={finding['col']},"
                               f"title={finding['code']} {finding['name']}::")


# -- terminal: colour, NO_COLOR, --quiet, progress --------------------------------------------

def test_colour_only_on_a_terminal_and_never_under_no_color(tree):
    piped = run_cli("check", "pkg", cwd=tree)
    forced = run_cli("check", "pkg", cwd=tree, FORCE_COLOR="1")
    no_color = run_cli("check", "pkg", cwd=tree, FORCE_COLOR="1", NO_COLOR="1")
    assert piped.returncode == forced.returncode == no_color.returncode == 1
    assert ESC not in piped.stdout + piped.stderr
    assert ESC in forced.stdout
    assert ESC not in no_color.stdout
    assert "NJ201" in no_color.stdout and "np2jax check" in no_color.stdout


def test_diff_is_highlighted_on_a_colour_terminal_only(tree):
    forced = run_cli("convert", "pkg", "--diff", cwd=tree, FORCE_COLOR="1")
    no_color = run_cli("convert", "pkg", "--diff", cwd=tree, FORCE_COLOR="1", NO_COLOR="1")
    assert ESC in forced.stdout
    assert ESC not in no_color.stdout + no_color.stderr
    assert "+x = x.at[0].set(1.0)" in no_color.stdout


def test_quiet_prints_only_findings_errors_and_the_asked_diff(tree):
    (tree / "broken.py").write_text(BROKEN)
    check = invoke("check", "pkg", "broken.py", "--quiet", cwd=tree)
    assert check.exit_code == 2
    assert [line.split(":", 1)[0] for line in check.stdout.splitlines()] == \
        [str(Path("pkg/fixable.py")), str(Path("pkg/left.py"))]
    assert "error: broken.py:2: syntax error" in check.stderr
    convert = invoke("convert", "pkg", "--diff", "-q", cwd=tree)
    assert "+x = x.at[0].set(1.0)" in convert.stdout and "left.py:4:1: NJ201" in convert.stdout
    assert "np2jax convert" not in convert.stdout and "rewritten" not in convert.stdout
    written = invoke("convert", "pkg", "--out", "out", "-q", cwd=tree)
    assert written.stdout.splitlines() == [line for line in convert.stdout.splitlines()
                                           if "NJ201" in line]


def test_progress_bar_on_a_terminal_for_many_files_only(tmp_path):
    for i in range(7):
        (tmp_path / f"m{i}.py").write_text(FIXABLE)
    shown = run_cli("check", ".", cwd=tmp_path, FORCE_COLOR="1")
    assert "7/7" in shown.stderr
    assert "7/7" not in run_cli("check", ".", "--quiet", cwd=tmp_path, FORCE_COLOR="1").stderr
    assert run_cli("check", ".", cwd=tmp_path).stderr == ""  # not a terminal
    few = tmp_path / "few"
    few.mkdir()
    (few / "a.py").write_text(FIXABLE)
    assert run_cli("check", "few", cwd=tmp_path, FORCE_COLOR="1").stderr == ""


# -- rule docs --------------------------------------------------------------------------------

def test_rule_doc_is_rich_markdown_on_a_terminal_and_plain_markdown_otherwise(tmp_path):
    doc = find_rule("NJ201")
    plain = run_cli("rule", "NJ201", cwd=tmp_path)
    assert plain.returncode == 0 and plain.stdout == doc.render_markdown()
    rendered = run_cli("rule", "NJ201", cwd=tmp_path, FORCE_COLOR="1", COLUMNS="100")
    assert rendered.returncode == 0 and ESC in rendered.stdout
    assert "## NJ201" not in rendered.stdout and "```" not in rendered.stdout
    assert "What it does" in rendered.stdout and "Converted form" in rendered.stdout


# -- convert --verify -------------------------------------------------------------------------

def test_convert_verify_in_sarif_and_quiet(tmp_path, sarif_validator):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "prog.py").write_text(
        "import numpy as np\n\ndef main():\n    return {'y': np.sin(np.linspace(0.0, 1.0, 5))}\n")
    code, log = sarif("convert", "src", "--out", "out", "--verify", cwd=tmp_path)
    assert code == 0
    assert_valid_sarif(sarif_validator, log)
    properties = log["runs"][0]["properties"]
    assert properties["verify"]["summary"] == {"equal": 1}
    assert properties["summary"]["verified equal"] == 1
    quiet = invoke("convert", "src", "--out", "out2", "--verify", "--quiet", cwd=tmp_path)
    assert quiet.exit_code == 0 and quiet.stdout == ""
