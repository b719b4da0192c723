"""Generated NumPy programs: np2jax never crashes on them, its output parses, converting is
idempotent, and a program converted WITHOUT ANY FINDING computes the same results.

A hypothesis strategy writes small modules from the patterns of NUMPY_TO_JAX.md: array
creation (np.arange/zeros/ones/linspace), in-place writes of every kind (x[i] = v, slices,
masks, augmented ops, fancy indices with repeats, out=, sort/fill, np.add.at, np.copyto),
aliases, views and copies (b = a, b = a[1:], a[::2], a.T, a.ravel(), np.reshape(a, ...),
np.asarray(a), a[[0, 2]]), lists as arguments,
functions that change their argument, loops over range and if/else on scalars, and the
integer widths and casts NumPy and JAX treat differently (a uint8 cast that may leave the
range, int32 cumsum, int16 mean, int8 division, int64 past 2**31; and, in programs of their
own, casts through conditionals or with an integer path, float stores into integer arrays,
NaN cast to int64, a float16 cumsum; and the integer and dtype edges of issue 16, with
NumPy's exact dtypes: narrow-integer reductions, integer division by arrays holding 0,
timestamps and hashes past 2**31, float16/float32 arithmetic, out-of-bounds reads, np.clip
and comparisons past a narrow dtype's range, quotients rounded to integers). Each
program is `def main(): ... return {...}` returning every array it made. Some programs keep
every array private (np2jax must convert them), others alias (np2jax must refuse them).
Every converted program that runs must also run clean: a FutureWarning or DeprecationWarning
the NumPy original did not raise (JAX's "cannot safely cast value from dtype=float64 to
dtype=uint8", which a later release makes an error) fails the case, findings or not.

CI runs 200 derandomized examples per test (100 for the integer and dtype edges). `--long` (or NP2JAX_LONG=1) raises that to 5000
(and NP2JAX_EXAMPLES=N to any N), for a long hunt:

    python -m pytest -q tests/rules/test_generated_programs.py --long -s

With -s, the equal-results test prints its tallies (converted without findings / with
findings / unchanged, and how the programs with findings ran).
"""

from __future__ import annotations

import os
from collections import Counter

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from helpers import new_breaking_warnings, recording_breaking
from np2jax.api import convert_source
from np2jax.files import SourceError
from np2jax.verify.compare import compare_values

EXAMPLES = int(os.environ.get("NP2JAX_EXAMPLES") or (5000 if os.environ.get("NP2JAX_LONG") else 200))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

CREATORS = ["np.arange({n}.0)", "np.zeros({n})", "np.ones({n})", "np.linspace(0.0, 1.0, {n})",
            "np.arange({n})", "np.array([{values}])"]
SCALARS = ["0.5", "2.0", "-1.0", "3", "0"]


