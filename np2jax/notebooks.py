"""Jupyter notebooks (.ipynb): converted and checked cell by cell.

The code cells of a notebook share one namespace and run in order, so they are analysed as
one module: joined in order, each cell after a marker statement, with IPython's magics,
shell escapes and help lines (`%time f(x)`, `!pip list`, `x?`) replaced by placeholder
statements (see _placeholder) that are put back byte for byte afterwards. The converted
module is split back into its cells at the markers; when the markers or placeholders did
not survive where they were, the notebook is refused rather than written. The body of a
`%%time` or `%%capture` cell is converted like any cell; a cell run by another cell magic
(`%%timeit`, `%%bash`, ...) is kept as it is and not analysed. Markdown and raw cells, the
notebook's and the cells' metadata are kept; a code cell whose source changed loses its
outputs and execution count, which no longer match it.

Findings and errors name the cell, counted from 1 over all cells (markdown too), and the
line in it: `nb.ipynb:cell 3:2:5: NJ201 ...`.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import json
import keyword
import re
from dataclasses import dataclass, field, replace

from np2jax.config import Config
from np2jax.files import SourceError, may_use_numpy
from np2jax.pipeline import FileResult, may_call_tree_mutator, process
from np2jax.tree import ModuleContext

_MARKER = '"np2jax-cell-{}"'  # a statement, not a comment: a removed import takes its comments
_PLACEHOLDER_LINE = re.compile(r"^.*  # np2jax-magic-(\d+)$")
_PLACEHOLDER_CALL = re.compile(r"_np2jax_magic_(\d+)_\([\w, ]*\)")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_SHELL_PYTHON = re.compile(r"\{([^{}]*)\}|\$([A-Za-z_]\w*)")
# Line magics that run no Python code of the notebook.
_NO_PYTHON_MAGICS = frozenset((
    "matplotlib", "pip", "conda", "load_ext", "reload_ext", "unload_ext", "autoreload",
    "aimport", "config", "cd", "pwd", "ls", "env", "who", "whos", "who_ls", "history",
    "lsmagic", "magic", "precision", "xmode", "alias", "bookmark", "dhist", "pdb",
    "automagic", "autocall", "colors", "doctest_mode",
    # cell magics whose body is not Python run in the notebook
    "bash", "sh", "script", "writefile", "file", "html", "HTML", "markdown", "latex",
    "javascript", "js", "svg", "perl", "ruby", "python2", "python3", "pypy", "sx", "system"))
# A cell of its own before the first code cell when that one is opaque, for the imports the
# conversion adds at the top; a statement, or the first marker would be the docstring.
_HEADER, _HEADER_LINE = -1, "pass  # np2jax-header"
_HELP = re.compile(r"^[\w.*\[\]]+\?{1,2}$")  # obj?  np.sum??  np.*load*?
_MAGIC_ASSIGNMENT = re.compile(r"^[A-Za-z_][\w.]*(\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[!%]")  # x = !ls
_COMPILE_FLAGS = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT  # IPython runs `await x`


def load_notebook(text: str, path: str) -> dict:
    """The notebook's JSON, checked to have the shape of nbformat 4 (a list of cells, each
    with a type and a text source), or one SourceError."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SourceError(path, f"invalid notebook JSON: {exc.msg} (column {exc.colno})",
                          exc.lineno) from None
    except RecursionError:
        raise SourceError(path, "invalid notebook JSON: nested too deeply") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise SourceError(path, "not a Jupyter notebook in nbformat 4: no list of cells")
    for number, cell in enumerate(data["cells"], start=1):
        if not (isinstance(cell, dict) and isinstance(cell.get("cell_type"), str)
                and _is_source(cell.get("source"))):
            raise SourceError(path, "not a notebook cell: it needs a cell_type and a source "
                              "(a string or a list of strings)", cell=number)
    return data


def _is_source(source) -> bool:
    return isinstance(source, str) or (
        isinstance(source, list) and all(isinstance(s, str) for s in source))


