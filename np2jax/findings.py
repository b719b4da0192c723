"""What a rule reports: a finding at a position, and the change a fix made."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int
    col: int
    code: str
    name: str
    message: str
    severity: str  # "error": JAX cannot run it as written; "warning": results may differ;
    # "info": a rewrite the engine made
    fixable: bool  # the engine rewrote (or, in check, would rewrite) this code

    def as_dict(self) -> dict:
        return asdict(self)

    def format(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}"