@st.composite
def programs(draw, private_only: bool = False):
    """A module source text. `private_only`: no aliases, views or mutating helpers, so
    every write is into a fresh private array (the case np2jax converts)."""
    lengths: dict[str, int] = {}  # array name -> length (1-D arrays only)
    helpers: list[str] = []
    body: list[str] = []
    counter = iter(range(1000))

    def scalar():
        return draw(st.sampled_from(SCALARS))

    def index(n):
        return draw(st.integers(-n, n - 1))

    def new_name():
        return f"a{next(counter)}"

    def pick(minimum=1):
        names = [k for k, n in lengths.items() if n >= minimum]
        return draw(st.sampled_from(sorted(names))) if names else None

    def create(indent):
        n = draw(st.integers(3, 6))
        name = new_name()
        values = ", ".join(draw(st.sampled_from(["1.0", "2.5", "-3.0", "0.0", "4.0"]))
                           for _ in range(n))
        expr = draw(st.sampled_from(CREATORS)).format(n=n, values=values)
        body.append(f"{indent}{name} = {expr}")
        lengths[name] = n

    def write(indent, x):
        n = lengths[x]
        same = sorted(k for k, m in lengths.items() if m == n)
        kind = draw(st.sampled_from([
            "item", "slice", "step", "mask", "aug_item", "aug_slice", "aug_all", "fancy_set",
            "fancy_aug", "out", "sort", "fill", "add_at", "copyto", "aug_array", "ellipsis",
            "neg_slice", "np_sort_call"]))
        v = scalar()
        i = index(n)
        op = draw(st.sampled_from(["+=", "-=", "*="]))
        repeated = [index(n) for _ in range(draw(st.integers(1, 4)))]
        if kind == "item":
            return f"{indent}{x}[{i}] = {v}"
        if kind == "slice":
            lo = draw(st.integers(0, n - 1))
            return f"{indent}{x}[{lo}:{draw(st.integers(lo, n))}] = {v}"
        if kind == "step":
            return f"{indent}{x}[::2] = {v}"
        if kind == "neg_slice":
            return f"{indent}{x}[-2:] = {v}"
        if kind == "ellipsis":
            return f"{indent}{x}[...] = {v}"
        if kind == "mask":
            cmp = draw(st.sampled_from([">", "<", "=="]))
            return f"{indent}{x}[{x} {cmp} {scalar()}] = {v}"
        if kind == "aug_item":
            return f"{indent}{x}[{i}] {op} {v}"
        if kind == "aug_slice":
            return f"{indent}{x}[1:] {op} {v}"
        if kind == "aug_all":
            return f"{indent}{x} {op} {v}"
        if kind == "aug_array":
            return f"{indent}{x} {op} {draw(st.sampled_from(same))}"
        if kind == "fancy_set":
            return f"{indent}{x}[{repeated}] = {v}"
        if kind == "fancy_aug":
            return f"{indent}{x}[{repeated}] {op} {v}"
        if kind == "out":
            fn = draw(st.sampled_from(["np.add", "np.multiply", "np.maximum", "np.subtract"]))
            return f"{indent}{fn}({x}, {draw(st.sampled_from(same + [v]))}, out={x})"
        if kind == "sort":
            return f"{indent}{x}.sort()"
        if kind == "np_sort_call":
            return f"{indent}{x} = np.sort({x})"
        if kind == "fill":
            return f"{indent}{x}.fill({v})"
        if kind == "add_at":
            return f"{indent}np.add.at({x}, {repeated}, {v})"
        return f"{indent}np.copyto({x}, {draw(st.sampled_from(same))})"

    def alias(indent, x):
        n = lengths[x]
        kind = draw(st.sampled_from(["same", "slice", "T", "asarray", "copy", "reshape",
                                     "step", "ravel", "np_reshape", "fancy", "mask_copy"]))
        y = new_name()
        if kind == "same":
            body.append(f"{indent}{y} = {x}")
        elif kind == "slice":
            body.append(f"{indent}{y} = {x}[1:]")
            n -= 1
        elif kind == "step":  # a view np2jax follows (np2jax.analysis.views)
            body.append(f"{indent}{y} = {x}[::2]")
            n = (n + 1) // 2
        elif kind == "ravel":
            body.append(f"{indent}{y} = {x}.ravel()")
        elif kind == "np_reshape":
            body.append(f"{indent}{y} = np.reshape({x}, ({n},))")
        elif kind == "fancy":  # a copy: writes into it must not reach x
            body.append(f"{indent}{y} = {x}[[0, {n - 1}]]")
            n = 2
        elif kind == "mask_copy":
            body.append(f"{indent}{y} = {x}[{x} > -100.0]")  # a copy of every element
        elif kind == "T":
            body.append(f"{indent}{y} = {x}.T")
        elif kind == "asarray":
            body.append(f"{indent}{y} = np.asarray({x})")
        elif kind == "reshape":
            body.append(f"{indent}{y} = {x}.reshape(-1)")
        else:
            body.append(f"{indent}{y} = {x}.copy()")
        lengths[y] = n

    def helper_call(indent, x):
        name = f"h{len(helpers)}"
        stmt = draw(st.sampled_from(["v[0] = 9.0", "v += 1.0", "v[1:] *= 2.0", "v.sort()",
                                     "v[v > 1.0] = 0.0"]))
        returns = draw(st.booleans())
        helpers.append(f"def {name}(v):\n    {stmt}\n" + ("    return v\n" if returns else ""))
        if returns and draw(st.booleans()):
            y = new_name()
            body.append(f"{indent}{y} = {name}({x})")
            lengths[y] = lengths[x]
        else:
            body.append(f"{indent}{name}({x})")

    def reads(indent, x):
        kind = draw(st.sampled_from(["sum_list", "max_tuple", "arith", "maximum_list",
                                     "cast_u8", "cast_clipped", "int32_cumsum", "int16_mean",
                                     "int8_divide", "scaled_int"]))
        y = new_name()
        n = lengths[x]
        if kind == "sum_list":
            body.append(f"{indent}{y} = np.sum([{x}[0], {scalar()}, 1.5]) + {x}")
        elif kind == "max_tuple":
            body.append(f"{indent}{y} = np.max(({x}[0], {x}[-1])) * {x}")
        elif kind == "maximum_list":
            values = ", ".join(draw(st.sampled_from(SCALARS)) for _ in range(n))
            body.append(f"{indent}{y} = np.maximum({x}, [{values}])")
        elif kind == "cast_u8":  # may leave 0..255: NumPy wraps, JAX saturates (NJ403)
            body.append(f"{indent}{y} = ({x} * 90.0 + 100.0).astype(np.uint8)")
        elif kind == "cast_clipped":  # in range: the same bytes
            body.append(f"{indent}{y} = np.clip({x} * 90.0 + 100.0, 0, 255).astype(np.uint8)")
        elif kind == "int32_cumsum":  # NumPy accumulates in int64 (NJ402)
            body.append(f"{indent}{y} = np.cumsum(({x} * 1000).astype(np.int32))")
        elif kind == "int16_mean":  # NumPy's mean of int16 is float64 (NJ402)
            body.append(f"{indent}{y} = {x} * 0 + np.mean({x}.astype(np.int16) * 3)")
        elif kind == "int8_divide":  # int8 / int: float64 in NumPy, float32 in JAX (NJ402)
            body.append(f"{indent}{y} = {x}.astype(np.int8) / 7 + {x}")
        elif kind == "scaled_int":  # past 2**31 in int64
            body.append(f"{indent}{y} = ({x}.astype(np.int64) + 5) * 1_000_000_000")
        else:
            body.append(f"{indent}{y} = {x} * {scalar()} + 1")
        lengths[y] = n

    def statement(indent, depth):
        x = pick()
        if x is None:
            return create(indent)
        choices = ["create", "write", "write", "write", "reads"]
        if not private_only:
            choices += ["alias", "alias", "helper"]
        if depth < 1:
            choices += ["loop", "if"]
        kind = draw(st.sampled_from(choices))
        if kind == "create":
            create(indent)
        elif kind == "write":
            body.append(write(indent, x))
        elif kind == "reads":
            reads(indent, x)
        elif kind == "alias":
            alias(indent, x)
        elif kind == "helper":
            helper_call(indent, x)
        elif kind == "loop":
            k = min(lengths[x], draw(st.integers(1, 3)))
            body.append(f"{indent}for i in range({k}):")
            stmt = draw(st.sampled_from([f"{x}[i] = {x}[i] + i", f"{x}[i] += 1.0",
                                         f"{x}[i] = i * 2", f"{x} *= 1.5"]))
            body.append(f"{indent}    {stmt}")
        else:
            body.append(f"{indent}if {x}[0] > {scalar()}:")
            body.append(write(indent + "    ", x))
            body.append(f"{indent}else:")
            body.append(write(indent + "    ", x))

    create("    ")
    for _ in range(draw(st.integers(1, 7))):
        statement("    ", 0)
    names = ", ".join(f'"{k}": {k}' for k in sorted(lengths))
    body.append(f"    return {{{names}}}")
    return "import numpy as np\n\n\n" + "\n\n".join(helpers + ["def main():\n" + "\n".join(body) + "\n"])