def cell_text(cell: dict) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def _lines(text: str) -> list[str]:
    """Lines with their endings, split at \\n only (as in a notebook's list-of-lines source;
    str.splitlines would also split at form feeds and other separators)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    return lines + [parts[-1]] if parts[-1] else lines


def _is_python(data: dict) -> bool:
    metadata = data.get("metadata")
    if not isinstance(metadata, dict):
        return True
    for key, name_key in (("language_info", "name"), ("kernelspec", "language")):
        info = metadata.get(key)
        if isinstance(info, dict) and isinstance(info.get(name_key), str):
            return info[name_key].lower() == "python"
    return True


# Cell magics whose body runs as an ordinary cell, in the notebook's namespace: the body is
# converted (the magic line is kept like a line magic). Other cell magics run their body
# elsewhere (%%timeit in a function, %%bash in a shell): such a cell is kept as it is, and
# stands in the analysis as one magic that uses the names of its body (see _placeholder).
_PYTHON_CELL_MAGICS = ("time", "capture")


def _is_opaque(code: str) -> bool:
    """A cell run by a cell magic that does not run it as a cell of Python."""
    stripped = code.lstrip()
    if not stripped.startswith("%%"):
        return False
    words = stripped[2:].split(None, 1)
    return not words or words[0] not in _PYTHON_CELL_MAGICS


def _is_magic(line: str) -> bool:
    stripped = line.strip()
    return (stripped.startswith(("%", "!", "?")) or bool(_HELP.match(stripped))
            or bool(_MAGIC_ASSIGNMENT.match(stripped)))


def _syntax_error(code: str) -> Exception | None:
    try:
        compile(code, "<cell>", "exec", _COMPILE_FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        return error
    return None


@dataclass(frozen=True)
class _Magic:
    line: str  # as in the cell, without its line ending
    placeholder: str  # the line standing for it in the joined module
    cell: int  # the notebook index of its cell


@dataclass
class _Joined:
    """The code cells as one module, and how to map it back."""

    lines: list[str] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)  # joined line (1-based) each cell starts at
    cells: list[int] = field(default_factory=list)  # the notebook index of each joined cell
    codes: list[str] = field(default_factory=list)  # each joined cell's source as it was
    pieces: list[str] = field(default_factory=list)  # ... and as joined (placeholders in)
    magics: list[_Magic] = field(default_factory=list)  # by placeholder number
    opaque: set[int] = field(default_factory=set)  # cells standing as one magic

    def add(self, index: int, code: str, prepared: str) -> None:
        if self.cells:
            self.lines.append(_MARKER.format(index) + "\n")
        lines = _lines(prepared)
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        self.starts.append(len(self.lines) + 1)
        self.cells.append(index)
        self.codes.append(code)
        self.pieces.append("".join(lines))
        self.lines.extend(lines)

    def magic_column(self, line: int, col: int) -> int:
        """A column in the joined module's line -> in the cell's line: on a magic's
        placeholder, where the name found there stands in the magic (`%timeit np.sum(x)`)."""
        match = _PLACEHOLDER_LINE.match(self.lines[line - 1].rstrip("\r\n"))
        if match is None:
            return col
        magic = self.magics[int(match.group(1))]
        name = _IDENTIFIER.match(magic.placeholder, col - 1)
        found = re.search(rf"\b{name.group()}\b", magic.line) if name else None
        return found.start() + 1 if found else len(magic.line) - len(magic.line.lstrip()) + 1

    def cell_fix(self, fix: dict | None, cell: int) -> dict | None:
        """A fix's edit (np2jax.edits) with its rows counted in the cell; none when it
        touches a magic's placeholder or leaves the cell."""
        if fix is None:
            return None
        edits = []
        for edit in fix["edits"]:
            first, last = edit["location"]["row"], edit["end_location"]["row"]
            if (self.locate(first)[0] != cell or self.locate(last)[0] != cell
                    or "np2jax" in edit["content"]
                    or any(_PLACEHOLDER_LINE.match(self.lines[row - 1].rstrip("\r\n"))
                           for row in range(first, min(last, len(self.lines)) + 1))):
                return None
            edits.append({**edit, "location": {**edit["location"], "row": self.locate(first)[1]},
                          "end_location": {**edit["end_location"], "row": self.locate(last)[1]}})
        together = []
        for other in fix["applies_with"]:
            where, row = self.locate(other["location"]["row"])
            together.append({**other, "cell": where,
                             "location": {**other["location"], "row": row}})
        return {**fix, "edits": edits, "applies_with": together}

    def locate(self, line: int) -> tuple[int, int]:
        """Joined line -> (cell number counted from 1, line in the cell)."""
        at = max(bisect.bisect_right(self.starts, line) - 1, 0)
        return self.cells[at] + 1, line - self.starts[at] + 1


def _prepare(code: str, path: str, index: int, joined: _Joined) -> str:
    """The cell as Python: each magic, shell or help line replaced by a placeholder (a line
    ending in a backslash continues it on the next line)."""
    if _syntax_error(code) is None:
        return code  # plain Python (a `%` or `!` line inside a string stays as it is)
    out: list[str] = []
    lines = _lines(code)
    at = 0
    while at < len(lines):
        if not _is_magic(lines[at].rstrip("\r\n")):
            out.append(lines[at])
            at += 1
            continue
        group = [lines[at]]
        while group[-1].rstrip("\r\n").endswith("\\") and at + len(group) < len(lines):
            group.append(lines[at + len(group)])
        out.extend(_placeholders(group, index, joined))
        at += len(group)
    prepared = "".join(out)
    error = _syntax_error(prepared)
    if error is not None:
        if isinstance(error, SyntaxError):
            raise SourceError(path, f"syntax error: {error.msg}", error.lineno, cell=index + 1)
        raise SourceError(path, f"cannot parse: {type(error).__name__}: {error}", cell=index + 1)
    return prepared


