"""What a rule reports: a finding at a position, and the change a fix made; what one file's
processing gives. Light on purpose: the cache hands these back without loading libcst."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field


@functools.total_ordering
@dataclass(frozen=True)
class Finding:
    path: str
    line: int  # in a notebook: the line in its cell
    col: int
    code: str
    name: str
    message: str
    severity: str  # "error": JAX cannot run it as written; "warning": results may differ;
    # "info": a rewrite the engine made
    fixable: bool  # the engine rewrote (or, in check, would rewrite) this code
    cell: int | None = None  # in a notebook: the cell, counted from 1 (markdown cells too)
    # check: the edit convert makes for a fixable finding, as ruff's JSON has it (np2jax.edits)
    fix: dict | None = field(default=None, hash=False)

    def order(self) -> tuple:
        """The sort key: by file, cell, line and column, then the rest. sorted(key=Finding.order)
        computes it once a finding, where sorted() through __lt__ computes it twice a comparison."""
        return (self.path, self.cell or 0, self.line, self.col, self.code, self.name,
                self.message, self.severity, self.fixable)

    def __lt__(self, other: Finding) -> bool:
        return self.order() < other.order()

    def row(self) -> tuple:
        """Every field but the path, in order: how stored results keep a finding (compact)."""
        row = (self.line, self.col, self.code, self.name, self.message, self.severity,
               self.fixable, self.cell)
        return row if self.fix is None else (*row, self.fix)

    def as_dict(self) -> dict:
        # every field is a plain value: a shallow copy (asdict deep-copies, slow on big trees)
        fields = dict(self.__dict__)
        if fields["fix"] is None:  # only check's fixable findings (and island edges) have one
            del fields["fix"]
        return fields

    def format(self) -> str:
        return f"{self.where()}:{self.line}:{self.col}: {self.code} {self.message}"

    def where(self) -> str:
        """The file, and the cell of a notebook: `nb.ipynb:cell 3`."""
        return f"{self.path}:cell {self.cell}" if self.cell is not None else self.path


@dataclass(frozen=True)
class Coverage:
    """How much of a file's NumPy moved to JAX: its NumPy/SciPy call sites (calls of a name
    of numpy or scipy: `np.sum(x)`, `np.add.reduce(x)`, `np.random.default_rng(0)`,
    `scipy.special.erf(x)`; not methods of arrays or generators, `x.sum()`, `rng.normal()`),
    how many of them are JAX code after the conversion (check: would be), and how many of
    the others np2jax keeps on NumPy on purpose, with no finding (I/O, printing, testing,
    np.errstate, host-side shape arithmetic)."""

    call_sites: int = 0
    moved: int = 0
    on_purpose: int = 0
    # the NumPy calls np2jax added at the edge of NumPy islands (`np.array(...)` copies,
    # `np.asarray(v)` reads: np2jax.analysis.islands), which are no call sites of the program
    boundaries: int = 0

    def __add__(self, other: Coverage) -> Coverage:
        return Coverage(self.call_sites + other.call_sites, self.moved + other.moved,
                        self.on_purpose + other.on_purpose, self.boundaries + other.boundaries)

    @property
    def left(self) -> int:
        """The call sites still on NumPy, on purpose or not."""
        return self.call_sites - self.moved

    @property
    def percent(self) -> float | None:
        """The share moved, in percent; None for a file without NumPy calls."""
        return 100.0 * self.moved / self.call_sites if self.call_sites else None

    def summary(self) -> str:
        """`moved to JAX: 412 of 480 NumPy call sites (86%)`, and those kept on purpose."""
        if not self.call_sites:
            return "moved to JAX: no NumPy call sites"
        kept = f"; {self.on_purpose} kept on NumPy on purpose" if self.on_purpose else ""
        return (f"moved to JAX: {self.moved} of {self.call_sites} NumPy call sites "
                f"({format_percent(self.percent)}){kept}")

    def as_dict(self) -> dict:
        percent = self.percent
        return {"call_sites": self.call_sites, "moved": self.moved, "left": self.left,
                "on_purpose": self.on_purpose,
                "percent": None if percent is None else round(percent, 1),
                "boundaries": self.boundaries}

    def row(self) -> list[int]:
        return [self.call_sites, self.moved, self.on_purpose, self.boundaries]


def format_percent(percent: float) -> str:
    """Whole percents, never rounded up to 100% nor down to 0% (99.6% is `99%`)."""
    if 99 < percent < 100:
        return "99%"
    if 0 < percent < 1:
        return "<1%"
    return f"{round(percent)}%"


@dataclass
class FileResult:
    path: str
    original: str
    converted: str
    findings: list[Finding] = field(default_factory=list)  # what conversion leaves to you
    changes: list[Finding] = field(default_factory=list)  # what conversion rewrote
    # for the tree's cross-module check (np2jax.tree): the keys of the applied fixes, and
    # how many references to other modules' rewritten functions this file makes
    applied_keys: list = field(default_factory=list)
    tree_references: dict = field(default_factory=dict)
    mutators: dict = field(default_factory=dict)  # function name -> (position, param), rewritable
    # the functions refused only because other files use them, which could be rewritten
    # together with their calls there (the tree decides: np2jax.engine.process_tree)
    exportable_mutators: dict = field(default_factory=dict)
    coverage: Coverage = Coverage()  # how much of the file's NumPy moved to JAX
    # what the module's functions other files use do with their arguments and returns
    # (np2jax.analysis.effects): name -> (every return a fresh JAX array, the parameters it
    # only reads as ((position or None, name), ...), the decorators of other modules that
    # must be transparent for this to hold as ((qualified name, kind), ...))
    effects: dict = field(default_factory=dict)
    # the imported functions whose effects this file's analysis asked for
    wanted_effects: list = field(default_factory=list)
    # for the decorators of other files' functions (np2jax.analysis.decorators): this
    # module's transparent decorators (name -> kind), and what its `from M import f` bind
    transparent_decorators: dict = field(default_factory=dict)
    from_imports: dict = field(default_factory=dict)
    # the configuration's keep-numpy entries that named a function of this file
    kept_entries: list = field(default_factory=list)
    # the module-level functions kept on NumPy that write, return or keep an argument:
    # name -> ((position or None, name), ...) of those parameters (np2jax.tree)
    numpy_params: dict = field(default_factory=dict)
    # with --jit: qualified name of another module's function -> the arguments this file
    # passes it that are not Python values, [[position or None, keyword or None], ...]
    array_arguments: dict = field(default_factory=dict)
    # with --jit: this module's functions compiled with jax.jit: name -> (signature, static
    # argument names) (np2jax.jit.plan.compiled_exports)
    compiled: dict = field(default_factory=dict)
    # qualified name of another module's function -> the string or object array this file
    # passes it, as code (np2jax.analysis.module.object_arguments)
    object_arguments: dict = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return self.converted != self.original

    def to_json(self) -> dict:
        """Everything but the path and the original text (the cache knows both); findings as
        rows (Finding.row)."""
        return {"converted": self.converted if self.changed else None,
                "findings": [f.row() for f in self.findings],
                "changes": [c.row() for c in self.changes],
                "applied_keys": self.applied_keys, "tree_references": self.tree_references,
                "mutators": self.mutators, "exportable_mutators": self.exportable_mutators,
                "coverage": self.coverage.row(),
                "effects": self.effects, "wanted_effects": self.wanted_effects,
                "transparent_decorators": self.transparent_decorators,
                "from_imports": self.from_imports,
                "kept_entries": self.kept_entries, "numpy_params": self.numpy_params,
                "array_arguments": self.array_arguments, "compiled": self.compiled,
                "object_arguments": self.object_arguments}

    @classmethod
    def from_json(cls, data: dict, path: str, original: str) -> FileResult:
        converted = data["converted"]
        return cls(path, original, original if converted is None else converted,
                   findings=[Finding(path, *row) for row in data["findings"]],
                   changes=[Finding(path, *row) for row in data["changes"]],
                   applied_keys=[tuple(k) for k in data["applied_keys"]],
                   tree_references=dict(data["tree_references"]),
                   mutators={k: tuple(v) for k, v in data["mutators"].items()},
                   exportable_mutators={k: tuple(v)
                                        for k, v in data["exportable_mutators"].items()},
                   coverage=Coverage(*data["coverage"]),
                   effects={k: (bool(fresh), tuple(tuple(p) for p in read_only),
                                tuple(tuple(d) for d in needs))
                            for k, (fresh, read_only, needs) in data.get("effects", {}).items()},
                   wanted_effects=list(data.get("wanted_effects", [])),
                   transparent_decorators=dict(data.get("transparent_decorators", {})),
                   from_imports=dict(data.get("from_imports", {})),
                   kept_entries=list(data.get("kept_entries", [])),
                   numpy_params={k: tuple(tuple(p) for p in v)
                                 for k, v in data.get("numpy_params", {}).items()},
                   array_arguments={k: [tuple(a) for a in v]
                                    for k, v in data.get("array_arguments", {}).items()},
                   compiled={k: (signature, tuple(static))
                             for k, (signature, static) in data.get("compiled", {}).items()},
                   object_arguments=dict(data.get("object_arguments", {})))