def _run(source: str):
    namespace: dict = {"__name__": "_generated"}
    exec(compile(source, "<generated>", "exec"), namespace)
    return namespace["main"]()


def _run_recording(source: str):
    """(main(), the FutureWarnings and DeprecationWarnings it raised)."""
    return recording_breaking(lambda: _run(source))


_KINDS = {"b": "b", "i": "i", "u": "i", "f": "f", "c": "c"}


def _difference(reference, got, exact_dtypes: bool = False) -> str | None:
    """compare_values, plus: an array's dtype kind (bool, integer, float) must not change;
    `exact_dtypes`: nor its dtype (a NumPy scalar's too: float32 stays float32, uint64 uint64)."""
    problem = compare_values("main()", reference, got)
    if problem is not None:
        return problem
    for key, value in reference.items():
        if isinstance(value, (np.ndarray, np.generic)) and (exact_dtypes or isinstance(value, np.ndarray)):
            other = np.asarray(got[key])
            if exact_dtypes and value.dtype != other.dtype:
                return f"{key}: dtype {value.dtype} became {other.dtype}"
            if _KINDS.get(value.dtype.kind) != _KINDS.get(other.dtype.kind):
                return f"{key}: dtype {value.dtype} became {other.dtype}"
    return None


def _convert(source: str):
    try:
        return convert_source(source)
    except SourceError:
        return None


TALLY: Counter = Counter()


