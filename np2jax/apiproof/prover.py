"""The calls of one callable: its base call from the signatures and the grid, the variants of
its data and options, and the verdict of each (Prover); and the methods of ufuncs."""

from __future__ import annotations

import fnmatch
import inspect
import math
import warnings
from typing import Any

from np2jax.apiproof.verdicts import (
    ALONE_CASE, AS_ARRAY, AS_FLOAT_ARRAY, AS_SPELLED, DIFFERS, DTYPE_AS_FLOAT64, INTEGER_PARAMS,
    INT_ARRAY_CASE, NO_VALUE_REPRS, NUMBERS_ALONE, NUMPY_RAISES, OMITTED, OPTION_DTYPES,
    OPTION_DTYPE_CASES, PYTHON_NUMBERS, RAISES, SAME, SIGNED_ZEROS, Timeout, UFUNC_METHODS,
    NEAR_ZERO, TINY, TINY_EDGE, UNSIGNED_ZEROS, WEAKLY_TYPED, WIDENED_DTYPES,
)
from np2jax.apiproof.grid import Context, LIKE_KINDS, Samples, key_of, resolve, variant
from np2jax.apiproof.running import run_both, short, timed


def signature(obj) -> inspect.Signature | None:
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):
        return None


def spec_for(name: str, grid: dict) -> dict:
    spec: dict = {}
    for pattern, family in grid["families"].items():
        if fnmatch.fnmatchcase(name, pattern):
            spec.update(family)
            break
    spec.update(grid["functions"].get(name, {}))
    return spec


def _simple(value) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value) not in NO_VALUE_REPRS and not isinstance(value, type)
    if isinstance(value, tuple):
        return all(_simple(v) for v in value)
    return False


def _spec_of_default(value):
    if value is None:
        return "@None"
    if isinstance(value, float) and math.isinf(value):
        return "@inf" if value > 0 else "@-inf"
    if isinstance(value, tuple):
        return [_spec_of_default(v) for v in value]
    return value


