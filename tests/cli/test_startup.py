"""Start-up of `np2jax check`: a check of one file loads only what it uses (issue 8).

Each module below would cost every run from a few milliseconds (np2jax.rewrite) to a tenth
of a second (pydantic, which typer 0.29 loads for every parameter: pyproject.toml pins typer
below it).
"""

from __future__ import annotations

import pytest

from helpers import ROOT, modules_loaded
from np2jax.catalog import CatalogError, _rule_files, rule_doc, rule_docs
from np2jax.config import Config
from np2jax.pipeline import process

SOURCE = "import numpy as np\n\n\ndef main():\n    return np.sum([1, 2]) + np.ones(3)\n"

# The modules a check of SOURCE has no use for, and what uses them instead.
NOT_ON_THE_CHECK_PATH = {
    "jax": "converted programs and the verifier's child processes",
    "jaxlib": "converted programs",
    "numpy": "the verifier's child processes (the analysis reads rules/api/numpy_jax.json)",
    "pydantic": "typer>=0.29 only: pyproject.toml pins typer<0.29",
    "np2jax.rewrite": "convert",
    "np2jax.jit": "--jit",
    "np2jax.notebooks": ".ipynb files",
    "np2jax.verify": "verify and convert --verify",
    "np2jax.html_report": "convert --html",
    "np2jax.apigen": "regenerating rules/api/numpy_jax.json",
    "np2jax.apiproof": "regenerating rules/api/proven.json",
    "np2jax.report.sarif": "--format sarif",
    "markdown_it": "the HTML report and `np2jax rule CODE` on a terminal",
    "rich.syntax": "--diff on a colour terminal",
    "rich.markdown": "`np2jax rule CODE` on a terminal",
}

@pytest.mark.parametrize("output_format", ["text", "json", "github"])
def test_a_cold_check_of_one_file_loads_only_what_it_uses(tmp_path, output_format):
    source = tmp_path / "one.py"
    source.write_text(SOURCE)
    loaded, output = modules_loaded("check", "--no-cache", "--format", output_format, source)
    assert "NJ110" in output
    assert "libcst" in loaded and "np2jax.analysis" in loaded  # it did analyse the file
    unexpected = {name: why for name, why in NOT_ON_THE_CHECK_PATH.items()
                  if name in loaded or any(m.startswith(name + ".") for m in loaded)}
    assert not unexpected, f"check loaded modules it does not use (module: what needs it): {unexpected}"


@pytest.mark.parametrize("args", [["--version"], ["rule", "--markdown"]], ids=" ".join)
def test_commands_that_print_plain_text_load_neither_the_engine_nor_rich(args):
    loaded, output = modules_loaded(*args)
    assert output.startswith(("np2jax 0", "# Rule reference"))
    assert not {"libcst", "np2jax.api", "np2jax.pipeline", "np2jax.report", "rich", "pydantic"} & loaded


def test_a_check_parses_the_catalog_files_of_the_rules_that_report_only():
    rule_doc.cache_clear()
    rule_docs.cache_clear()
    result = process(SOURCE, Config(), rewrite=False)  # what `check` runs on each file
    reported = result.findings + result.changes
    assert {f.code for f in reported} == {"NJ101", "NJ110"}
    assert rule_doc.cache_info().currsize == 2
    # the lazily parsed docs are the catalog's
    assert all(rule_doc(code) is rule_docs()[code] for code in _rule_files())
    assert all((f.name, f.severity) == (rule_doc(f.code).name, rule_doc(f.code).severity)
               for f in reported)


def test_a_rule_file_must_be_named_after_its_code_and_name(tmp_path, monkeypatch):
    text = (ROOT / "rules" / "NJ101_numpy-reference.toml").read_text()
    (tmp_path / "NJ101_numpy-reference.toml").write_text(text)
    (tmp_path / "NJ102_copied-by-mistake.toml").write_text(text)  # says code = "NJ101"
    monkeypatch.setattr("np2jax.catalog.catalog_dir", lambda: tmp_path)
    for cached in (_rule_files, rule_doc, rule_docs):
        cached.cache_clear()
    try:
        assert set(_rule_files()) == {"NJ101", "NJ102"}
        assert rule_doc("NJ101").name == "numpy-reference"
        with pytest.raises(CatalogError, match="NJ102_copied-by-mistake.toml: must be named "
                                               "NJ101_numpy-reference.toml"):
            rule_doc("NJ102")
        (tmp_path / "NJ101_again.toml").write_text(text)
        _rule_files.cache_clear()
        with pytest.raises(CatalogError, match="the same code"):
            _rule_files()
    finally:
        for cached in (_rule_files, rule_doc, rule_docs):
            cached.cache_clear()