def _check_equal(source: str, exact_dtypes: bool = False):
    result = _convert(source)  # any exception but SourceError fails the test
    assert result is not None, f"a generated program must parse:\n{source}"
    compile(result.converted, "<converted>", "exec")
    if result.changed:
        again = convert_source(result.converted).converted
        assert again == result.converted, f"not idempotent:\n{result.converted}\n---\n{again}"
    try:
        with np.errstate(all="ignore"):
            reference, original_warnings = _run_recording(source)
    except Exception:  # noqa: BLE001 - NumPy refuses the program (a casting rule): not a case
        TALLY["numpy raises"] += 1
        assume(False)
    try:
        got, converted_warnings = _run_recording(result.converted)
        problem = _difference(reference, got, exact_dtypes)
    except Exception as exc:  # noqa: BLE001 - a crash is a difference too
        problem, converted_warnings = f"{type(exc).__name__}: {exc}", set()
    breaking = new_breaking_warnings(original_warnings, converted_warnings)
    assert not breaking, (f"the converted program raises what a later JAX refuses: {breaking}"
                          f"\n--- original\n{source}\n--- converted\n{result.converted}")
    if not result.changed:
        TALLY["unchanged"] += 1
    elif result.findings:
        TALLY["converted with findings"] += 1
        TALLY["  ... and equal" if problem is None else "  ... and differs or raises"] += 1
    else:
        TALLY["converted without findings"] += 1
    assert problem is None or result.findings, (
        f"SILENT difference: {problem}\n--- original\n{source}\n--- converted\n{result.converted}")


@st.composite
def any_program(draw):
    return draw(programs(private_only=draw(st.booleans())))


@SETTINGS
@given(any_program())
def test_generated_programs(source):
    """Every invariant on each program (one conversion serves all four, to keep CI short):
    no crash but SourceError, the output parses, converting twice equals converting once,
    and a conversion without findings runs equal."""
    _check_equal(source)


CAST_VALUES = ["np.linspace(-2.0, 3.0, {n})", "np.arange({n}) * 1.5", "np.array([{values}])",
               "np.sin(np.arange({n}) * 0.7)"]
CAST_SCALES = ["90.0", "1e10", "-300.5", "0.5"]


@st.composite
def cast_programs(draw):
    """Casts and stores of float values into integers (NJ403, NJ406): through conditionals,
    with an integer path, into a uint8 array, NaN into int64, a float16 cumsum; each cast
    either converts to NumPy's result or is reported."""
    n = draw(st.integers(3, 6))
    values = ", ".join(draw(st.sampled_from(["1.0", "2.5", "-3.0", "0.0", "400.0", "-1e12"]))
                       for _ in range(n))
    body = [f"    x = {draw(st.sampled_from(CAST_VALUES)).format(n=n, values=values)}"]
    names = ["x"]
    for number in range(draw(st.integers(1, 4))):
        y, scale = f"c{number}", draw(st.sampled_from(CAST_SCALES))
        target = draw(st.sampled_from(["np.uint8", "np.int8", "np.int16", "np.int32", "np.uint16"]))
        kind = draw(st.sampled_from(["conditional", "mixed_paths", "write", "mask_write",
                                     "nan_int64", "f16_cumsum", "plain"]))
        if kind == "conditional":
            body.append(f"    {y} = (x * {scale} if x[0] > 0 else x * -3.0 + 200.0).astype({target})")
        elif kind == "mixed_paths":
            body += [f"    {y} = x * {scale} + 50.0", "    if x[1] > 1:", f"        {y} = np.arange({n})",
                     f"    {y} = {y}.astype({target})"]
        elif kind == "write":
            body += [f"    {y} = np.zeros({n}, dtype={target})", f"    {y}[:] = x * {scale} + 100.0"]
        elif kind == "mask_write":
            body += [f"    {y} = np.arange({n}).astype({target})", f"    {y}[x > 0] = x[x > 0] * {scale}"]
        elif kind == "nan_int64":
            body.append(f"    {y} = np.where(x > 1.0, np.nan, x * {scale}).astype(np.int64)")
        elif kind == "f16_cumsum":
            body.append(f"    {y} = np.cumsum((x * {scale} + 1000.0).astype(np.float16))")
        else:
            body.append(f"    {y} = (x * {scale}).astype({target})")
        names.append(y)
    body.append("    return {" + ", ".join(f'"{k}": {k}' for k in names) + "}")
    return "import numpy as np\n\n\ndef main():\n" + "\n".join(body) + "\n"


@SETTINGS
@given(cast_programs())
def test_generated_cast_programs(source):
    """The same invariants on programs of casts and stores of float values into integers."""
    _check_equal(source)


INTEGER_VALUES = ["-7", "-3", "-1", "0", "1", "2", "5", "9", "100", "200", "255", "70000"]
DIVISORS = ["-3", "-1", "0", "0", "2", "5"]
HALVES = ["-2.5", "-1.5", "-0.5", "0.5", "1.5", "2.5", "0.25", "3.0"]
NARROW = ["np.uint8", "np.int8", "np.int16", "np.uint16", "np.int32", "bool"]


