"""Functions kept on NumPy without being asked (NJ104): a finding in the body that says the
body needs NumPy arrays (a rule's `keeps-function` in its catalog entry: NJ404, NJ114,
NJ102's type checks) keeps the innermost function around it; and the prologue of a kept
function, which reads JAX arrays as NumPy arrays inside lists, tuples and dicts too
(np2jax.analysis.kept's helper). The fixtures (caught-index-error/extrapolated_lookup_kept,
array-scalar-as-python-value/json_record_helper_kept, kept-on-numpy/container_arguments)
run such conversions both ways."""

from __future__ import annotations

import textwrap
from collections import OrderedDict, defaultdict, namedtuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from np2jax.analysis.kept import HELPER, HELPER_CODE
from np2jax.api import Config, convert_paths, convert_source
from np2jax.catalog import rule_doc, rule_docs
from np2jax.rules.base import Rule, RuleContext, all_rules

LOOKUP = """
import numpy as np


def lookup(table, i):
    try:
        return table[i]{pragma}
    except IndexError:
        return table[-1] + (i - len(table) + 1)


def main():
    table = np.arange(5.0) ** 2
    return {{"inside": lookup(table, 2), "beyond": lookup(table, 8), "t": np.cumsum(table)}}
"""


def _convert(text: str, config: Config = Config()):
    return convert_source(textwrap.dedent(text).lstrip("\n"), config, "mod.py")


def _kept(result) -> dict[str, str]:
    """Kept function -> the NJ104 message."""
    return {f.message.split("`")[1]: f.message for f in result.findings if f.code == "NJ104"}


def _run(code: str) -> dict:
    namespace: dict = {"__name__": "converted"}
    exec(compile(code, "converted.py", "exec"), namespace)
    return namespace["main"]()


def test_a_read_under_except_index_error_keeps_its_function_and_says_why():
    result = _convert(LOOKUP.format(pragma=""))
    kept = _kept(result)
    assert list(kept) == ["lookup"]
    assert "(automatically, NJ404: `table[i]` relies on NumPy raising IndexError" in kept["lookup"]
    assert not [f for f in result.findings if f.code == "NJ404"]  # NJ104 says it now
    converted = result.converted
    assert "    table = _np2jax_as_numpy(table" in converted and "return table[i]" in converted
    assert "table = jnp.arange(5.0) ** 2" in converted and "jnp.cumsum(table)" in converted
    got = _run(converted)
    assert float(got["beyond"]) == 16.0 + 4.0  # the handler ran: JAX would have clamped to 16
    assert isinstance(got["t"], jax.Array)


def test_a_suppressed_or_unselected_trigger_keeps_nothing():
    suppressed = _convert(LOOKUP.format(pragma="  # np2jax: ignore[NJ404]"))
    assert _kept(suppressed) == {} and "_np2jax_as_numpy" not in suppressed.converted
    unselected = _convert(LOOKUP.format(pragma=""), Config(ignore=("NJ404",)))
    assert _kept(unselected) == {}


def test_a_finding_outside_every_function_keeps_nothing():
    result = _convert("""
        import numpy as np
        table = np.arange(5.0)
        try:
            value = table[7]
        except IndexError:
            value = -1.0
    """)
    assert _kept(result) == {} and [f.code for f in result.findings] == ["NJ404"]


def test_a_trigger_whose_array_stays_numpy_keeps_nothing():
    """The finding stands only where the array becomes JAX: a list read under `except
    IndexError`, or a module converting nothing, keeps no function."""
    result = _convert("""
        def lookup(table, i):
            try:
                return table[i]
            except IndexError:
                return None

        def main():
            return {"x": lookup([1.0, 2.0], 5)}
    """)
    assert _kept(result) == {} and result.findings == []


def test_the_innermost_function_and_a_method_are_kept_by_their_names():
    result = _convert("""
        import numpy as np

        class Table:
            def kind(self, v):
                return "array" if isinstance(v, np.ndarray) else "other"

        def outer(x):
            def describe(v):
                return isinstance(v, np.ndarray)
            return describe(x * 2.0), np.sum(x)

        def main():
            return {"a": Table().kind(np.ones(2) * 2.0), "d": outer(np.ones(3))[0],
                    "s": outer(np.ones(3))[1]}
    """)
    kept = _kept(result)
    assert sorted(kept) == ["Table.kind", "describe"]
    assert "NJ102: `np.ndarray` is tested against a value's type" in kept["describe"]
    assert "    def kind(self, v):\n        v = _np2jax_as_numpy(v)\n" in result.converted
    assert "return describe(x * 2.0), jnp.sum(jnp.asarray(x))" in result.converted  # converts
    got = _run(result.converted)
    assert got["a"] == "array" and bool(got["d"]) is True


