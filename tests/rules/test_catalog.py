"""The rule catalog: every rule is documented, implemented, and behaves as its cases say."""

from __future__ import annotations

import re

import pytest

from helpers import ROOT
from np2jax.api import convert_source as _convert_source
from np2jax.catalog import DOC_SECTIONS, rule_docs
from np2jax.rules.base import all_rules
from np2jax.cli import rules_reference
from np2jax.config import Config

DOCS = rule_docs()


def convert_source(text: str, code: str):
    """A rule's example and cases convert with the settings of its [config] table (the jit
    rules document what `--jit` does, NJ401 what the 32-bit mode reports)."""
    return _convert_source(text, Config(**dict(DOCS[code].config)))


def test_rules_are_discovered_from_the_catalog_and_the_checks_package():
    assert DOCS, "no rule files found in rules/"
    assert set(all_rules()) == set(DOCS)


@pytest.mark.parametrize("code", sorted(DOCS))
def test_rule_doc_is_complete(code):
    doc = DOCS[code]
    assert re.fullmatch(r"NJ\d{3}", doc.code)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", doc.name)
    for key, _title in DOC_SECTIONS:
        assert doc.doc[key].strip(), f"{code}: empty '{key}' section"
    assert doc.valid and doc.invalid, f"{code}: needs valid and invalid cases"
    assert len({d.name for d in DOCS.values()}) == len(DOCS)


VALID = [(code, case) for code, doc in sorted(DOCS.items()) for case in doc.valid]
INVALID = [(code, case) for code, doc in sorted(DOCS.items()) for case in doc.invalid]


@pytest.mark.parametrize("code, source", VALID, ids=[f"{c}-valid-{i}" for i, (c, _) in enumerate(VALID)])
def test_valid_cases_raise_nothing(code, source):
    result = convert_source(source, code)
    assert code not in {f.code for f in result.findings + result.changes}


@pytest.mark.parametrize("code, case", INVALID, ids=[f"{c}-invalid-{i}" for i, (c, _) in enumerate(INVALID)])
def test_invalid_cases_are_reported_and_fixed_as_documented(code, case):
    result = convert_source(case.code, code)
    if case.expected is not None:  # converted exactly as documented
        assert code in {c.code for c in result.changes}
        assert result.converted == case.expected
    else:  # reported, and left as it was
        assert code in {f.code for f in result.findings}


@pytest.mark.parametrize("code", [c for c, d in sorted(DOCS.items()) if d.fixable])
def test_fixable_rules_document_a_converted_case(code):
    assert any(case.expected is not None for case in DOCS[code].invalid)


def test_rules_reference_is_up_to_date():
    current = (ROOT / "docs" / "rules.md").read_text()
    assert current == rules_reference(), "docs/rules.md is stale: run `np2jax rule --markdown > docs/rules.md`"


@pytest.mark.parametrize("code", [c for c, d in sorted(DOCS.items()) if d.fixable])
def test_fixable_rule_doc_example_converts_to_its_documented_form(code):
    doc = DOCS[code].doc
    assert convert_source(doc["example"].lstrip("\n"), code).converted == doc["converted"].lstrip("\n")


@pytest.mark.parametrize("code", sorted(DOCS))
def test_documented_converted_form_is_what_the_tool_produces(code):
    doc = DOCS[code].doc
    documented = re.sub(r"  # reported:[^\n]*", "", doc["converted"].lstrip("\n"))
    assert convert_source(doc["example"].lstrip("\n"), code).converted == documented


@pytest.mark.parametrize("code", [c for c, d in sorted(DOCS.items())
                                  if d.fixable and "def main" in d.doc["example"]])
def test_fixable_rule_doc_example_runs_equal(code):
    """The documented example and its converted form compute the same results."""
    from np2jax.verify.compare import compare_values

    def run(source):
        namespace: dict = {}
        exec(compile(source, f"<{code}>", "exec"), namespace)
        return namespace["main"]()

    example = DOCS[code].doc["example"].lstrip("\n")
    assert compare_values("main()", run(example), run(convert_source(example, code).converted)) is None


def test_a_checkout_run_as_it_is_reads_its_own_rules_folder(monkeypatch):
    """`python -m np2jax` in the root of a checkout imports the checkout's package, which has
    no np2jax.rules.catalog (the wheel puts rules/ there): the catalog is rules/ beside it."""
    from importlib import resources

    from np2jax import catalog

    def missing(name):
        raise ModuleNotFoundError(f"No module named {name!r}")

    monkeypatch.setattr(resources, "files", missing)
    folder = catalog.catalog_dir()
    assert folder == ROOT / "rules"
    assert (folder / "api" / "numpy_jax.json").is_file()