@st.composite
def integer_programs(draw):
    """The integer and dtype edges of NUMPY_TO_JAX.md #12, #13, #14 and #21 (issue 16): sums,
    products and cumulative ones of narrow integers and bools (NumPy accumulates in
    int64/uint64), np.prod past 2**31, the statistics of uint8, dtype= reductions, integer
    `//`, `%`, fmod and divmod by arrays holding 0 and negative operands (with and without
    np.errstate), millisecond timestamps, epoch seconds with fractions then np.diff, integer
    hashes, np.iinfo bounds plus offsets, float16 and explicit float32 arithmetic (a float32
    result must stay float32), int32 + float32, reads inside try/except IndexError and
    np.take's modes, bool arithmetic, np.round of halves, np.clip with integer bounds,
    comparisons of narrow integers with Python integers past their range, and quotients
    rounded to integers (floor, ceil, astype, `//`, `%` of `q / 0.1`, of sample times).
    Each result's dtype must be NumPy's exactly (`exact_dtypes`)."""
    n = draw(st.integers(3, 6))

    def numbers(choices):
        return ", ".join(draw(st.sampled_from(choices)) for _ in range(n))

    body = [f"    x = np.array([{numbers(INTEGER_VALUES)}])",
            f"    z = np.array([{numbers(DIVISORS)}])",
            f"    f = np.array([{numbers(HALVES)}])"]
    names = ["x", "z", "f"]
    for number in range(draw(st.integers(1, 5))):
        y = f"r{number}"
        names.append(y)
        narrow = draw(st.sampled_from(NARROW))
        kind = draw(st.sampled_from([
            "narrow_reduce", "narrow_method", "bool_arith", "prod_big", "u8_stats", "add_reduce",
            "sum_dtype", "divide_zero", "divide_zero_ufunc", "divmod_zero", "timestamps",
            "epoch_diff", "hash", "iinfo", "float16", "float32", "mixed_float", "int_float32",
            "index_error", "take_mode", "round_halves", "clip_int", "narrow_compare",
            "rounded_quotient"]))
        if kind == "narrow_reduce":  # NumPy: int64/uint64 (JAX's cumsum keeps the input's)
            fn = draw(st.sampled_from(["np.sum", "np.prod", "np.cumsum", "np.cumprod"]))
            body.append(f"    {y} = {fn}(x.astype({narrow}))")
        elif kind == "narrow_method":
            fn = draw(st.sampled_from(["sum", "prod", "cumsum", "cumprod"]))
            body.append(f"    {y} = (x * 3).astype({narrow}).{fn}()")
        elif kind == "bool_arith":
            expr = draw(st.sampled_from(["m.sum()", "np.cumsum(m)", "m + m", "m * 3", "np.sum(m * m)",
                                         "m.mean()", "np.cumprod(m)", "m - x"]))
            cmp = draw(st.sampled_from([">", "<=", "!="]))
            body += [f"    m = x {cmp} {draw(st.sampled_from(DIVISORS))}", f"    {y} = {expr}"]
        elif kind == "prod_big":  # past 2**31 in int64 (NumPy's int32 product is int64 too)
            width = draw(st.sampled_from(["np.int32", "np.int64"]))
            body.append(f"    {y} = np.prod((x + 70000).astype({width}))")
        elif kind == "u8_stats":
            fn = draw(st.sampled_from(["mean", "std", "var"]))
            form = draw(st.sampled_from([f"np.{fn}(x.astype(np.uint8))", f"x.astype(np.uint8).{fn}()"]))
            body.append(f"    {y} = {form}")
        elif kind == "add_reduce":
            target = draw(st.sampled_from(["np.int16", "np.int64", "np.uint8", "np.float32"]))
            body.append(f"    {y} = np.add.reduce(x.astype({narrow}), dtype={target})")
        elif kind == "sum_dtype":
            target = draw(st.sampled_from(["np.int32", "np.int8", "np.float32", "np.uint16"]))
            form = draw(st.sampled_from([f"x.sum(dtype={target})", f"np.sum(x, dtype={target})",
                                         f"np.cumsum(x.astype(np.uint8), dtype={target})"]))
            body.append(f"    {y} = {form}")
        elif kind in ("divide_zero", "divide_zero_ufunc", "divmod_zero"):
            width = draw(st.sampled_from(["", ".astype(np.int32)", ".astype(np.uint8)", ".astype(np.int16)"]))
            a, b = f"x{width}", f"z{width}"
            if "uint8" not in width and draw(st.booleans()):
                a = f"(-{a})"  # negative operands: floor towards -inf in both
            if kind == "divide_zero":
                op = draw(st.sampled_from(["//", "%"]))
                stmt = f"{y} = {a} {op} {b}"
            elif kind == "divide_zero_ufunc":
                fn = draw(st.sampled_from(["np.floor_divide", "np.remainder", "np.fmod", "np.mod"]))
                stmt = f"{y} = {fn}({a}, {b})"
            else:
                names.append(f"{y}b")
                stmt = f"{y}, {y}b = np.divmod({a}, {b})"
            if draw(st.booleans()):
                body += ['    with np.errstate(all="ignore"):', f"        {stmt}"]
            else:
                body.append(f"    {stmt}")
        elif kind == "timestamps":  # milliseconds since 1970: past 2**40
            expr = draw(st.sampled_from(["np.diff(t)", "t - t[0]", "(t // 1000) % 60", "t", "t + x"]))
            body += [f"    t = 1_700_000_000_000 + np.arange({n}) * 250", f"    {y} = {expr}"]
        elif kind == "epoch_diff":  # float64 keeps the milliseconds, float32 would not
            body += ["    s = 1.7e9 + x * 1e-3", f"    {y} = np.diff(s)"]
        elif kind == "hash":
            expr = draw(st.sampled_from(["x * 2654435761 % 2**32", "(x * 2654435761) >> 7",
                                         "(x.astype(np.uint32) * np.uint32(2654435761)) % 1000"]))
            body.append(f"    {y} = {expr}")
        elif kind == "iinfo":
            expr = draw(st.sampled_from([f"np.iinfo(np.int32).max + np.arange({n})",
                                         "np.iinfo(np.int32).max + x",
                                         "np.iinfo(np.int16).min + x * 0",
                                         "np.iinfo(np.int32).max + x.astype(np.int32)"]))
            body.append(f"    {y} = {expr}")
        elif kind == "float16":  # NumPy sums float16 in float16 (NJ406)
            expr = draw(st.sampled_from(["h.sum()", "h.mean()", "np.sum(h)", "np.mean(h)", "h * 2 + 1",
                                         "np.max(h)"]))
            body += [f"    h = (f * {draw(st.sampled_from(['1000.3', '1.0', '33.3']))}).astype(np.float16)",
                     f"    {y} = {expr}"]
        elif kind == "float32":  # the result stays float32 in both
            expr = draw(st.sampled_from(["g.sum()", "np.sum(g)", "g.mean()", "np.mean(g)", "np.cumsum(g)",
                                         "g * 0.1", "g / 3", "g.std()", "np.dot(g, g)", "g ** 2"]))
            body += ["    g = (f * 0.1).astype(np.float32)", f"    {y} = {expr}"]
        elif kind == "mixed_float":  # float32 with float64: float64
            expr = draw(st.sampled_from(["g + f", "g * f.sum()", "np.float32(0.1) * f",
                                         "g + np.float64(1e-9)", "g * np.float32(3)"]))
            body += ["    g = f.astype(np.float32)", f"    {y} = {expr}"]
        elif kind == "int_float32":  # NumPy: int32 + float32 is float64, int16 + float32 float32
            width = draw(st.sampled_from(["np.int32", "np.int16", "np.int8", "np.uint8", "np.int64"]))
            op = draw(st.sampled_from(["+", "*", "-"]))
            body += ["    g = f.astype(np.float32)", f"    {y} = x.astype({width}) {op} g"]
        elif kind == "index_error":  # NumPy raises, JAX clamps (NJ404)
            k = draw(st.sampled_from([n, n + 2, -n - 1, 0]))
            body += ["    try:", f"        {y} = x[{k}] * 2", "    except IndexError:", f"        {y} = x[0] * 0 - 1"]
        elif kind == "take_mode":
            mode = draw(st.sampled_from(["clip", "wrap"]))
            indices = [draw(st.integers(-2 * n, 2 * n)) for _ in range(draw(st.integers(1, 4)))]
            body.append(f"    {y} = np.take(x, {indices}, mode={mode!r})")
        elif kind == "round_halves":  # half to even in both
            expr = draw(st.sampled_from(["np.round(f)", "np.round(f * 10, -1)", "np.round(f, 1)",
                                         "np.around(f / 2, 1)", "np.rint(f)", "np.round(x / 2)"]))
            body.append(f"    {y} = {expr}")
        elif kind == "rounded_quotient":  # XLA divides through the reciprocal (NJ414)
            if draw(st.booleans()):  # a grid divided by its step (10 to 27 of 200 differ)
                step = draw(st.sampled_from(["0.1", "0.01", "0.7"]))
                rounding = draw(st.sampled_from([
                    "np.floor(q / {s})", "np.ceil(q / {s})", "(q / {s}).astype(np.int64)",
                    "(q / {s}) // 1", "(q / {s}) % 1", "np.floor(np.divide(q, {s}))",
                    "np.trunc(np.abs(q / {s}))", "np.floor(q / 2)"]))
                body += [f"    q = np.arange(200) * {step}", f"    {y} = " + rounding.format(s=step)]
            else:  # sample times back to sample indices (12 to 22 of 200 differ)
                rate = draw(st.sampled_from(["44100", "48000", "22050"]))
                back = draw(st.sampled_from(["np.floor(u * {r})", "(u * {r}).astype(np.int64)"]))
                body += [f"    u = np.arange(200) / {rate}", f"    {y} = " + back.format(r=rate)]
        elif kind == "narrow_compare":  # NumPy 2 compares with a Python int by value (NJ408)
            op = draw(st.sampled_from(["<", ">", "==", "!=", ">="]))
            bound = draw(st.sampled_from(["300", "-1", "255", "-200", "70000", "0"]))
            body.append(f"    {y} = x.astype({narrow}) {op} {bound}")
        else:
            lo, hi = sorted([draw(st.integers(-5, 300)), draw(st.integers(-5, 300))])
            data = draw(st.sampled_from(["x", "f", "x.astype(np.uint8)", "x.astype(np.int16)"]))
            body.append(f"    {y} = np.clip({data}, {lo}, {hi})")
    body.append("    return {" + ", ".join(f'"{k}": {k}' for k in names) + "}")
    return "import numpy as np\n\n\ndef main():\n" + "\n".join(body) + "\n"


