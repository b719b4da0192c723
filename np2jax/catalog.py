"""The rule catalog: rule docs from rules/*.toml and the API table from rules/api/.

Data only; importing this module pulls in neither libcst nor jax, so `np2jax rule` and
`np2jax check` start fast.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

DOC_SECTIONS = (
    ("what", "What it does"),
    ("why", "Why"),
    ("example", "Example"),
    ("converted", "Converted form"),
    ("fix_safety", "Fix safety"),
    ("not_converted", "What it does not convert"),
)
SEVERITIES = ("error", "warning", "info")
FIX_KINDS = ("safe", "none")
CONFIG_KEYS = ("jit", "x64", "interface")


class CatalogError(Exception):
    """A rule file in the catalog is malformed."""


@dataclass(frozen=True)
class InvalidCase:
    code: str
    expected: str | None  # the converted text, for rules that fix


@dataclass(frozen=True)
class RuleDoc:
    code: str
    name: str
    summary: str
    message: str
    severity: str
    fix: str
    doc: dict[str, str]
    valid: tuple[str, ...]
    invalid: tuple[InvalidCase, ...]
    # the settings its example and cases convert with: {"jit": True} for the --jit rules,
    # {"x64": False} for what only the 32-bit mode reports (rules/NJxxx_*.toml [config])
    # {"interface": "numpy"} for what `--interface numpy` adds (NJ105)
    config: tuple[tuple[str, bool | str], ...] = ()
    # `keeps-function`: what a finding of this rule inside a function says of its body (it
    # needs NumPy arrays there: "relies on NumPy raising IndexError ..."); such a function
    # is kept on NumPy automatically (NJ104, np2jax.pipeline) and the phrase is its reason.
    # None: the rule's findings keep nothing. A rule may mark only some of its findings
    # (Report.keeps_function).
    keeps_function: str | None = None

    @property
    def fixable(self) -> bool:
        return self.fix != "none"

    def render_markdown(self) -> str:
        settings = dict(self.config)
        runs = "".join((" Runs with `--jit`." if settings.get("jit") else "",
                        " Reports in the 32-bit mode (`--x32`)." if settings.get("x64") is False else "",
                        " Runs with `--interface numpy`." if settings.get("interface") == "numpy"
                        else "",
                        " Keeps the function it is found in on NumPy (NJ104)." if self.keeps_function
                        else ""))
        lines = [f"## {self.code} `{self.name}`", "", self.summary, "",
                 f"Severity: {self.severity}. Fix: {self.fix}.{runs}", ""]
        for key, title in DOC_SECTIONS:
            body = self.doc[key].strip()
            lines += [f"### {title}", ""]
            lines += (["```python", body, "```"] if key in ("example", "converted") else [body])
            lines.append("")
        return "\n".join(lines)


def catalog_dir():
    """The catalog: np2jax/rules/catalog in an installed np2jax (the wheel ships rules/
    there), else rules/ beside the package: a checkout, installed in editable mode or run as
    it is (`python -m np2jax` in its root), reads its own."""
    package = Path(__file__).resolve().parent
    for folder in (package / "rules" / "catalog", package.parent / "rules"):
        if (folder / "api" / "policy.toml").is_file():
            return folder
    return resources.files("np2jax.rules.catalog")


def _parse_rule(name: str, data: dict) -> RuleDoc:
    try:
        doc = {key: data["doc"][key] for key, _ in DOC_SECTIONS}
        rule = RuleDoc(
            code=data["code"], name=data["name"], summary=data["summary"],
            message=data["message"], severity=data["severity"], fix=data["fix"], doc=doc,
            valid=tuple(case["code"] for case in data.get("valid", [])),
            invalid=tuple(InvalidCase(case["code"], case.get("expected"))
                          for case in data.get("invalid", [])),
            config=tuple(sorted(data.get("config", {}).items())),
            keeps_function=data.get("keeps-function"),
        )
    except KeyError as missing:
        raise CatalogError(f"rules/{name}: missing key {missing}") from None
    if any(key not in CONFIG_KEYS or not isinstance(value, bool) if key != "interface"
           else value not in ("jax", "numpy") for key, value in rule.config):
        raise CatalogError(f"rules/{name}: [config] takes {' and '.join(CONFIG_KEYS)}, true or "
                           "false (interface: \"jax\" or \"numpy\")")
    if rule.keeps_function is not None and (not isinstance(rule.keeps_function, str)
                                            or not rule.keeps_function.strip()):
        raise CatalogError(f"rules/{name}: keeps-function is the reason a finding gives for keeping "
                           "its function on NumPy (a phrase), or absent")
    if rule.severity not in SEVERITIES or rule.fix not in FIX_KINDS:
        raise CatalogError(f"rules/{name}: severity must be one of {SEVERITIES}, fix one of {FIX_KINDS}")
    return rule


@cache
def _rule_files() -> dict:
    """Code -> its file in rules/ (NJ201_subscript-assignment.toml), discovered by name: the
    files themselves are parsed only when a rule's doc is needed."""
    files = {}
    for entry in sorted(catalog_dir().iterdir(), key=lambda e: e.name):
        if entry.name.startswith("NJ") and entry.name.endswith(".toml"):
            code = entry.name.removesuffix(".toml").split("_", 1)[0]
            if code in files:
                raise CatalogError(f"rules/{entry.name}: {files[code].name} has the same code")
            files[code] = entry
    return files


def rule_codes() -> list[str]:
    """Every code of the catalog, from the file names alone."""
    return list(_rule_files())


def rule_name(code: str) -> str:
    """The kebab-case name of a rule, from its file name alone (NJ201_subscript-assignment.toml)."""
    return _rule_files()[code].name.removesuffix(".toml").split("_", 1)[1]


@cache
def rule_doc(code: str) -> RuleDoc:
    """One rule's doc, parsed when first asked for: a check reads only the files of the rules
    that report something (all 27 cost about 20 ms, as much as analysing a small file)."""
    entry = _rule_files()[code]
    rule = _parse_rule(entry.name, tomllib.loads(entry.read_text(encoding="utf-8")))
    if entry.name != f"{rule.code}_{rule.name}.toml":  # what _rule_files() finds it by
        raise CatalogError(f"rules/{entry.name}: must be named {rule.code}_{rule.name}.toml")
    return rule


@cache
def rule_docs() -> dict[str, RuleDoc]:
    """Every rule in the catalog, by code, discovered from rules/NJ*.toml."""
    return {code: rule_doc(code) for code in _rule_files()}


def find_rule(code_or_name: str) -> RuleDoc | None:
    key = code_or_name.strip()
    for rule in rule_docs().values():
        if key.upper() == rule.code or key == rule.name:
            return rule
    return None


@cache
def api_table() -> dict[str, dict]:
    """NumPy/SciPy name -> JAX counterpart and parameter roles (generated by np2jax.apigen)."""
    text = (catalog_dir() / "api" / "numpy_jax.json").read_text(encoding="utf-8")
    return json.loads(text)["entries"]


@cache
def api_proof() -> dict[str, dict]:
    """NumPy/SciPy name -> what running it beside its JAX counterpart proved: the verdict of
    a base call, of each dtype and edge value, and of each value of each parameter
    (rules/api/proven.json, generated by np2jax.apiproof)."""
    text = (catalog_dir() / "api" / "proven.json").read_text(encoding="utf-8")
    return json.loads(text)["callables"]


@cache
def api_policy() -> dict:
    """Hand-kept semantics the introspected table cannot know (rules/api/policy.toml)."""
    return tomllib.loads((catalog_dir() / "api" / "policy.toml").read_text(encoding="utf-8"))
