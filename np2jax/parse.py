"""Parse: source text to a libcst module, or one clear error naming the file and line."""

from __future__ import annotations

import re

import libcst as cst

from np2jax.files import SourceError


def parse(text: str, path: str) -> cst.Module:
    try:
        return cst.parse_module(text)
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