@settings(SETTINGS, max_examples=max(EXAMPLES // 2, 1))  # half: keeps the file's CI time near 2.5 min
@given(integer_programs())
def test_generated_integer_programs(source):
    """The same invariants on programs of the integer and dtype edges, with NumPy's dtype
    kept exactly (a float32 sum stays float32, a uint8 cumsum is uint64)."""
    _check_equal(source, exact_dtypes=True)


def test_zz_print_tallies():
    """Prints the tallies of the two equal-results tests (seen with -s)."""
    print("\ngenerated programs:", dict(sorted(TALLY.items())))


LIST_VALUES = ["1.0", "2.5", "-3.0", "0.5", "4", "-2", "0"]
# NumPy functions given one list (or tuple) where they want an array
LIST_CONSUMERS = ["np.sum({a})", "np.mean({a})", "np.cumsum({a})", "np.max({a})", "np.prod({a})",
                  "np.atleast_1d({a})", "np.sort({a})", "np.diff({a})", "np.abs({a})",
                  "np.zeros_like({a})", "np.polyval({a}, 2.0)", "np.maximum({a}, {b})",
                  "np.subtract({a}, {b})", "np.dot({a}, {b})", "np.exp({a})",
                  "np.clip({a}, -1.0, 1.0)", "np.where(np.asarray({a}) > 0, {a}, {b})"]
# NumPy functions given a sequence of arrays (here: a list of lists)
ROWS_CONSUMERS = ["np.concatenate({r})", "np.vstack({r})", "np.hstack({r})", "np.stack({r})",
                  "np.column_stack({r})", "np.sum({r}, axis=0)", "np.mean({r})",
                  "np.zeros_like({r})", "np.max({r}, axis=1)"]


@st.composite
def list_source_programs(draw):
    """Lists and tuples reaching NumPy functions from everywhere (issue 16): a function
    returning a literal, a comprehension or a list built in a loop, a method returning one,
    a class attribute tuple, a constructor argument stored in self, a list set in __init__
    or appended to by a method, the values of a dict, an item of a dict, a loop variable
    over a dict's items, rows appended to a list (of lists). Every one must be converted
    to NumPy's result or reported: no silent difference."""
    n = draw(st.integers(2, 4))
    helpers: list[str] = []
    body: list[str] = []
    results: list[str] = []

    def literal(length=n, tuple_=False):
        items = ", ".join(draw(st.sampled_from(LIST_VALUES)) for _ in range(length))
        return f"({items},)" if tuple_ else f"[{items}]"

    def source(k):
        """(setup lines for main, an expression of main giving a list or tuple of n numbers)."""
        kind = draw(st.sampled_from(["return_literal", "return_comprehension", "return_loop",
                                     "method", "class_tuple", "stored_argument", "init_list",
                                     "appended_attribute", "dict_item", "dict_get", "local",
                                     "sorted", "tolist", "range", "config_item", "row"]))
        values = literal(tuple_=draw(st.booleans()))
        if kind == "return_literal":
            helpers.append(f"def src{k}():\n    return {values}\n")
            return [], f"src{k}()"
        if kind == "return_comprehension":
            helpers.append(f"def src{k}(m):\n    return [i * {draw(st.sampled_from(LIST_VALUES))} for i in range(m)]\n")
            return [], f"src{k}({n})"
        if kind == "return_loop":
            helpers.append(f"def src{k}(m):\n    out = []\n    for i in range(m):\n"
                           f"        out.append(i + {draw(st.sampled_from(LIST_VALUES))})\n    return out\n")
            return [f"    got{k} = src{k}({n})"], f"got{k}"
        if kind == "method":
            helpers.append(f"class Src{k}:\n    def values(self):\n        return {values}\n")
            return [f"    obj{k} = Src{k}()"], f"obj{k}.values()"
        if kind == "class_tuple":
            helpers.append(f"class Src{k}:\n    data = {literal(tuple_=True)}\n\n"
                           f"    def get(self):\n        return self.data\n")
            return [], f"Src{k}().get()"
        if kind == "stored_argument":
            helpers.append(f"class Src{k}:\n    def __init__(self, data):\n        self.data = data\n")
            return [f"    obj{k} = Src{k}({values})"], f"obj{k}.data"
        if kind == "init_list":
            helpers.append(f"class Src{k}:\n    def __init__(self):\n        self._w = {values}\n")
            return [f"    obj{k} = Src{k}()"], f"obj{k}._w"
        if kind == "appended_attribute":
            helpers.append(f"class Src{k}:\n    def __init__(self):\n        self.sizes = []\n\n"
                           f"    def add(self, s):\n        self.sizes.append(s)\n")
            lines = [f"    obj{k} = Src{k}()"]
            lines += [f"    obj{k}.add({draw(st.sampled_from(LIST_VALUES))})" for _ in range(n)]
            return lines, f"obj{k}.sizes"
        if kind == "dict_item":
            return [f"    d{k} = {{'a': {values}, 'b': {literal()}}}"], f"d{k}['a']"
        if kind == "dict_get":
            return [f"    d{k} = {{'a': {values}}}"], f"d{k}.get('a')"
        if kind == "sorted":
            return [f"    v{k} = {{'x': 1.0, 'y': -2.0, 'z': 0.5, 'w': 3.0}}"], \
                f"sorted(v{k}.values())[:{n}]"
        if kind == "tolist":
            return [f"    v{k} = np.linspace(-1.0, 2.0, {n}).tolist()"], f"v{k}"
        if kind == "range":
            return [], f"range({n})"
        if kind == "config_item":
            helpers.append(f"class Src{k}:\n    def __init__(self, cfg):\n        self.w = cfg['w']\n")
            return [f"    obj{k} = Src{k}({{'w': {values}}})"], f"obj{k}.w"
        if kind == "row":
            return [f"    rows{k} = []", "    for i in range(2):",
                    f"        rows{k}.append([i + 0.5] * {n})"], f"rows{k}[1]"
        return [f"    v{k} = {values}"], f"v{k}"

    for k in range(draw(st.integers(1, 3))):
        setup_a, a = source(2 * k)
        setup_b, b = source(2 * k + 1)
        body += setup_a + setup_b
        consumer = draw(st.sampled_from(LIST_CONSUMERS))
        # a method of the class that holds the list uses it through self too
        body.append(f"    r{k} = {consumer.format(a=a, b=b)}")
        results.append(f"r{k}")
    for k in range(draw(st.integers(0, 2))):
        rows = f"rows{k}"
        kind = draw(st.sampled_from(["appended", "dict_values", "dict_loop"]))
        if kind == "appended":
            body += [f"    {rows} = []", f"    for i in range({draw(st.integers(1, 3))}):",
                     f"        {rows}.append([i * 1.5] * {n})"]
        elif kind == "dict_values":
            body += [f"    table{k} = {{'x': {literal()}, 'y': {literal()}}}",
                     f"    {rows} = list(table{k}.values())"]
        else:
            body += [f"    table{k} = {{'x': {literal()}, 'y': {literal()}}}",
                     f"    sums{k} = {{key: np.sum(v) for key, v in table{k}.items()}}",
                     f"    {rows} = [table{k}['x'], table{k}['y']]"]
            results.append(f"sums{k}['x'] + sums{k}['y']")
        consumer = draw(st.sampled_from(ROWS_CONSUMERS))
        body.append(f"    s{k} = {consumer.format(r=rows)}")
        results.append(f"s{k}")
    returned = ", ".join(f'"out{i}": {expr}' for i, expr in enumerate(results))
    return ("import numpy as np\n\n\n" + "\n\n".join(helpers) + "\n\ndef main():\n"
            + "\n".join(body) + "\n    return {" + returned + "}\n")


@SETTINGS
@given(list_source_programs())
def test_generated_list_sources(source):
    """Lists and tuples from function returns, attributes, dict values and appended lists
    given to NumPy functions: each converts to NumPy's result or is reported."""
    _check_equal(source)
