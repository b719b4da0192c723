"""Where a finding is, for the formats that point into files (SARIF, GitHub annotations).
A module of its own, so that those formats do not import the package that loads them."""

from __future__ import annotations


def file_place(line: int | None, col: int | None, cell: int | None) -> tuple:
    """(line, column, message prefix) for tools that point into files. In a notebook the line
    and column count inside a cell, which is no place in the .ipynb file: none then, and the
    prefix names the place instead (`cell 3, line 2, col 5: `)."""
    if cell is None:
        return line, col, ""
    parts = [f"cell {cell}"] + [f"{label} {value}" for label, value in (("line", line), ("col", col))
                                if value]
    return None, None, ", ".join(parts) + ": "
