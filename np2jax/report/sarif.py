"""SARIF 2.1.0 (OASIS), the format code-scanning services read (GitHub code scanning, ...).

One run: tool.driver lists every rule of the catalog with its documentation; each finding is
a result pointing at its rule by id and index; files that could not be processed are
toolExecutionNotifications of level error, so the log says the run was incomplete. Paths are
relative to %SRCROOT% (the working directory) when they lie under it. A notebook's finding
has no region (its line counts inside a cell): the message names the cell and line, and so do
its properties. tests/data holds the official schema the tests validate against.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from np2jax import __version__
from np2jax.catalog import RuleDoc, rule_docs
from np2jax.report.places import file_place

if TYPE_CHECKING:
    from np2jax.report import RunReport

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


@cache
def project_urls() -> dict[str, str]:
    """[project.urls] of the installed np2jax ("Homepage", "Documentation", ...), from its
    metadata, so the links in the log follow pyproject.toml; empty when it declares none."""
    from importlib import metadata

    try:
        entries = metadata.metadata("np2jax").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return {}
    return {name.strip(): url.strip() for name, _, url in (e.partition(",") for e in entries)}


def rule_anchor(doc: RuleDoc) -> str:
    """The heading anchor of the rule in docs/rules.md ("## NJ201 `subscript-assignment`")."""
    return f"{doc.code.lower()}-{doc.name}"


def rule_descriptor(doc: RuleDoc) -> dict:
    markdown = doc.render_markdown()
    descriptor = {
        "id": doc.code,
        "name": doc.name,
        "shortDescription": {"text": doc.summary},
        "fullDescription": {"text": doc.doc["what"].strip()},
        "help": {"text": markdown, "markdown": markdown},
        "defaultConfiguration": {"level": LEVELS[doc.severity]},
        "properties": {"fix": doc.fix, "tags": ["numpy-to-jax", doc.severity]},
    }
    docs_url = project_urls().get("Documentation")
    if docs_url:
        descriptor["helpUri"] = f"{docs_url.rstrip('/')}/rules.md#{rule_anchor(doc)}"
    return descriptor


def artifact_location(path: str, root: Path) -> dict:
    """A path relative to %SRCROOT% when it is under it, else an absolute file: URI; either
    percent-encoded (a space, or a ':' in the first segment, would not be a URI reference)."""
    absolute = Path(path).resolve()
    try:
        relative = absolute.relative_to(root)
    except ValueError:
        return {"uri": absolute.as_uri()}
    return {"uri": quote(relative.as_posix()), "uriBaseId": SRCROOT}


def location(path: str, line: int | None, col: int | None, root: Path) -> dict:
    physical: dict = {"artifactLocation": artifact_location(path, root)}
    if line:
        physical["region"] = {"startLine": line, **({"startColumn": col} if col else {})}
    return {"physicalLocation": physical}


def render_sarif(report: RunReport) -> str:
    root = Path.cwd().resolve()
    docs = rule_docs()
    index = {code: i for i, code in enumerate(docs)}
    driver = {"name": "np2jax", "version": __version__, "semanticVersion": __version__,
              "rules": [rule_descriptor(doc) for doc in docs.values()]}
    homepage = project_urls().get("Homepage") or project_urls().get("Source")
    if homepage:
        driver["informationUri"] = homepage
    results = []
    for finding in report.findings:
        line, col, prefix = file_place(finding.line, finding.col, finding.cell)
        properties = {"fixable": finding.fixable}
        if finding.cell is not None:
            properties.update(cell=finding.cell, line=finding.line, col=finding.col)
        result = {"ruleId": finding.code,
                  "level": LEVELS.get(finding.severity, "warning"),
                  "message": {"text": prefix + finding.message},
                  "locations": [location(finding.path, line, col, root)],
                  "properties": properties}
        if finding.code in index:
            result["ruleIndex"] = index[finding.code]
        results.append(result)
    notifications = []
    for error in report.errors:
        line, _, prefix = file_place(error.line, None, error.cell)
        notifications.append({"level": "error", "message": {"text": prefix + error.problem},
                              "locations": [location(error.path, line, None, root)]})
    invocation = {"executionSuccessful": not report.errors,
                  "toolExecutionNotifications": notifications}
    run = {"tool": {"driver": driver},
           "invocations": [invocation],
           "originalUriBaseIds": {SRCROOT: {"uri": root.as_uri().rstrip("/") + "/"}},
           "columnKind": "unicodeCodePoints",
           "results": results,
           "properties": {"command": report.command, "summary": report.counts}}
    if report.verify is not None:
        run["properties"]["verify"] = report.verify.as_dict()
    return json.dumps({"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}, indent=2)
