"""What a rule reports: a finding at a position, and the change a fix made."""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass


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

    def _order(self) -> tuple:
        return (self.path, self.cell or 0, self.line, self.col, self.code, self.name,
                self.message, self.severity, self.fixable)

    def __lt__(self, other: Finding) -> bool:
        return self._order() < other._order()

    def as_dict(self) -> dict:
        return asdict(self)

    def format(self) -> str:
        return f"{self.where()}:{self.line}:{self.col}: {self.code} {self.message}"

    def where(self) -> str:
        """The file, and the cell of a notebook: `nb.ipynb:cell 3`."""
        return f"{self.path}:cell {self.cell}" if self.cell is not None else self.path
