"""The JSON report: {"findings": [...], "errors": [...], then the command's keys}.

The keys are a stable interface (CI scripts read "findings", each with "path"); add keys,
never rename or remove them. docs/guide.md documents the shape.
"""

from __future__ import annotations

import json

from np2jax.findings import Finding


def error_dict(error) -> dict:
    return {"path": error.path, "line": error.line, "message": error.problem, "cell": error.cell}


def render_json(findings: list[Finding], errors=(), extra: dict | None = None) -> str:
    payload = {"findings": [f.as_dict() for f in findings],
               "errors": [error_dict(e) for e in errors]}
    payload.update(extra or {})
    # One item a line: indent=2 would run json's pure-Python encoder, which takes seconds on
    # a tree with tens of thousands of findings; each line here goes through the C encoder.
    lines = []
    for key, value in payload.items():
        if isinstance(value, list) and value:
            items = ",\n".join(f"    {json.dumps(item)}" for item in value)
            lines.append(f"  {json.dumps(key)}: [\n{items}\n  ]")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}"
