"""Fixtures: fixtures/<rule-name>/<case>.in.py -> <case>.out.py, found by glob.

Each pair is checked three ways: the conversion gives exactly the .out.py text and the
findings its `# expect:` header lists; converting the .out.py again changes nothing; and
both run: the .in.py under NumPy and the .out.py under JAX give equal results, with NumPy's
dtypes (64-bit types, the default), when the header says `# verdict: equal` (the default),
and do not when it says `# verdict: fails` (`may-fail`: on some machines' math libraries)
(which is only allowed for a case that expects a finding: never silently wrong).

The converted side must also run clean: a FutureWarning or DeprecationWarning (JAX's notice that
a later release refuses the code, such as `.at[].set(2.5)` into an integer array) that the
.in.py did not raise under NumPy fails the case.

Outputs drawn from random numbers cannot agree exactly: a fixture names them in
`STOCHASTIC = {name: tolerance}` (as the verifier's programs do), and those are compared by
the verifier's statistics (moments within the tolerance, and a two-sample KS test over the
draws); every other output exactly. Fixtures whose conversion makes jax.random keys also run
twice under `jax_debug_key_reuse`: a key is never used twice, and the same seed gives the
same numbers run to run.
"""

from __future__ import annotations

import pytest

from helpers import FIXTURES, fixture_config, header, new_breaking_warnings, recording_breaking, run_main
from np2jax.api import convert_source
from np2jax.catalog import rule_docs
from np2jax.config import Config
from np2jax.verify.compare import compare_trees, compare_values

CASES = sorted(FIXTURES.glob("*/*.in.py"))
IDS = [f"{p.parent.name}/{p.name[:-6]}" for p in CASES]


def _out(case):
    return case.with_name(case.name[: -len(".in.py")] + ".out.py")


def _config(text: str) -> Config:
    return fixture_config(text)


def _expected_codes(text: str) -> list[str]:
    value = header(text, "expect") or ""
    return sorted(code.strip() for code in value.split(",") if code.strip())


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_conversion_text_and_findings(case):
    text = case.read_text()
    result = convert_source(text, _config(text), str(case))
    compile(result.converted, str(case), "exec")  # every output parses (output_parses: other modes)
    assert result.converted == _out(case).read_text()
    assert sorted(f.code for f in result.findings) == _expected_codes(text)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_conversion_is_idempotent(case):
    text = _out(case).read_text()
    assert convert_source(text, _config(case.read_text())).converted == text


def _run_both(case):
    """main() of the .in.py and of the .out.py; the converted one must raise no warning of
    what a later release refuses that the original did not raise."""
    reference, original = recording_breaking(lambda: run_main(case))
    converted, raised = recording_breaking(lambda: run_main(_out(case)))
    breaking = new_breaking_warnings(original, raised)
    assert not breaking, breaking
    return reference, converted


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_both_versions_run_and_agree(case):
    text = case.read_text()
    verdict = header(text, "verdict") or "equal"
    # may-fail: the difference the finding reports depends on the machine's math library
    # (XLA's cbrt is exact on some CPUs): both run, and their results are not asserted
    assert verdict in ("equal", "fails", "may-fail")
    if verdict == "equal":
        reference, converted = _run_both(case)
        stochastic = _stochastic(text)
        if stochastic:
            problems = [o.problem() or o.note for o in compare_trees(
                reference, converted, stochastic=stochastic) if not o.equal]
            assert not problems, problems
            return
        assert compare_values("main()", reference, converted) is None
        if _config(text).x64:
            assert not _dtype_changes(reference, converted)
        return
    reference = run_main(case)
    assert _expected_codes(text), "a case whose conversion fails must expect a finding"
    try:
        converted = run_main(_out(case))
    except Exception:  # noqa: BLE001 - JAX refusing the unconverted code is the point
        return
    if verdict == "fails":
        assert compare_values("main()", reference, converted) is not None, \
            "verdict says fails, but the converted program gives the same results"


# a Python number and NumPy's scalar of its default type are alike
_ALIKE = ({"float", "float64"}, {"int", "int64"}, {"complex", "complex128"})


def _dtype_changes(reference, converted) -> list[str]:
    """Outputs whose dtype the conversion changed: with 64-bit types (the default) the
    converted program keeps NumPy's dtypes, not only values within a tolerance."""
    return [f"{o.name}: {o.dtype_original} -> {o.dtype_converted}"
            for o in compare_trees(reference, converted, root="main()")
            if o.dtype_original and o.dtype_converted and o.dtype_original != o.dtype_converted
            and not any({o.dtype_original, o.dtype_converted} <= alike for alike in _ALIKE)]


def _stochastic(text: str) -> dict:
    """The fixture's STOCHASTIC dict (evaluated from its assignment, like the verifier)."""
    import ast

    tree = ast.parse(text)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "STOCHASTIC" for t in node.targets):
            names = {n.targets[0].id: ast.literal_eval(n.value) for n in tree.body
                     if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)
                     and isinstance(n.value, ast.Constant)}
            return eval(compile(ast.Expression(node.value), "<STOCHASTIC>", "eval"), names)
    return {}


KEYED = [c for c in CASES if "jax.random.split(" in _out(c).read_text()
         and "jax.random" not in c.read_text()]


@pytest.mark.parametrize("case", KEYED, ids=[f"{p.parent.name}/{p.name[:-6]}" for p in KEYED])
def test_converted_random_programs_are_deterministic_and_never_reuse_a_key(case):
    import jax

    previous = jax.config.jax_debug_key_reuse
    jax.config.update("jax_debug_key_reuse", True)
    try:
        first, second = run_main(_out(case)), run_main(_out(case))
    finally:
        jax.config.update("jax_debug_key_reuse", previous)
    assert compare_values("main()", first, second) is None


def test_every_rule_has_at_least_five_fixture_pairs():
    for doc in rule_docs().values():
        folder = FIXTURES / doc.name
        pairs = [p for p in folder.glob("*.in.py") if _out(p).exists()]
        assert len(pairs) >= 5, f"{doc.code} {doc.name}: {len(pairs)} fixture pairs in {folder}"


def test_every_fixture_folder_names_a_rule():
    names = {doc.name for doc in rule_docs().values()}
    assert {p.name for p in FIXTURES.iterdir() if p.is_dir()} <= names
