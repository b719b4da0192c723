"""Generate rules/api/numpy_jax.json, the NumPy/SciPy -> JAX API table.

Developer tool, never imported by the converter at run time:

    python -m np2jax.apigen [--out PATH]

The table is built purely by introspecting the installed numpy, scipy and
jax.  Only the list of modules to walk and the parameter-role heuristics are
written by hand; everything else (which names exist, their kinds, the JAX
counterparts and their signatures) comes from the libraries themselves, so
regenerating after an upgrade is the way to update it.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import types
import warnings
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_OUT = Path(__file__).parents[1] / "rules" / "api" / "numpy_jax.json"

# Modules whose public members get entries.  Every JAX counterpart is the
# NumPy/SciPy name with "jax." in front (numpy.X -> jax.numpy.X,
# scipy.M.X -> jax.scipy.M.X).
WALKED = [
    "numpy", "numpy.linalg", "numpy.fft", "numpy.random",
    "scipy.special", "scipy.signal", "scipy.linalg", "scipy.fft",
    "scipy.ndimage", "scipy.stats", "scipy.integrate", "scipy.interpolate",
    "scipy.cluster.vq", "scipy.spatial.transform",
]
# Modules recorded as a single module entry, their members not walked.
MODULE_ONLY = [
    "numpy.ma", "numpy.polynomial", "numpy.testing", "numpy.char",
    "numpy.strings", "numpy.rec", "scipy.optimize", "scipy.sparse",
]
# Never mapped, even though JAX has a module of that name: jax.random is a
# different (keyed) API, and jax.scipy.optimize/sparse differ in semantics.
NO_COUNTERPART = ("numpy.random", "scipy.optimize", "scipy.sparse")

_MISSING = object()
UFUNC_METHODS = ("reduce", "accumulate", "outer", "at", "reduceat")

# --- parameter roles ---------------------------------------------------------

_ARRAYS_NAMES = {"arrays", "tup", "xs"}
_SHAPE_NAMES = {"shape", "newshape", "reps"}
_AXIS_NAMES = {"axis", "axes"}
_ARRAY_NAMES = {
    "a", "x", "y", "x1", "x2", "arr", "array", "ary", "condition", "m", "p",
    "v", "A", "b", "prototype", "in1", "in2", "xp", "fp", "q", "weights",
    "values", "operands", "args",
}
# These two are array operands only as *args (np.einsum(subscripts, *operands)).
_VARARGS_ONLY_NAMES = {"args", "operands"}
_SCALARS = {"int", "bool", "float", "str", "complex"}
_SCALAR_ANNOTATIONS = _SCALARS | {f"<class '{t}'>" for t in _SCALARS}


def param_role(param: inspect.Parameter) -> str:
    """Classify a JAX parameter; the first matching rule wins."""
    name, ann = param.name, str(param.annotation)
    if name == "out":
        return "out"
    if ann == "None":  # sort(kind=None): JAX accepts only None, kept for NumPy compatibility
        return "none"
    # JAX writes DTypeLike; postponed annotations that were resolved show the
    # alias expanded, whose tell-tale member is SupportsDType.
    if name == "dtype" or "DTypeLike" in ann or "SupportsDType" in ann:
        return "dtype"
    if "Sequence[ArrayLike]" in ann or name in _ARRAYS_NAMES:
        return "arrays"
    if name in _SHAPE_NAMES or (("Shape" in ann or "DimSize" in ann) and "ArrayLike" not in ann):
        return "shape"
    if name in _AXIS_NAMES:
        return "axis"
    # Any means "anything array-like, lists included" (jnp.asarray's `a`), and
    # a callable returning an Array is not an array.
    if ann in ("Any", "typing.Any") or "Callable" in ann:
        return "other"
    if "Array" in ann:
        return "array"
    if name in _ARRAY_NAMES and ann not in _SCALAR_ANNOTATIONS:
        if name not in _VARARGS_ONLY_NAMES or param.kind is param.VAR_POSITIONAL:
            return "array"
    if ann in _SCALAR_ANNOTATIONS:
        return "scalar"
    return "other"


_PARAM_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "positional",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword",
    inspect.Parameter.VAR_POSITIONAL: "var_positional",
    inspect.Parameter.VAR_KEYWORD: "var_keyword",
}


def signature(obj: Any) -> inspect.Signature | None:
    """inspect.signature, or None where the object has none (many builtins)."""
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):
        return None


def jax_params(obj: Any) -> list[dict] | None:
    sig = signature(obj)
    if sig is None:
        return None
    return [
        {"name": p.name, "kind": _PARAM_KINDS[p.kind], "role": param_role(p)}
        for p in sig.parameters.values()
    ]


def source_params(obj: Any) -> list[str] | None:
    sig = signature(obj)
    return None if sig is None else list(sig.parameters)


# --- introspection -----------------------------------------------------------


def resolve(dotted: str, deprecated_ok: bool = True) -> Any:
    """Import the longest importable prefix of `dotted`, getattr the rest.

    Returns _MISSING when it does not resolve, or, unless `deprecated_ok`, when
    the getattr warns about a deprecation (generated JAX code should not use it).
    """
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore" if deprecated_ok else "error", DeprecationWarning)
            try:
                for attr in parts[cut:]:
                    obj = getattr(obj, attr)
            except (AttributeError, DeprecationWarning):
                return _MISSING
        return obj
    return _MISSING


def kind_of(obj: Any) -> str:
    if isinstance(obj, types.ModuleType):
        return "module"
    if isinstance(obj, np.ufunc):
        return "ufunc"
    if isinstance(obj, type):
        return "dtype" if issubclass(obj, np.generic) else "class"
    if callable(obj) and not is_distribution(obj):
        return "function"
    if obj is None or isinstance(obj, (bool, int, float, complex, str, np.generic)):
        return "constant"
    return "other"


def is_distribution(obj: Any) -> bool:
    # scipy.stats.norm & co. are callable instances (calling freezes them).
    from scipy.stats._distn_infrastructure import rv_generic
    from scipy.stats._multivariate import multi_rv_generic

    return isinstance(obj, (rv_generic, multi_rv_generic))


def jax_counterpart(name: str, obj: Any) -> tuple[str | None, Any]:
    """The JAX dotted name and object standing for `name`, or (None, None)."""
    if name.startswith(NO_COUNTERPART):
        return None, None
    jname = "jax." + name
    jobj = resolve(jname, deprecated_ok=False)
    if jobj is _MISSING:
        return None, None
    # Same role on both sides: a module for a module, a callable for a callable.
    if isinstance(obj, types.ModuleType) != isinstance(jobj, types.ModuleType):
        return None, None
    if callable(obj) and not callable(jobj):
        return None, None
    return jname, jobj


def public_names(module: types.ModuleType) -> list[str]:
    names = getattr(module, "__all__", None) or dir(module)
    return sorted({n for n in names if not n.startswith("_")})


def entry(name: str, obj: Any, twins: dict | None = None) -> dict:
    """`twins`: the module's other public names bound to the very same function
    (scipy.special.psi is scipy.special.digamma): a name JAX lacks takes its twin's
    counterpart, which the API proof then runs as any other."""
    if is_distribution(obj):
        return {"kind": "other", "jax": None}  # frozen distributions unsupported
    kind = kind_of(obj)
    jname, jobj = jax_counterpart(name, obj)
    for twin in (twins or {}).get(id(obj), ()) if jname is None and kind in ("function", "ufunc") else ():
        if twin != name:
            jname, jobj = jax_counterpart(twin, obj)
            if jname is not None:
                break
    out: dict[str, Any] = {"kind": kind, "jax": jname}
    if kind == "ufunc":
        out["nin"] = obj.nin
        if jobj is not None:  # many JAX counterparts are plain functions, without .reduce etc.
            out["jax_methods"] = [m for m in UFUNC_METHODS if hasattr(jobj, m)]
    if kind in ("function", "ufunc"):
        if jname is not None and (params := jax_params(jobj)) is not None:
            out["params"] = params
        if (nparams := source_params(obj)) is not None:
            out["numpy_params"] = nparams
    return out


def distribution_methods(name: str, dist: Any) -> dict[str, dict]:
    """Entries for scipy.stats.<dist>.<method> that jax.scipy.stats.<dist> has."""
    jmod = resolve("jax." + name)
    if not isinstance(jmod, types.ModuleType):
        return {}
    out = {}
    for meth in public_names(dist):
        method = getattr(dist, meth, None)
        if callable(method) and callable(getattr(jmod, meth, None)):
            out[f"{name}.{meth}"] = entry(f"{name}.{meth}", method)
    return out


def module_entries(modname: str) -> dict[str, dict]:
    """The module's own entry plus one per public member."""
    module = importlib.import_module(modname)
    entries = {modname: entry(modname, module)}
    members = {f"{modname}.{attr}": resolve(f"{modname}.{attr}") for attr in public_names(module)}
    twins: dict[int, list[str]] = {}
    for name, obj in members.items():
        if callable(obj) and not isinstance(obj, types.ModuleType):
            twins.setdefault(id(obj), []).append(name)
    for name, obj in members.items():
        if obj is _MISSING:
            continue
        # Submodules not walked themselves are recorded, not descended into.
        if isinstance(obj, types.ModuleType) and name in WALKED:
            continue
        entries[name] = entry(name, obj, twins)
        if is_distribution(obj):
            entries.update(distribution_methods(name, obj))
    return entries


def parent_modules() -> list[str]:
    """numpy, scipy, scipy.cluster, ...: the packages above the listed ones."""
    names = {m.rsplit(".", i)[0] for m in WALKED + MODULE_ONLY for i in range(m.count(".") + 1)}
    return sorted(names - set(WALKED) - set(MODULE_ONLY))


def build_table() -> dict:
    import jax
    import scipy

    entries: dict[str, dict] = {}
    # Third-party deprecation chatter while walking is noise, not signal.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for modname in WALKED:
            entries.update(module_entries(modname))
        for modname in MODULE_ONLY + parent_modules():
            module = resolve(modname)
            if module is not _MISSING:
                entries[modname] = entry(modname, module)
    return {
        "generated_with": {"numpy": np.__version__, "scipy": scipy.__version__, "jax": jax.__version__},
        "entries": entries,
    }


def dump(table: dict) -> str:
    return json.dumps(table, sort_keys=True, indent=1) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    table = build_table()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(dump(table))
    with_jax = sum(e["jax"] is not None for e in table["entries"].values())
    print(f"wrote {args.out}: {len(table['entries'])} entries, {with_jax} with a JAX counterpart")


if __name__ == "__main__":
    main()
