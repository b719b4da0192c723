"""Transparent decorators (np2jax.analysis.decorators): recognised by their shape, never by
their name; anything that may not hand back the wrapped function's result is not one."""

from __future__ import annotations

import ast
import textwrap

import libcst as cst
import pytest

from np2jax.analysis.decorators import DECORATOR, FACTORY, transparent_decorators, transparent_kind
from np2jax.tree import from_imports


def _function(source: str) -> cst.FunctionDef:
    (function,) = cst.parse_module(textwrap.dedent(source)).body
    return function


TRANSPARENT = [
    (DECORATOR, """
     def deco(fn):
         @functools.wraps(fn)
         def wrapper(*args, **kwargs):
             args = [np.array(a) for a in args]
             return fn(*args, **kwargs)
         return wrapper
     """),
    (DECORATOR, """
     def deco(fn):
         def wrapper(x):
             if x is None:
                 return fn(0)
             return fn(x)
         return wrapper
     """),
    (FACTORY, """
     def factory(*names):
         def decorator(fn):
             @wraps(fn)
             def wrapper(*args, **kwargs):
                 return fn(*args, **kwargs)
             return wrapper
         return decorator
     """),
]

NOT_TRANSPARENT = [
    # returns a stored value: a second call gives the same array
    """
    def cached(fn):
        store = {}
        def wrapper(n):
            if n not in store:
                store[n] = fn(n)
            return store[n]
        return wrapper
    """,
    # changes the result
    """
    def doubled(fn):
        def wrapper(x):
            return 2 * fn(x)
        return wrapper
    """,
    # may fall off its end (returns None)
    """
    def maybe(fn):
        def wrapper(x):
            if x:
                return fn(x)
        return wrapper
    """,
    # `fn` bound again: the call is not the wrapped function's
    """
    def swapped(fn):
        def wrapper(x):
            return fn(x)
        fn = np.copy
        return wrapper
    """,
    # another decorator on the wrapper
    """
    def memo(fn):
        @functools.lru_cache
        def wrapper(x):
            return fn(x)
        return wrapper
    """,
    # returns the function itself, registered elsewhere
    """
    def register(fn):
        REGISTRY.append(fn)
        return fn
    """,
    # a factory whose decorator is not transparent
    """
    def factory(k):
        def decorator(fn):
            def wrapper(x):
                return fn(x) * k
            return wrapper
        return decorator
    """,
    # a generator wrapper
    """
    def gen(fn):
        def wrapper(x):
            yield fn(x)
            return fn(x)
        return wrapper
    """,
]


@pytest.mark.parametrize("kind, source", TRANSPARENT)
def test_transparent_decorators_are_recognised(kind, source):
    assert transparent_kind(_function(source)) == kind


@pytest.mark.parametrize("source", NOT_TRANSPARENT)
def test_decorators_that_may_not_hand_back_the_result_are_not_transparent(source):
    assert transparent_kind(_function(source)) is None


def test_a_decorator_bound_twice_in_its_module_is_not_exported():
    source = textwrap.dedent(TRANSPARENT[0][1]) + "\ndeco = other\n"
    assert transparent_decorators(cst.parse_module(source)) == {}
    assert transparent_decorators(cst.parse_module(textwrap.dedent(TRANSPARENT[0][1]))) == {"deco": DECORATOR}


def test_imported_names_are_absolute():
    module = ast.parse("from .utils import a, b as c\nfrom ..x.y import z\nimport numpy as np\n"
                       "from . import sibling\nfrom .star import *\nfrom os import path as p; import re\n"
                       "if True:\n    from .nested import hidden\n")
    assert from_imports(module, "pkg.sub.mod", False) == {
        "a": "pkg.sub.utils.a", "c": "pkg.sub.utils.b", "z": "pkg.x.y.z",
        "sibling": "pkg.sub.sibling", "p": "os.path"}
    assert from_imports(module, "pkg.sub", True)["a"] == "pkg.sub.utils.a"