def test_a_type_check_helper_gets_numpy_values_inside_the_dict_it_is_given():
    """NJ114 where the function also tells NumPy types apart (a helper turning results
    into Python values): it is kept, and the dict's JAX values reach it as NumPy's."""
    text = """
        import numpy as np

        def plain(summary):
            out = {}
            for key, value in summary.items():
                if isinstance(value, np.ndarray):
                    out[key] = value.tolist()
                elif isinstance(value, float):
                    out[key] = round(value, 3)
                else:
                    out[key] = value
            return out

        def main():
            x = np.linspace(0.0, 1.0, 4)
            return {"p": plain({"mean": x.mean(), "x": x, "n": 4}), "y": x * 2.0}
    """
    result = _convert(text)
    # the first finding by position gives the reason: here NJ102's `np.ndarray`
    assert list(_kept(result)) == ["plain"] and "automatically, NJ102" in _kept(result)["plain"]
    got = _run(result.converted)
    assert got["p"] == {"mean": 0.5, "x": [0.0, 1 / 3, 2 / 3, 1.0], "n": 4}


def test_names_jax_lacks_dtype_checks_and_ndarray_subclasses_keep_nothing():
    """NJ102 marks only its checks of a value's type: a dtype's type answers alike for JAX
    arrays, and a name JAX lacks stays NumPy by itself."""
    result = _convert("""
        import numpy as np

        def windows(x):
            return np.lib.stride_tricks.sliding_window_view(x, 2)

        def kinds(y):
            inexact = issubclass(y.dtype.type, np.inexact)
            return inexact, np.issubdtype(y.dtype, np.complexfloating), np.ones(2, dtype=np.bool_)

        class Vec(np.ndarray):
            pass

        def main():
            return {"m": windows(np.arange(4.0)), "k": kinds(np.arange(3.0))[0]}
    """)
    assert _kept(result) == {}
    assert sorted(f.code for f in result.findings) == ["NJ102"] * 5


@pytest.mark.parametrize("check", ["isinstance(n, int | np.integer)", "type(n) is not np.ndarray",
                                   "np.ndarray == type(n)", "isinstance(n, (list, np.ndarray))"])
def test_checks_of_a_values_type_keep_their_function(check):
    result = _convert(f"""
        import numpy as np

        def kind(n):
            return "numpy" if {check} else "other"

        def main():
            return {{"k": kind(np.arange(3.0).sum()), "a": np.arange(3.0) * 2}}
    """)
    assert list(_kept(result)) == ["kind"]


def test_the_declaration_is_the_catalogs():
    """Which rules keep functions is declared in their catalog entries (`keeps-function`,
    the reason's phrase), read by Rule.report as each report's default; a rule cannot mark
    a finding its entry does not declare."""
    declaring = {code for code, doc in rule_docs().items() if doc.keeps_function}
    assert {"NJ102", "NJ114", "NJ404"} <= declaring
    assert "Keeps the function it is found in on NumPy (NJ104)." in rule_doc("NJ404").render_markdown()
    result = _convert("import numpy as np\nx = np.zeros(3)\n")
    from np2jax.analysis import analyze
    from np2jax.syntax.parse import parse

    context = RuleContext(analyze(parse("import numpy as np\nx = np.zeros(3)\n", "m.py")), Config())
    node = result  # any object: the report is not applied
    assert all_rules()["NJ404"](context).report(node, read="a[i]").keeps_function is True
    assert all_rules()["NJ404"](context).report(node, read="a[i]", keeps_function=False) \
        .keeps_function is False
    assert all_rules()["NJ201"](context).report(node, what="x", reason="r", outcome="o",
                                                target="x").keeps_function is False

    class Undeclared(Rule):
        code = "NJ201"

    with pytest.raises(ValueError, match="declares no keeps-function"):
        Undeclared(context).report(node, keeps_function=True, what="x", reason="r",
                                   outcome="o", target="x")