def _placeholders(group: list[str], index: int, joined: _Joined) -> list[str]:
    """The lines of one magic as placeholder lines, at the indentation of its first line."""
    first = group[0].rstrip("\r\n")
    indent = first[: len(first) - len(first.lstrip())]
    out = []
    for offset, line in enumerate(group):
        text = line.rstrip("\r\n")
        number = len(joined.magics)
        statement = _placeholder(number, "".join(group)) if offset == 0 else "pass"
        placeholder = f"{indent}{statement}  # np2jax-magic-{number}"
        joined.magics.append(_Magic(text, placeholder, index))
        out.append(placeholder + line[len(text):])
    return out


def _placeholder(number: int, magic: str) -> str:
    """A statement standing for the magic in the analysis: it assigns what the magic assigns
    (`files = !ls`) and hands the names of the Python code the magic runs (`%timeit f(x)`,
    `!echo {x}`) to a function the analysis cannot see, so that nothing they reach is
    rewritten behind the magic's back, and an import the magic uses stays."""
    stripped = magic.strip()
    target = ""
    assignment = _MAGIC_ASSIGNMENT.match(stripped)
    if assignment:
        target, stripped = stripped[: assignment.end() - 1].rstrip(" =") + " = ", \
            stripped[assignment.end() - 1:]
    if stripped.startswith("!"):  # a shell line runs Python only in {expr} and $name
        python = " ".join(a or b for a, b in _SHELL_PYTHON.findall(stripped))
    elif stripped.startswith("%"):
        words = stripped.lstrip("%").split(None, 1)
        python = words[1] if len(words) > 1 and words[0] not in _NO_PYTHON_MAGICS else ""
    else:  # help: obj? runs nothing
        python = ""
    names = [n for n in dict.fromkeys(_IDENTIFIER.findall(python)) if not keyword.iskeyword(n)]
    if not names and not target:
        return "pass"
    return f"{target}_np2jax_magic_{number}_({', '.join(names)})"


def process_notebook(text: str, config: Config, path: str = "<notebook>", rewrite: bool = True,
                     context: ModuleContext | None = None, edits: bool = False) -> FileResult:
    """Convert (or, with rewrite=False, check) a notebook's JSON text; the result's texts are
    the notebook files' texts, its findings name the cells."""
    data = load_notebook(text, path)
    if not (may_use_numpy(text) or may_call_tree_mutator(text, context or ModuleContext())) \
            or not _is_python(data):
        return FileResult(path, text, text)
    codes = [(index, cell_text(cell)) for index, cell in enumerate(data["cells"])
             if cell["cell_type"] == "code"]
    if all(_is_opaque(code) for _, code in codes):
        return FileResult(path, text, text)
    joined = _Joined()
    if _is_opaque(codes[0][1]):
        joined.add(_HEADER, "", _HEADER_LINE)  # what goes before the first cell must not go into it
    for index, code in codes:
        if _is_opaque(code):
            joined.opaque.add(index)
            joined.add(index, code, "".join(_placeholders(_lines(code), index, joined)))
        else:
            joined.add(index, code, _prepare(code, path, index, joined))
    try:
        result = process("".join(joined.lines), config, path, rewrite, context or ModuleContext(),
                         edits)
    except SourceError as exc:
        if exc.line is None:
            raise
        cell, line = joined.locate(exc.line)
        raise SourceError(path, exc.problem, line, cell) from None

    def in_cell(finding):
        cell, line = joined.locate(finding.line)
        message = _PLACEHOLDER_CALL.sub(
            lambda m: joined.magics[int(m.group(1))].line.strip(), finding.message)
        return replace(finding, line=line, cell=cell, message=message,
                       col=joined.magic_column(finding.line, finding.col),
                       fix=joined.cell_fix(finding.fix, cell))

    converted = text
    if rewrite and result.changed:
        new_codes = _split(result.converted, joined, path)
        cells = data["cells"]
        changed = False
        for index, new in new_codes.items():
            if new == cell_text(cells[index]):
                continue
            changed = True
            cell = cells[index]
            cell["source"] = new if isinstance(cell["source"], str) else _lines(new)
            if "outputs" in cell:
                cell["outputs"] = []
            if "execution_count" in cell:
                cell["execution_count"] = None
        if changed:
            converted = dump_notebook(data, text)
    return FileResult(path, text, converted,
                      findings=sorted(map(in_cell, result.findings)),
                      changes=sorted(map(in_cell, result.changes)),
                      applied_keys=result.applied_keys, tree_references=result.tree_references,
                      coverage=result.coverage)


