"""docs/in-place.md: every fixture it links exists, and every in-place rule (NJ201-NJ208) is
proved by at least one linked fixture of its own folder."""

from __future__ import annotations

import re

from helpers import FIXTURES, ROOT
from np2jax.catalog import rule_docs

DOC = ROOT / "docs" / "in-place.md"
IN_PLACE_CODES = [f"NJ20{n}" for n in range(1, 9)]
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _fixture_links(text: str) -> list[str]:
    return [target for target in _LINK.findall(text) if "fixtures/" in target]


def _resolved(link: str):
    return (DOC.parent / link).resolve()


def test_the_table_links_fixtures():
    assert len(_fixture_links(DOC.read_text())) >= 50


def test_every_linked_fixture_exists():
    missing = [link for link in _fixture_links(DOC.read_text())
               if not _resolved(link).is_file() or not link.endswith(".in.py")]
    assert not missing, f"docs/in-place.md links fixtures that do not exist: {missing}"


def test_every_linked_fixture_has_its_converted_pair():
    for link in _fixture_links(DOC.read_text()):
        case = _resolved(link)
        assert case.with_name(case.name[: -len(".in.py")] + ".out.py").is_file(), link


def test_every_in_place_rule_folder_is_linked():
    linked = {_resolved(link).parent for link in _fixture_links(DOC.read_text())}
    docs = {doc.code: doc for doc in rule_docs().values()}
    for code in IN_PLACE_CODES:
        folder = (FIXTURES / docs[code].name).resolve()
        assert folder in linked, f"docs/in-place.md links no fixture of {code} ({folder.name})"


def test_links_point_into_the_fixture_tree():
    root = FIXTURES.resolve()
    outside = [link for link in _fixture_links(DOC.read_text())
               if root not in _resolved(link).parents]
    assert not outside, outside