def test_a_function_kept_automatically_in_one_module_is_called_from_another(tmp_path):
    """Another module's callers hand it JAX arrays in a list: its prologue reads them as
    NumPy arrays, and an append into that list reaches the caller."""
    source = tmp_path / "src"
    (source / "pkg").mkdir(parents=True)
    (source / "pkg" / "__init__.py").write_text("")
    (source / "pkg" / "core.py").write_text(textwrap.dedent("""
        import numpy as np

        def first_beyond(tables, i, log):
            log.append(len(tables))
            out = []
            for table in tables:
                if not isinstance(table, np.ndarray):
                    raise TypeError("a NumPy array, please")
                out.append(float(table[i]) if i < len(table) else float(np.max(table)) + 1.0)
            return out
    """).lstrip("\n"))
    (source / "pkg" / "app.py").write_text(textwrap.dedent("""
        import numpy as np
        from pkg.core import first_beyond

        def main():
            log = []
            a = np.arange(3.0)
            values = first_beyond([a, a * 2.0], 5, log)
            return {"values": values, "log": log, "a": np.cumsum(a)}
    """).lstrip("\n"))
    out = tmp_path / "out"
    run = convert_paths([source], Config(cache=False), out=out)
    assert [f.code for f in run.findings] == ["NJ104"]
    core = (out / "pkg" / "core.py").read_text()
    assert "    tables = _np2jax_as_numpy(tables" in core
    assert "    log = _np2jax_as_numpy(log, in_place=True)\n" in core
    import subprocess
    import sys

    code = ("import sys; sys.path.insert(0, sys.argv[1]); from pkg.app import main; r = main(); "
            "print(r['values'], r['log'], type(r['a']).__module__.split('.')[0])")
    done = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["[3.0,", "5.0]", "[2]", "jaxlib"]  # jaxlib's ArrayImpl


# --- the prologue's helper, run as written into a converted module --------------------

_namespace: dict = {}
exec(HELPER_CODE.format(helper=HELPER), _namespace)
as_numpy = _namespace[HELPER]

Pair = namedtuple("Pair", "lo hi")


def test_helper_reads_jax_arrays_inside_containers_as_numpy_values():
    x = jnp.arange(3.0)  # float32 or float64, whatever jax_enable_x64 is in this process
    given = {"x": x, "mean": x.mean(), "pair": Pair(x[0], x), "rows": [x, (x, 2)], "n": 3,
             "name": "s"}
    got = as_numpy(given)
    assert type(got["x"]) is np.ndarray and type(got["mean"]) is type(np.asarray(x.mean())[()])
    assert isinstance(got["mean"], np.floating)  # NumPy's scalar, as NumPy's reduction gives
    assert type(got["pair"]) is Pair and isinstance(got["pair"].lo, np.floating)
    assert type(got["rows"][0]) is np.ndarray and type(got["rows"][1]) is tuple
    assert type(got["rows"][1][0]) is np.ndarray and got["rows"][1][1] == 2
    assert got["n"] == 3 and got["name"] == "s" and list(got) == list(given)
    # read only: the caller's containers are not changed (copies where a JAX array was)
    assert got is not given and isinstance(given["x"], jax.Array)
    assert isinstance(given["rows"][0], jax.Array)


def test_helper_gives_back_the_same_objects_where_no_jax_array_is():
    a = np.ones(3)
    for value in ([1.0, a], {"a": a, "b": [a]}, (a, 2), a, 3.5, "s", None):
        assert as_numpy(value) is value


def test_helper_in_place_changes_the_callers_list_and_dict():
    x = jnp.arange(3.0)
    log = [x, [x]]
    assert as_numpy(log, in_place=True) is log
    assert type(log[0]) is np.ndarray and type(log[1][0]) is np.ndarray
    table = {"t": x}
    assert as_numpy(table, in_place=True) is table and type(table["t"]) is np.ndarray


def test_helper_keeps_dict_subclasses_and_a_container_holding_itself():
    x = jnp.arange(2.0)
    ordered = OrderedDict([("b", x), ("a", 1)])
    got = as_numpy(ordered)
    assert type(got) is OrderedDict and list(got) == ["b", "a"] and type(got["b"]) is np.ndarray
    counts = defaultdict(list, {"k": x})
    got = as_numpy(counts)
    assert type(got) is defaultdict and got.default_factory is list
    assert isinstance(counts["k"], jax.Array)  # copied, not changed
    loop: list = [x]
    loop.append(loop)
    got = as_numpy(loop)
    assert type(got[0]) is np.ndarray and got[1] is loop


def test_prologue_changes_in_place_only_what_the_body_may_change():
    result = _convert("""
        import numpy as np

        def total(parts, log):  # np2jax: keep-numpy
            log.append(1)
            return float(np.sum(parts[0]))

        def main():
            x = np.arange(3.0)
            log = []
            return {"t": total([x, x], log), "log": log, "x": np.cumsum(x)}
    """)
    assert "    parts = _np2jax_as_numpy(parts)\n" in result.converted
    assert "    log = _np2jax_as_numpy(log, in_place=True)\n" in result.converted
    assert result.converted.count(f"def {HELPER}(") == 1
    got = _run(result.converted)
    assert got["t"] == 3.0 and got["log"] == [1]
