"""Parse: source text to a libcst module, or one clear error naming the file and line."""

from __future__ import annotations

import ast
import re

import libcst as cst

from np2jax.files import SourceError


def parse(text: str, path: str) -> cst.Module:
    return parse_with_ast(text, path)[0]


def parse_with_ast(text: str, path: str) -> tuple[cst.Module, ast.Module]:
    """The libcst module and CPython's ast of the same text, from one parse each."""
    # CPython's parser first: it refuses runaway nesting with a SyntaxError, where libcst's
    # native parser can crash the whole process (about 1500 nested parentheses).
    try:
        tree = compile(text, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:
        raise SourceError(path, f"syntax error: {error.msg}", error.lineno) from None
    except (ValueError, RecursionError, MemoryError) as error:
        raise SourceError(path, f"cannot parse: {type(error).__name__}: {error}") from None
    try:
        return cst.parse_module(text), tree
    except cst.ParserSyntaxError as exc:
        raise _syntax_error(text, path, exc) from None
    except RecursionError:
        raise SourceError(path, "expression nested too deeply to parse") from None


def _syntax_error(text: str, path: str, exc: cst.ParserSyntaxError) -> SourceError:
    """Python's own compiler words syntax errors best and places them exactly; libcst's
    message is the fallback (for code newer than this Python, say)."""
    try:
        compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as error:
        return SourceError(path, f"syntax error: {error.msg}", error.lineno)
    except (ValueError, RecursionError, MemoryError):
        pass
    message = re.sub(r"^parser error: error at \d+:\d+: ", "", str(exc.message).splitlines()[0])
    return SourceError(path, f"syntax error: {message}", exc.raw_line)