class Prover:
    def __init__(self, name: str, entry: dict, grid: dict, samples: Samples, env: dict):
        self.name, self.entry, self.grid, self.samples, self.env = name, entry, grid, samples, env
        self.spec = spec_for(name, grid)
        self.np_fn = resolve(name)
        self.jax_fn = resolve(entry["jax"])
        self.np_sig = signature(self.np_fn)
        self.jax_sig = signature(self.jax_fn)
        self.renames = {jax_name: np_name for np_name, jax_name in
                        grid.get("keyword_renames", {}).get(name, {}).items()}

    # the base call
    def _jax_params(self) -> list[inspect.Parameter]:
        if self.jax_sig is None:
            return []
        return [p for p in self.jax_sig.parameters.values() if not p.name.startswith("_")]

    def _np_param(self, name: str):
        if self.np_sig is None:
            return None
        return self.np_sig.parameters.get(self.renames.get(name, name))

    def _np_takes_keywords(self) -> bool:
        return self.np_sig is not None and any(
            p.kind is p.VAR_KEYWORD for p in self.np_sig.parameters.values())

    def base_candidates(self) -> list[tuple[list, dict]]:
        kwargs = dict(self.spec.get("kwargs", {}))
        if "args" in self.spec:
            return [(list(self.spec["args"]), kwargs)]
        required = []
        nin = self.entry.get("nin")
        for p in self._jax_params():
            if p.kind in (p.VAR_KEYWORD, p.KEYWORD_ONLY) or p.default is not p.empty:
                continue
            if p.kind is p.VAR_POSITIONAL:
                if nin is not None:
                    required.extend([None] * (nin - len(required)))
                continue
            np_param = self._np_param(p.name)
            if np_param is not None and np_param.default is not np_param.empty:
                continue  # JAX requires what NumPy defaults: see jax_requires
            required.append(p.name)
        if not required and nin:
            required = [None] * nin
        fixed = {name: self.grid["required"][name][0] for name in required
                 if name in self.grid["required"]}
        candidates = []
        for data in self.grid["data_candidates"]:
            args = [fixed.get(name, data) if name is not None else data for name in required]
            candidates.append((args, dict(kwargs)))
            if all(name in fixed for name in required if name is not None) and None not in required:
                break
        return candidates

    def jax_requires(self) -> list[str]:
        """Parameters JAX requires where NumPy has a default (map_coordinates' `order`)."""
        out = []
        for p in self._jax_params():
            if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY,
                                                    p.POSITIONAL_ONLY):
                np_param = self._np_param(p.name)
                if np_param is not None and np_param.default is not np_param.empty:
                    out.append(p.name)
        return out

    def run(self, args: list, kwargs: dict, dtype=None, edge=None, jax_args=None,
            jax_float64: bool = False, weak: bool = False, jax_kwargs=None) -> str:
        """One verdict; `jax_args`, `jax_kwargs`: what JAX is given instead of `args`,
        `kwargs` (made alike); `jax_float64`: JAX is given the `dtype` data cast to float64
        (DTYPE_AS_FLOAT64)."""
        ctx_np = Context(self.samples, dtype, edge)
        np_args = [ctx_np.value(a) for a in args]
        np_kwargs = {self.renames.get(k, k): ctx_np.value(v) for k, v in kwargs.items()}
        if ctx_np.failed:
            return "n/a"
        ctx_jax = Context(self.samples, dtype, edge)
        jax_args = [ctx_jax.value(a) for a in (args if jax_args is None else jax_args)]
        jax_kwargs = {**self.spec.get("jax_kwargs", {}), **{
            k: ctx_jax.value(v) for k, v in (kwargs if jax_kwargs is None else jax_kwargs).items()}}
        if jax_float64:
            np = self.samples.np

            def widened(value):
                if isinstance(value, np.ndarray) and value.dtype == np.dtype(dtype):
                    return value.astype(np.float64)
                return tuple(widened(v) for v in value) if isinstance(value, tuple) else value

            jax_args = [widened(a) for a in jax_args]
            jax_kwargs = {k: widened(v) for k, v in jax_kwargs.items()}
        then = None
        if "then" in self.spec:
            then = ([ctx_np.value(a) for a in self.spec["then"]],
                    [ctx_jax.value(a) for a in self.spec["then"]])
        return run_both(self.np_fn, self.jax_fn, np_args, np_kwargs, jax_args, jax_kwargs, then,
                        self.env, values=self.spec.get("compare") != "shape", weak=weak,
                        floor=TINY if edge == TINY_EDGE else 1.0)

    def numpy_runs(self, args, kwargs) -> str | None:
        ctx = Context(self.samples)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                timed(self.np_fn, *[ctx.value(a) for a in args],
                       **{self.renames.get(k, k): ctx.value(v) for k, v in kwargs.items()})
        except Timeout:
            return "NumPy timed out"
        except Exception as exc:  # noqa: BLE001
            return short(exc)
        return None

    def prove(self) -> dict:
        out: dict[str, Any] = {"jax": self.entry["jax"]}
        if self.spec.get("jax_kwargs"):  # JAX-only options every JAX run is given
            out["jax_kwargs"] = dict(self.spec["jax_kwargs"])
        base = self._base(out)
        if base is None:
            return out
        args, kwargs, required_by_jax = base
        out["call"] = self._describe(args, kwargs)
        if self.alternates:
            out["data_alternates"] = [self._describe(self._with(args, index, value), kwargs)
                                      for index, value in self.alternates]
        out["verdict"] = self.run_all(args, kwargs)
        dtypes = self.prove_dtypes(args, kwargs)
        if dtypes:
            out["dtypes"] = dtypes
            # an edge whose JAX call does not return is written from the grid (known_edges):
            # running it would spend the callable's deadline and lose every other verdict
            known = self.spec.get("known_edges", {})
            out["edges"] = {edge: known.get(edge) or self.run(args, kwargs, edge=edge)
                            for edge in self.grid["edges"]}
        out["params"] = self.prove_params(args, kwargs, required_by_jax)
        integer_params = self.prove_integer_params(args, kwargs, required_by_jax)
        if integer_params:
            out[INTEGER_PARAMS] = integer_params
        option_dtypes = self.prove_option_dtypes(args, kwargs)
        if option_dtypes:
            out[OPTION_DTYPES] = option_dtypes
        numbers = self.prove_python_numbers(args, kwargs)
        if numbers:
            out["python_numbers"] = numbers
        out["positional"] = [p.name for p in self._jax_params()
                             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        # NJ417 makes every zero of the converted calls 0.0: only where NumPy never keeps a
        # -0.0 (no case of the grid where it does, none of all -0.0 data either)
        if _mentions(out, UNSIGNED_ZEROS) and (
                _mentions(out, SIGNED_ZEROS) or self._numpy_gives_negative_zero(args, kwargs)):
            out = _replaced(out, UNSIGNED_ZEROS, SIGNED_ZEROS)
        return out

    def _numpy_gives_negative_zero(self, args, kwargs) -> bool:
        """Whether NumPy's result holds -0.0 for data that is all -0.0 (float64, as the
        grid's -0.0 edge makes integer data), in each data argument alone and in all at
        once: the grid's -0.0 edge alone does not show that NumPy never keeps one
        (`np.floor_divide(-0.0, 2.0)` is -0.0; `np.sign(-0.0)` is 0.0)."""
        np = self.samples.np
        ctx = Context(self.samples)
        values = [ctx.value(a) for a in args]
        np_kwargs = {self.renames.get(k, k): ctx.value(v) for k, v in kwargs.items()}
        data = [i for i, v in enumerate(values)
                if isinstance(v, np.ndarray) and v.dtype.kind in "iuf" and v.size]
        cases = [[i] for i in data] + ([data] if len(data) > 1 else [])
        for case in cases:
            given = [np.full(v.shape, -0.0) if i in case else v for i, v in enumerate(values)]
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = timed(self.np_fn, *given, **np_kwargs)
            except Exception:  # noqa: BLE001 - a case NumPy refuses shows nothing
                continue
            if _holds_negative_zero(result, np):
                return True
        return False

    def _base(self, out: dict) -> tuple[list, dict, list] | None:
        """The base call (args, kwargs, the parameters JAX requires), or None with the
        reason in `out` (skipped, or a verdict for a callable JAX takes from NumPy)."""
        if "skip" in self.spec:
            out["skipped"] = self.spec["skip"]
            return None
        if self.np_fn is self.jax_fn:
            out["verdict"] = SAME
            out["identical"] = True
            return None
        errors = []
        base = None
        for args, kwargs in self.base_candidates():
            problem = self.numpy_runs(args, kwargs)
            if problem is None:
                base = (args, kwargs)
                break
            errors.append(problem)
        if base is None:
            out["skipped"] = f"no base call: NumPy raises {errors[-1] if errors else '?'}"
            return None
        args, kwargs = base
        required_by_jax = []
        for name in self.jax_requires():
            if name in kwargs:
                continue
            for value in self._values_for(name, required=False):
                if value != "@None" and self.run(args, {**kwargs, name: value}) == SAME:
                    kwargs[name] = value
                    break
            required_by_jax.append(name)
        self.alternates = self._alternates(args)
        if not _fine(self.run_all(args, kwargs)):
            kwargs = self._same_base(args, kwargs)
        return args, kwargs, required_by_jax

    def _int64(self, spec: str):
        """The data sample `spec` ("@v") as an int64 array, made as the dtype grid makes it."""
        np = self.samples.np
        return np.asarray(variant(self.samples.arrays[spec[1:]], "int64", None, np))

    def prove_part(self, part: str) -> dict:
        """{part: ...} of the base call alone (--part): "python_numbers" or "dtypes"."""
        out: dict[str, Any] = {}
        base = self._base(out)
        if base is None:
            return {"skipped": out["skipped"]} if "skipped" in out else {}
        args, kwargs, _ = base
        if part == "dtypes":
            found = self.prove_dtypes(args, kwargs)
        elif part == INTEGER_PARAMS:
            found = self.prove_integer_params(args, kwargs, base[2])
        elif part == OPTION_DTYPES:
            found = self.prove_option_dtypes(args, kwargs)
        else:
            found = self.prove_python_numbers(args, kwargs)
        return {part: found} if found else {}

    def prove_integer_params(self, args: list, kwargs: dict, required_by_jax: list) -> dict:
        """{parameter: {value: verdict}}: the options again, with the data cast to int64
        (np.round's decimals=-1 raises in JAX for integers; a quantile's method="lower"
        gives NumPy's integer, JAX's float); none where the call has no data."""
        if not self.prove_dtypes(args, kwargs, ("int64",)):
            return {}
        return {name: record["values"] for name, record in
                self.prove_params(args, kwargs, required_by_jax, dtype="int64").items()
                if record.get("values") and not record.get("data")}

    def prove_option_dtypes(self, args: list, kwargs: dict) -> dict:
        """{option: {dtype: verdict}}: each option that takes an array (bincount's weights,
        percentile's q) given its first array sample cast to int64, float32 and bool (NumPy
        casts bincount's weights to float64; JAX keeps int64 weights, and refuses bool ones)."""
        out: dict[str, dict] = {}
        jax_params = self._jax_params()
        positional = [p for p in jax_params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        for index, p in enumerate(positional + [p for p in jax_params if p.kind is p.KEYWORD_ONLY]):
            if p.name == "out" or (self._np_param(p.name) is None and not self._np_takes_keywords()):
                continue
            in_args = p.kind is not p.KEYWORD_ONLY and index < len(args) and p.name not in kwargs
            if not in_args and (p.kind is p.POSITIONAL_ONLY or index < len(args)):
                continue
            values = ([args[index]] if in_args else []) + self._values_for(p.name, required=in_args, defaults=False)
            sample = next((v for v in values if isinstance(v, str) and v.startswith("@")
                           and (v[1:] in self.samples.arrays or v[1:] in LIKE_KINDS)
                           and v[1:] not in self.samples.data), None)
            if sample is None:
                continue
            verdicts = {}
            for dtype in OPTION_DTYPE_CASES:
                spec = f"@cast:{dtype}:{sample[1:]}"
                verdicts[dtype] = self.run_all(self._with(args, index, spec), kwargs) if in_args \
                    else self.run_all(args, {**kwargs, p.name: spec})
            out[p.name] = verdicts
        return out

    def prove_dtypes(self, args: list, kwargs: dict, dtypes=None) -> dict:
        """{dtype: verdict}: the base call with its data cast to each dtype of the grid
        (none where it has no data)."""
        if not any(isinstance(a, str) and a.startswith("@") and a[1:] in self.samples.data
                   for a in _flat(args)):
            return {}
        verdicts = {}
        for dtype in dtypes or self.grid["dtypes"]:
            verdict = self.run(args, kwargs, dtype=dtype)
            if dtype.startswith("complex") and verdict == SAME:  # near zero too (TINY_EDGE)
                tiny = self.run(args, kwargs, dtype=dtype, edge=TINY_EDGE)
                if not _fine_or_zero_signs(tiny):
                    verdict = f"{DIFFERS}: {NEAR_ZERO}, {tiny.split(': ', 1)[1]}"
            if not _fine_or_zero_signs(verdict) and dtype in WIDENED_DTYPES and _equal_numbers(self.run(
                    args, kwargs, dtype=dtype, jax_float64=True)):
                verdict = DTYPE_AS_FLOAT64  # np.cov of float32: NumPy computes in float64
            verdicts[dtype] = verdict
        return verdicts

    def prove_python_numbers(self, args: list, kwargs: dict) -> dict:
        """{parameter: {case: verdict}}: each positional data argument given as a Python
        number (an item of it, for a sequence of arrays, beside a 1-D and a 0-d array, and
        for the constructors whose grid entry says `python_numbers = "items"`, beside a 0-d
        array), and each positional number option of the base call given another number,
        the other data cast to a narrow dtype (PYTHON_NUMBERS). NumPy converts some
        of them to a 64-bit array (np.append's `values`: uint8 with 300 is int64, float32
        with 0.1 float64) where JAX keeps the number weakly typed (uint8, wrapping 300;
        float32); others it takes as weak too (np.add, np.where). Where the number as given
        differs, JAX is run again with the number as NumPy's 64-bit array (AS_ARRAY when
        that gives NumPy's result) and, for an integer, as a float64 one (AS_FLOAT_ARRAY)."""
        params = self._jax_params()
        positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        rest = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), None)
        if rest is not None:  # a ufunc's `*args`: its positions' verdicts combined
            positional += [rest] * (len(args) - len(positional))
        np = self.samples.np
        out: dict[str, dict] = {}
        items = self.spec.get("python_numbers") == "items"  # np.array([x32[0], 0.1])
        for index, spec in enumerate(args[:len(positional)]):
            integers = None  # the int64 arrays given in its place (INT_ARRAY_CASE)
            if self._is_data(spec) and spec[1:] in self.samples.data and items:
                def places(number, index=index):
                    return [self._with(args, index, ["@s", number])]
                integers = [self._with(args, index, ["@s", self._int64("@s")])]
            elif self._is_data(spec) and spec[1:] in self.samples.data:
                def places(number, index=index):
                    return [self._with(args, index, number)]
                integers = [self._with(args, index, self._int64(spec))]
            elif isinstance(spec, (list, tuple)) and spec and all(
                    self._is_data(item) and item[1:] in self.samples.data for item in spec):
                def places(number, index=index):
                    return [self._with(args, index, [item, number]) for item in ("@v", "@s")]
                integers = [self._with(args, index, [item, self._int64(item)]) for item in ("@v", "@s")]
            elif type(spec) in (int, float) and any(
                    self._is_data(a) and a[1:] in self.samples.data for a in args):
                # a number option beside the data (full_like's fill_value, insert's index):
                # NumPy raises OverflowError for 300 into uint8 data, JAX wraps it
                def places(number, index=index):
                    return [self._with(args, index, number)]
            else:
                continue
            cases = {}
            if integers is not None:
                # an int64 array beside float32 data: NumPy computes in float64, JAX in float32
                verdict = worst([self.run(given, kwargs, dtype="float32") for given in integers])
                if not _fine_or_zero_signs(verdict) and verdict != RAISES:
                    as_float = [[a.astype(np.float64) if isinstance(a, np.ndarray) else
                                 [i.astype(np.float64) if isinstance(i, np.ndarray) else i for i in a]
                                 if isinstance(a, list) else a for a in given] for given in integers]
                    if _equal_numbers(worst([self.run(given, kwargs, dtype="float32", jax_args=jax_given)
                                             for given, jax_given in zip(integers, as_float)])):
                        verdict = AS_FLOAT_ARRAY
                cases[INT_ARRAY_CASE] = verdict
            for number, dtype in PYTHON_NUMBERS:
                verdict = worst([self.run(given, kwargs, dtype=dtype) for given in places(number)])
                if not _fine_or_zero_signs(verdict) and verdict != RAISES:
                    wraps = [(AS_ARRAY, np.asarray(number))]
                    if isinstance(number, int):
                        wraps.append((AS_FLOAT_ARRAY, np.asarray(float(number))))
                    for name, array in wraps:
                        if _equal_numbers(worst([self.run(given, kwargs, dtype=dtype, jax_args=jax_given)
                                                 for given, jax_given in zip(places(number), places(array))])):
                            verdict = name
                            break
                cases[f"{number!r} beside {dtype}"] = verdict
            name = positional[index]
            out[name] = {case: _combined(out[name].get(case, verdict), verdict)
                         for case, verdict in cases.items()} if name in out else cases
        data = [i for i, spec in enumerate(args) if self._is_data(spec) and spec[1:] in self.samples.data]
        if data:  # `np.sqrt(2.5)`: NumPy's float64 scalar, JAX's weakly typed one
            alone = [2.5 if i in data else a for i, a in enumerate(args)]
            verdict = self.run(alone, kwargs, weak=True)
            if verdict == f"{DIFFERS}: {WEAKLY_TYPED}":
                as_array = [np.asarray(2.5) if i in data else a for i, a in enumerate(args)]
                if _equal_numbers(self.run(alone, kwargs, jax_args=as_array, weak=True)):
                    verdict = AS_ARRAY
            out[NUMBERS_ALONE] = {ALONE_CASE: verdict}
        return out

    def _same_base(self, args: list, kwargs: dict) -> dict:
        """Where the call with NumPy's defaults differs (map_coordinates' mode='constant' on
        points outside the grid), a base that does not, so that each parameter is proven on
        its own: the first value of each option that makes the call the same is kept."""
        positional = [p.name for p in self._jax_params()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][:len(args)]
        for p in self._jax_params():
            if p.name in positional or p.name in kwargs or p.name == "out" or \
                    p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.default is p.empty:
                continue
            np_param = self._np_param(p.name)
            if np_param is None or np_param.kind is np_param.POSITIONAL_ONLY:
                continue
            for value in self._values_for(p.name, required=False):
                if self.run_all(args, {**kwargs, p.name: value}) == SAME:
                    return {**kwargs, p.name: value}
        return kwargs

    def _is_data(self, value) -> bool:
        return isinstance(value, str) and value.startswith("@") and value[1:] in self.samples.arrays

    def _alternates(self, args: list) -> list[tuple[int, Any]]:
        """The base call with other data in a positional argument (indices past the end,
        coordinates outside the grid): data the program chooses at run time, so every
        other verdict covers them too."""
        alternates = []
        positional = [p for p in self._jax_params()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        for index, p in enumerate(positional[:len(args)]):
            values = self._values_for(p.name, required=True, defaults=False)
            if len(values) > 1 and all(self._is_data(v) for v in values) and self._is_data(args[index]):
                alternates.extend((index, value) for value in values
                                  if key_of(value) != key_of(args[index]))
        return alternates

    def run_all(self, args: list, kwargs: dict, dtype=None) -> str:
        """The verdict of a call and of its data alternates together: the worst."""
        verdicts = [self.run(args, kwargs, dtype=dtype)]
        for index, value in self.alternates:
            if index < len(args) and self._is_data(args[index]):
                verdicts.append(self.run(self._with(args, index, value), kwargs, dtype=dtype))
        return worst(verdicts)

    def _describe(self, args, kwargs) -> str:
        parts = [key_of(a) for a in args] + [f"{k}={key_of(v)}" for k, v in kwargs.items()]
        return f"{self.name.rsplit('.', 1)[-1]}({', '.join(parts)})"

    def _values_for(self, name: str, required: bool, defaults: bool = True) -> list:
        own = self.spec.get("params", {})
        if name in own:
            values = list(own[name])
        elif required and name in self.grid["required"]:
            values = list(self.grid["required"][name])
        elif required:
            values = []
        else:
            values = list(self.grid["values"].get(name, []))
        # NumPy's default (JAX's may be a value NumPy does not take: where=None)
        p = self._np_param(name)
        if defaults and p is not None and p.default is not p.empty and _simple(p.default):
            values.append(_spec_of_default(p.default))
            if isinstance(p.default, bool):
                values.append(not p.default)
        seen, unique = set(), []
        for value in values:
            key = key_of(value)
            if key not in seen:
                seen.add(key)
                unique.append(value)
        return unique

    def prove_params(self, args: list, kwargs: dict, required_by_jax: list, dtype=None) -> dict:
        """{parameter: record}: each parameter JAX's version has given each value of the
        grid (its "values"), with the base call's data, or that data cast to `dtype`."""
        params: dict[str, dict] = {}
        jax_params = self._jax_params()
        positional = [p for p in jax_params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        np_keywords = self._np_takes_keywords()
        for index, p in enumerate(positional + [p for p in jax_params if p.kind is p.KEYWORD_ONLY]):
            if p.name == "out":
                continue
            np_param = self._np_param(p.name)
            if np_param is None and not np_keywords:
                continue  # NumPy has no such parameter: nobody passes it
            record: dict[str, Any] = {}
            in_args = p.kind is not p.KEYWORD_ONLY and index < len(args) and p.name not in kwargs
            if in_args and self._is_data(args[index]):
                # data: proven by the dtypes, edges and alternates of the base call
                record["data"] = True
                values = self._values_for(p.name, required=True, defaults=False)
                if len(values) > 1:
                    record["values"] = {key_of(v): self.run(self._with(args, index, v), kwargs)
                                        for v in values}
                params[p.name] = record
                continue
            values = self._values_for(p.name, required=in_args)
            if in_args and key_of(args[index]) not in {key_of(v) for v in values}:
                values.insert(0, args[index])  # the base call's own value
            results = {}
            positional_only = (p.kind is p.POSITIONAL_ONLY or
                               (np_param is not None and np_param.kind is np_param.POSITIONAL_ONLY))
            for value in values:
                if in_args:
                    results[key_of(value)] = self.run_all(self._with(args, index, value), kwargs, dtype)
                elif positional_only:
                    if index == len(args):
                        results[key_of(value)] = self.run_all(list(args) + [value], kwargs, dtype)
                else:
                    results[key_of(value)] = self.run_all(args, {**kwargs, p.name: value}, dtype)
            for value in values:  # NumPy's option JAX spells otherwise (kind="stable")
                key = key_of(value)
                if not in_args and key in results and not _fine(results[key]):
                    results[key] = self._respelled(args, kwargs, p.name, value, dtype) or results[key]
            if not in_args and p.name in kwargs:
                results[OMITTED] = self.run_all(args, {k: v for k, v in kwargs.items() if k != p.name}, dtype)
                if p.name in required_by_jax:
                    record["required_by_jax"] = True
            if in_args:
                record["required"] = True
            if np_param is not None and np_param.default is not np_param.empty and \
                    _simple(np_param.default):
                record["numpy_default"] = key_of(_spec_of_default(np_param.default))
            record["values"] = results
            params[p.name] = record
        for p in jax_params:  # *varargs: gradient's spacings
            if p.kind is p.VAR_POSITIONAL and self.entry.get("nin") is None:
                values = self._values_for(p.name, required=False, defaults=False)
                if values:
                    params[p.name] = {"var_positional": True, "values": {
                        key_of(v): self.run_all(list(args) + [v], kwargs, dtype) for v in values}}
        # options both take through **kwargs, named by the grid (np.pad's constant_values)
        for name, values in self.spec.get("keywords", {}).items():
            params[name] = {"keyword": True, "values": {
                key_of(v): self.run_all(args, {**kwargs, name: v}, dtype) for v in values}}
        return params

    def _respelled(self, args: list, kwargs: dict, name: str, value, dtype=None) -> str | None:
        """AS_SPELLED where JAX, given the grid's spelling of `name=value` (`jax_spellings`:
        kind="stable" is stable=True), gives NumPy's result for the base data and its
        edges that tell sorts apart (ties, signed zeros, NaN); None where it does not."""
        spellings = {key_of(k): v for k, v in self.spec.get("jax_spellings", {}).get(name, {}).items()}
        spelled = spellings.get(key_of(value))
        if spelled is None:
            return None
        rest = {k: v for k, v in kwargs.items() if k != name}
        verdict = worst([self.run(args, {**kwargs, name: value}, dtype=dtype, edge=edge,
                                  jax_kwargs={**rest, **spelled})
                         for edge in (None, "ties", "negative-zero", "nan")])
        if not _fine(verdict):
            return None
        return f"{AS_SPELLED} " + ", ".join(f"{k}={v!r}" for k, v in spelled.items())

    @staticmethod
    def _with(args: list, index: int, value) -> list:
        new = list(args)
        new[index] = value
        return new


def _fine(verdict: str) -> bool:
    return verdict == SAME or verdict.startswith(NUMPY_RAISES)


def _fine_or_zero_signs(verdict: str) -> bool:
    return _fine(verdict) or _equal_numbers(verdict)


def _equal_numbers(verdict: str) -> bool:
    """Same, or equal numbers whose zeros' signs differ: what a re-run proving a mended
    form (data cast to float64, a Python number as an array) needs to show."""
    return verdict == SAME or verdict.startswith((f"{DIFFERS}: {UNSIGNED_ZEROS}",
                                                  f"{DIFFERS}: {SIGNED_ZEROS}"))


def _combined(first: str, second: str) -> str:
    """One verdict for a Python number given at either of two positions of `*args`: a
    wrapping (AS_ARRAY) proven at one position only proves nothing for the other."""
    if first == second or first.startswith(DIFFERS):
        return first
    if second.startswith(DIFFERS):
        return second
    return f"{DIFFERS}: by position, {first}; {second}"


def worst(verdicts: list[str]) -> str:
    for prefix in (DIFFERS, NUMPY_RAISES, SAME):
        for verdict in verdicts:
            if verdict.startswith(prefix):
                return verdict
    return verdicts[0]


def _flat(values):
    for value in values:
        if isinstance(value, list):
            yield from _flat(value)
        else:
            yield value


# --- ufunc methods -------------------------------------------------------------------------------


def method_entries(table: dict) -> dict[str, dict]:
    """numpy.add.reduce & co.: the methods JAX's ufunc has too."""
    out = {}
    for name, entry in table.items():
        if entry.get("kind") == "ufunc" and entry.get("jax"):
            for method in entry.get("jax_methods", ()):
                if method in UFUNC_METHODS and entry.get("nin") == 2:
                    out[f"{name}.{method}"] = {"jax": f"{entry['jax']}.{method}", "kind": "method",
                                               "method": method}
    return out


def _mentions(record, text: str) -> bool:
    if isinstance(record, dict):
        return any(_mentions(value, text) for value in record.values())
    return isinstance(record, str) and text in record


def _replaced(record, old: str, new: str):
    if isinstance(record, dict):
        return {key: _replaced(value, old, new) for key, value in record.items()}
    return record.replace(old, new) if isinstance(record, str) else record


def _holds_negative_zero(result, np) -> bool:
    if isinstance(result, (tuple, list)):
        return any(_holds_negative_zero(item, np) for item in result)
    if not isinstance(result, (np.ndarray, np.generic, float)):
        return False
    array = np.asarray(result)
    if array.dtype.kind not in "fc":
        return False
    parts = (array.real, array.imag) if array.dtype.kind == "c" else (array,)
    return any(bool(np.signbit(part[part == 0]).any()) for part in parts)