def _split(converted: str, joined: _Joined, path: str) -> dict[int, str]:
    """The converted module back into cells (notebook index -> source), magics restored."""
    def refuse(why: str) -> SourceError:
        return SourceError(path, f"the converted code could not be split back into its cells "
                           f"({why}); the notebook was left as it was; please report it")

    markers = {_MARKER.format(index): index for index in joined.cells[1:]}
    segments: dict[int, list[str]] = {joined.cells[0]: []}
    current = joined.cells[0]
    for line in _lines(converted):
        index = markers.get(line.rstrip("\r\n"))
        if index is None:
            segments[current].append(line)
        elif index in segments:
            raise refuse(f"cell {index + 1} was marked twice")
        else:
            current = index
            segments[current] = []
    if list(segments) != joined.cells:
        raise refuse("a cell marker moved or went missing")
    restored: set[int] = set()
    new_codes = {}
    for index, code, piece in zip(joined.cells, joined.codes, joined.pieces):
        lines = segments[index]
        if "".join(lines) == piece:
            new_codes[index] = code
            restored.update(n for n, magic in enumerate(joined.magics) if magic.cell == index)
            continue
        for at, line in enumerate(lines):
            text = line.rstrip("\r\n")
            match = _PLACEHOLDER_LINE.match(text)
            if match is None and index in joined.opaque:
                raise refuse(f"code was added to cell {index + 1}, run by a cell magic")
            if match:
                number = int(match.group(1))
                magic = joined.magics[number] if number < len(joined.magics) else None
                if magic is None or magic.cell != index or number in restored:
                    raise refuse(f"a magic line moved out of cell {index + 1}")
                if magic.placeholder != text:
                    raise refuse(f"the conversion changed the magic `{magic.line.strip()}`")
                restored.add(number)
                lines[at] = magic.line + line[len(text):]
        # the cell keeps its own trailing newlines (a notebook cell usually has none)
        new_codes[index] = "".join(lines).rstrip("\r\n") + code[len(code.rstrip("\r\n")):]
    if len(restored) != len(joined.magics):
        raise refuse("a magic line went missing")
    header = new_codes.pop(_HEADER, "")
    if header:  # imports the conversion added: to the first cell not run by a cell magic
        if not header.endswith(_HEADER_LINE):
            raise refuse("code was added after the start of the first cell")
        added = header[: -len(_HEADER_LINE)].rstrip("\r\n")
        first = next(index for index in joined.cells if index not in joined.opaque | {_HEADER})
        new_codes[first] = added + "\n\n" + new_codes[first] if added else new_codes[first]
    return new_codes


def dump_notebook(data: dict, original: str) -> str:
    """The notebook's JSON in the style of the original text: its indentation, its escaping
    of non-ASCII characters, its final newline (nbformat writes indent=1, no escaping, and a
    final newline). Keys keep their order."""
    newline = "\n" if original.endswith("\n") else ""
    found = re.match(r"\{\r?\n( *)\S", original)
    indent = len(found.group(1)) if found else None
    before = json.loads(original)
    for candidate in dict.fromkeys((indent, 1, 2, 4, None)):
        for ensure_ascii in (False, True):
            if json.dumps(before, indent=candidate, ensure_ascii=ensure_ascii) + newline == original:
                return json.dumps(data, indent=candidate, ensure_ascii=ensure_ascii) + newline
    return json.dumps(data, indent=indent, ensure_ascii=False) + newline


def cell_pairs(original: str, converted: str) -> list[tuple[int, str, str]]:
    """(cell number from 1, source before, source after) of each cell."""
    before, after = json.loads(original)["cells"], json.loads(converted)["cells"]
    return [(number, cell_text(old), cell_text(new))
            for number, (old, new) in enumerate(zip(before, after), start=1)]


def changed_cells(original: str, converted: str) -> list[tuple[int, str, str]]:
    """(cell number from 1, source before, source after) of each cell conversion changed."""
    return [(number, old, new) for number, old, new in cell_pairs(original, converted)
            if old != new]


def cell_diff(path: str, original: str, converted: str) -> str:
    """A unified diff of each changed cell's source, headed `a/nb.ipynb:cell 3`."""
    parts = []
    for number, old_text, new_text in changed_cells(original, converted):
        parts.extend(difflib.unified_diff(
            _lines(_ending(old_text)), _lines(_ending(new_text)),
            fromfile=f"a/{path}:cell {number}", tofile=f"b/{path}:cell {number}"))
    return "".join(parts)


def _ending(text: str) -> str:
    return text if text.endswith("\n") or not text else text + "\n"
