"""`np2jax convert --html FILE`: the page's content, its escaping, that it fetches nothing, and,
in a real headless browser (Debian's chromium; .ci/run installs it), that it renders."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from np2jax.api import convert_paths
from np2jax.cli import app
from np2jax.config import Config
from np2jax.html_report import render_html, side_by_side
from np2jax.verify.compare import OutputComparison
from np2jax.verify.core import Timing, VerifyResult, VerifyRun

runner = CliRunner()
HOSTILE = '''import numpy as np

def main():
    """<script>alert("x")</script> & <b>bold</b>"""
    x = np.zeros(5)
    x[0] = 1.0
    label = "a < b && c > d"
    return {"x": x, "label": label}
'''
LEFT = "import numpy as np\ndef f(x):\n    x[0] = 1.0\n    return x\n"  # NJ201 left, reported
UNCHANGED = "def g(a):\n    return a + 1\n"
SECTIONS = ("summary", "verification", "verify-table", "timing-overview", "files", "rules")


class Page(HTMLParser):
    """What the tests look for in a page: ids, links, resource references, script text."""

    def __init__(self, text: str):
        super().__init__()
        self.ids, self.hrefs, self.sources, self.scripts, self.text = set(), [], [], [], []
        self.attribute_values: list[str] = []
        self.duplicate_ids: list[str] = []
        self._in_script = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.attribute_values.extend(value or "" for _, value in attrs)
        attrs = dict(attrs)
        if "id" in attrs:
            self.duplicate_ids.extend([attrs["id"]] if attrs["id"] in self.ids else [])
            self.ids.add(attrs["id"])
        if "href" in attrs:
            self.hrefs.append(attrs["href"])
        for name in ("src", "srcset", "data", "poster", "action", "xlink:href"):
            if name in attrs:
                self.sources.append(attrs[name])
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        (self.scripts if self._in_script else self.text).append(data)


def _tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "hostile.py").write_text(HOSTILE)
    (src / "left.py").write_text(LEFT)
    (src / "same.py").write_text(UNCHANGED)
    return src


def _fake_verification(run) -> VerifyRun:
    """A verifier result for the converted files (the renderer's input; the real verifier
    runs in test_cli_html_with_verify)."""
    results = []
    for i, result in enumerate(run.files):
        verdict = "differs" if i == 1 else "equal"
        results.append(VerifyResult(
            result.path, "out/" + Path(result.path).name, verdict, label=Path(result.path).name,
            outputs=[OutputComparison("x<y>", verdict == "equal", (5,), "float64", "float32",
                                      0.5 if verdict == "differs" else 0.0, device="cpu")],
            numpy=Timing(0.002, 0.001, 5, [0.001] * 5),
            jax={"cpu": Timing(0.8, 0.0004, 5, [0.0004] * 5)}))
    return VerifyRun(results, ["cpu"])


def test_page_has_every_section_and_fetches_nothing(tmp_path):
    run = convert_paths([_tree(tmp_path)], Config())
    page_text = render_html(run, _fake_verification(run))
    page = Page(page_text)
    assert set(SECTIONS) <= page.ids
    assert {"NJ201", "NJ101"} <= page.ids  # the rule docs used are embedded
    # every link stays in the page and points at something in it
    assert page.hrefs and all(h.startswith("#") and h[1:] in page.ids for h in page.hrefs)
    assert page.sources == [] and page.scripts == []
    assert not [v for v in page.attribute_values if "://" in v or v.startswith("//")]
    assert "@import" not in page_text and "url(" not in page_text  # nor from the stylesheet


def test_every_file_has_its_own_anchor(tmp_path):
    (tmp_path / "pkg").mkdir()
    for name in ("pkg/mod.py", "pkg-mod.py", "pkg_mod.py"):
        (tmp_path / name).write_text(HOSTILE)
    run = convert_paths([tmp_path], Config())
    page = Page(render_html(run, _fake_verification(run)))
    assert page.duplicate_ids == []
    assert len([i for i in page.ids if i.startswith("file-") and "_" not in i]) == 3  # not lines
    assert all(h[1:] in page.ids for h in page.hrefs)


def test_summary_counts_rules_and_findings(tmp_path):
    run = convert_paths([_tree(tmp_path)], Config())
    text = " ".join(Page(render_html(run)).text)
    counts = run.counts()
    assert (counts["converted"], counts["unchanged"], counts["failed"]) == (1, 2, 0)
    assert re.search(r"1\s*files converted", text) and re.search(r"2\s*files unchanged", text)
    assert "Rewrites by rule" in text and "Findings by rule" in text
    assert f"{len(run.findings)}" in text and run.findings  # LEFT leaves one for you
    assert "verification" not in Page(render_html(run)).ids  # no --verify, no section


def test_files_that_failed_are_listed_with_their_reason(tmp_path):
    src = _tree(tmp_path)
    (src / "broken<1>.py").write_text("import numpy as np\ndef f(:\n")
    run = convert_paths([src], Config())
    assert run.counts()["failed"] == 1
    page_text = render_html(run)
    page = Page(page_text)
    assert "errors" in page.ids and re.search(r"1\s*files failed", " ".join(page.text))
    assert "broken&lt;1&gt;.py" in page_text and "broken<1>" not in page_text


def test_a_notebook_shows_each_changed_cell_not_its_json(tmp_path):
    cells = [{"cell_type": "markdown", "metadata": {}, "source": "# <Title>"},
             {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
              "source": "import numpy as np\nx = np.zeros(3)\nx[0] = 1.0"},
             {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [],
              "source": "print(len(x))"},
             {"cell_type": "code", "execution_count": 3, "metadata": {}, "outputs": [],
              "source": "def f(a):\n    a[0] = 2.0"}]
    (tmp_path / "nb.ipynb").write_text(json.dumps(
        {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1))
    run = convert_paths([tmp_path], Config())
    assert run.counts()["converted"] == 1 and run.findings
    page = Page(render_html(run))
    text = " ".join(page.text)
    assert "cell 2: original (NumPy)" in text and "cell 3:" not in text  # only changed cells
    assert '"cell_type"' not in text and "x.at[0].set(1.0)" in text
    assert f"cell 4:{run.findings[0].line}" in text  # a finding names its cell


def test_user_text_is_escaped(tmp_path):
    run = convert_paths([_tree(tmp_path)], Config())
    page_text = render_html(run, _fake_verification(run))
    page = Page(page_text)
    assert page.scripts == []  # the program's <script> never became an element
    assert "<b>bold</b>" not in page_text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page_text
    assert "&amp;&amp;" in page_text and "a < b && c > d" in "".join(page.text)
    assert "x&lt;y&gt;" in page_text  # an output name from the verifier


def test_side_by_side_marks_changed_lines_and_characters():
    table = side_by_side("a = 1\nb = 2\nc = 3\n", "a = 1\nb = 20\nc = 3\nd = <4>\n", context=1)
    rows = re.findall(r"<tr>(.*?)</tr>", table)
    changed = [r for r in rows if 'class="code del"' in r or 'class="code ins"' in r]
    assert len(changed) == 2  # b changed, d added
    assert "<ins>0</ins>" in changed[0]  # only the new character is marked
    assert '<td class="ln empty"></td>' in changed[1] and "d = &lt;4&gt;" in changed[1]


def test_side_by_side_shows_a_single_unchanged_line_instead_of_folding_it():
    old = "".join(f"line{i}\n" for i in range(9))
    table = side_by_side(old, old.replace("line0\n", "LINE0\n").replace("line8\n", "LINE8\n"),
                         context=3)
    assert "unchanged" not in table and "line4" in table  # 9 lines, 2 changed, 3 of context each


def test_side_by_side_folds_long_unchanged_runs():
    old = "".join(f"line{i}\n" for i in range(40))
    table = side_by_side(old, old.replace("line20\n", "LINE20\n"), context=2)
    # line20 changed: line18..line22 shown; line0..line17 and line23..line39 folded
    assert "18 unchanged line(s)" in table and "17 unchanged line(s)" in table
    assert table.count('class="code del"') == 1
    assert "line0<" not in table and "line18" in table and "line23" not in table


def test_verification_table_and_charts(tmp_path):
    run = convert_paths([_tree(tmp_path)], Config())
    page = Page(render_html(run, _fake_verification(run)))
    text = " ".join(page.text)
    assert "differs" in text and "equal" in text
    assert "0.5" in text  # the max abs error of the differing output
    # a chart per verified file: NumPy, first call, steady
    assert "timings of hostile.py" in text and "JAX cpu first call" in text
    assert "1 ms" in text and "800 ms" in text and "400 us" in text


@pytest.mark.parametrize("mode", ["--diff", "--in-place"])
def test_cli_writes_html_without_verify(tmp_path, mode):
    src = _tree(tmp_path)
    report = tmp_path / "reports" / "run.html"
    result = runner.invoke(app, ["convert", str(src), mode, "--html", str(report)])
    assert result.exit_code == 1, result.output  # LEFT leaves a finding
    page = Page(report.read_text(encoding="utf-8"))
    assert {"summary", "files", "rules"} <= page.ids and "verification" not in page.ids
    assert "jnp.zeros" in "".join(page.text)  # the diff is there either way
    assert ("jnp" in (src / "hostile.py").read_text()) == (mode == "--in-place")
    assert not list(report.parent.glob(".*np2jax-tmp"))  # the atomic write cleaned up
    mask = os.umask(0o022)
    os.umask(mask)
    assert stat.S_IMODE(report.stat().st_mode) == 0o666 & ~mask  # not mkstemp's private 0600


def test_cli_html_that_cannot_be_written_is_an_error(tmp_path):
    src = _tree(tmp_path)
    (tmp_path / "taken").mkdir()
    result = runner.invoke(app, ["convert", str(src), "--out", str(tmp_path / "out"),
                                 "--html", str(tmp_path / "taken")])
    assert result.exit_code == 2
    assert "cannot write the HTML report" in result.output
    assert (tmp_path / "out" / "hostile.py").exists()  # the conversion itself went on


def test_cli_html_with_verify(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "prog.py").write_text("import numpy as np\n\ndef main():\n    x = np.arange(4.0)\n"
                                 "    x[1] = 5.0\n    return {'x': x * 2}\n")
    (src / "script.py").write_text("import numpy as np\ny = np.sum([1.0, 2.0])\n")  # no main()
    (src / "nb.ipynb").write_text(json.dumps(NOTEBOOK, indent=1))
    report = tmp_path / "report.html"
    result = runner.invoke(app, ["convert", str(src), "--out", str(tmp_path / "out"),
                                 "--verify", "--html", str(report)])
    assert result.exit_code == 1, result.output  # the notebook leaves a finding
    page_text = report.read_text(encoding="utf-8")
    page = Page(page_text)
    assert set(SECTIONS) <= page.ids
    text = " ".join(page.text)
    assert "timings of prog.py" in text and "JAX cpu steady" in text
    assert re.search(r"1\s*verified equal", text)
    # the files --verify did not run say so, and why
    sections = dict(re.findall(r'<section class="file" id="([^"]+)">(.*?)</section>', page_text,
                               re.S))
    script = sections[next(k for k in sections if k.endswith("script-py"))]
    notebook = sections[next(k for k in sections if k.endswith("nb-ipynb"))]
    for section, reason in ((script, "defines no main()"),
                            (notebook, "notebooks are not run by --verify")):
        assert '<span class="badge muted">not verified</span>' in section
        assert reason in section
    assert "not verified" not in sections[next(k for k in sections if k.endswith("prog-py"))]


# -- finding lines, linked to their marked line in the diff --------------------------------------

NOTEBOOK = {"cells": [
    {"cell_type": "markdown", "metadata": {}, "source": "# title"},
    {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
     "source": "import numpy as np\nx = np.zeros(3)"},
    {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [],
     "source": "def f(a):\n    a[0] = 2.0\n    return a"}],
    "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
# a change at the top and a finding far below it, where the diff folds unchanged lines
LONG = ("import numpy as np\n\nx = np.zeros(3)\nx[0] = 1.0\n\n"
        + "".join(f"def helper_{i}(a):\n    return a + {i}\n\n" for i in range(60))
        + "def late(p):\n    p[0] = 2.0\n    return p\n")


def _link_tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "long.py").write_text(LONG)
    (src / "left.py").write_text(LEFT)  # unchanged, one finding
    (src / "nb.ipynb").write_text(json.dumps(NOTEBOOK, indent=1))
    return src


def _rows(page_text: str) -> dict[str, tuple[str, str]]:
    """id -> (class, the row's text) of each diff row with an id."""
    return {row_id: (classes or "", re.sub(r"<[^>]+>", "", body))
            for row_id, classes, body in re.findall(
                r'<tr id="([^"]+)"(?: class="([^"]+)")?>(.*?)</tr>', page_text, re.S)}


def test_a_finding_links_to_its_marked_line_in_the_diff(tmp_path):
    src = _link_tree(tmp_path)
    run = convert_paths([src], Config())
    page_text = render_html(run)
    page = Page(page_text)
    assert page.duplicate_ids == [] and all(h[1:] in page.ids for h in page.hrefs)
    rows = _rows(page_text)
    lines = {r.path: r.original.splitlines() for r in run.files}
    found = 0
    for table in re.findall(r'<table class="data findings">(.*?)</table>', page_text, re.S):
        for target, shown in re.findall(r'<a href="#([^"]+)">([^<]+)</a></td>', table):
            classes, text = rows[target]
            assert classes == "marked"
            path = next(p for p in lines if target.startswith(_anchor(page_text, p)))
            cell, _, line = shown.rpartition(":")
            if not cell:  # a Python file: the row shows that line of the original
                assert lines[path][int(line) - 1].strip() in text
            else:  # a notebook: that line of the cell
                number = int(cell.split()[-1])
                source = NOTEBOOK["cells"][number - 1]["source"].splitlines()
                assert source[int(line) - 1].strip() in text
                assert target.endswith(f"_c{number}_L{line}")
            found += 1
    assert found == len(run.findings) >= 3  # long.py's late(), left.py's f(), the notebook's f()
    # the rewrites link to their lines too, which are never folded away
    changes = re.findall(r'<table class="data changes">.*?</table>', page_text, re.S)
    targets = [t for table in changes for t in re.findall(r'<td class="num"><a href="#([^"]+)"',
                                                          table)]
    assert len(targets) == len(run.changes) and all(t in rows for t in targets)


def _anchor(page_text: str, path: str) -> str:
    return re.search(rf'<section class="file" id="([^"]+)">\s*<h3>{re.escape(path)} ',
                     page_text).group(1)


def test_side_by_side_gives_each_line_an_id_and_keeps_marked_lines():
    old = "".join(f"line{i}\n" for i in range(40))
    table = side_by_side(old, old.replace("line2\n", "LINE2\n"), context=2, anchor="f",
                         marked={31})
    ids = re.findall(r'<tr id="([^"]+)"', table)
    assert len(ids) == len(set(ids)) and "f_L3" in ids  # the changed line
    assert 'id="f_L31" class="marked"' in table  # line31 (line30 in the text): kept, marked
    assert "f_L30" in ids and "f_L32" in ids  # with a line of context
    assert "f_L20" not in ids  # the rest stays folded
    added = side_by_side("a\n", "a\nb\n", anchor="g")
    assert 'id="g_L1"' in added and 'id="g_R2"' in added  # an added line: its new number


# -- in a real browser ---------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium")
BROWSER_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def decode_png(data: bytes) -> np.ndarray:
    """RGB(A) pixels of an 8-bit, non-interlaced PNG (what chromium writes), by the spec's
    five row filters."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, []
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    bpp = 3 if colour == 2 else 4
    stride = width * bpp
    raw = zlib.decompress(b"".join(chunks))
    image = np.zeros((height, stride), np.uint8)
    previous = np.zeros(stride, np.uint8)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], np.frombuffer(raw, np.uint8, stride, start + 1)
        if kind == 0:
            row = line.copy()
        elif kind == 1:  # Sub: a running sum per channel
            row = np.cumsum(line.reshape(-1, bpp), axis=0, dtype=np.uint64).astype(np.uint8).ravel()
        elif kind == 2:  # Up
            row = line + previous
        else:  # Average, Paeth: each byte needs the one just decoded
            out, up = bytearray(line.tobytes()), previous.tobytes()
            for x in range(stride):
                left = out[x - bpp] if x >= bpp else 0
                if kind == 3:
                    out[x] = (out[x] + (left + up[x]) // 2) & 0xFF
                    continue
                corner = up[x - bpp] if x >= bpp else 0
                out[x] = (out[x] + _paeth(left, up[x], corner)) & 0xFF
            row = np.frombuffer(bytes(out), np.uint8)
        image[y] = row
        previous = row
    return image.reshape(height, width, bpp)


def _paeth(left: int, up: int, corner: int) -> int:
    pa, pb, pc = abs(up - corner), abs(left - corner), abs(left + up - 2 * corner)
    return left if pa <= pb and pa <= pc else (up if pb <= pc else corner)


def test_decode_png_reads_back_every_row_filter():
    """Rows encoded with each of the five filters, by the PNG spec's forward formulas."""
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (6, 5, 3), dtype=np.uint8)
    bpp, rows, previous = 3, [], bytes(15)
    for kind, row in zip((0, 1, 2, 3, 4, 4), pixels):
        raw = row.tobytes()
        filtered = bytearray()
        for x, value in enumerate(raw):
            left = raw[x - bpp] if x >= bpp else 0
            corner = previous[x - bpp] if x >= bpp else 0
            predicted = (0, left, previous[x], (left + previous[x]) // 2,
                         _paeth(left, previous[x], corner))[kind]
            filtered.append((value - predicted) & 0xFF)
        rows.append(bytes([kind]) + bytes(filtered))
        previous = raw

    def chunk(kind: bytes, payload: bytes) -> bytes:
        crc = zlib.crc32(kind + payload)
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", crc)
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 5, 6, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(b"".join(rows))) + chunk(b"IEND", b""))
    assert (decode_png(png) == pixels).all()


def _chromium(*args: str, profile: Path) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, *BROWSER_FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
def test_page_renders_in_a_headless_browser(tmp_path):
    run = convert_paths([_tree(tmp_path)], Config())
    page_path = tmp_path / "report.html"
    page_path.write_text(render_html(run, _fake_verification(run)), encoding="utf-8")
    url = page_path.as_uri()

    dom = _chromium("--dump-dom", url, profile=tmp_path / "profile")
    assert dom.returncode == 0, dom.stderr[-2000:]
    rendered = Page(dom.stdout)
    assert set(SECTIONS) <= rendered.ids and "NJ201" in rendered.ids
    assert rendered.scripts == []  # the escaped <script> stayed text in the live DOM too
    assert 'alert("x")' in "".join(rendered.text)

    shot = tmp_path / "shot.png"
    done = _chromium(f"--screenshot={shot}", "--window-size=1280,2000", url,
                     profile=tmp_path / "profile")
    assert shot.exists(), done.stderr[-2000:]
    pixels = decode_png(shot.read_bytes())[..., :3]
    assert pixels.shape[:2] == (2000, 1280)
    not_white = (pixels < 245).any(axis=2).mean()
    colours = len(np.unique(pixels.reshape(-1, 3), axis=0))
    assert not_white > 0.05 and colours > 50, (not_white, colours)
    # the header's dark band is drawn: the inline stylesheet was applied
    assert (np.abs(pixels[10, 10].astype(int) - (0x1D, 0x24, 0x30)) < 8).all()


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
def test_finding_links_land_on_the_marked_line_in_a_browser(tmp_path):
    """The page has no script; a copy with one checks, in chromium, that every link has its
    target and that following a finding's link scrolls its marked line into view."""
    src = _link_tree(tmp_path)
    report = tmp_path / "report.html"
    result = runner.invoke(app, ["convert", str(src), "--diff", "--html", str(report), "-q"])
    assert result.exit_code == 1, result.output
    probe = """<script>
    const out = {missing: []};
    for (const a of document.querySelectorAll('a[href^="#"]'))
      if (!document.getElementById(a.getAttribute('href').slice(1))) out.missing.push(a.href);
    const hrefs = [...document.querySelectorAll('table.findings a')].map(a => a.getAttribute('href'));
    out.far = hrefs.find(h => h.includes('long-py'));
    const row = document.getElementById(out.far.slice(1));
    out.before = row.getBoundingClientRect().top;
    location.hash = out.far;
    out.after = row.getBoundingClientRect().top;
    out.height = window.innerHeight;
    out.target = row.matches(':target');
    out.marked = getComputedStyle(row.querySelector('td.ln')).backgroundColor;
    const pre = document.createElement('pre'); pre.id = 'probe';
    pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
    </script>"""
    copy = tmp_path / "probe.html"
    copy.write_text(report.read_text(encoding="utf-8").replace("</body>", probe + "</body>"),
                    encoding="utf-8")
    dom = _chromium("--window-size=1280,800", "--dump-dom", copy.as_uri(),
                    profile=tmp_path / "profile")
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom.stdout, re.S)
    assert found, dom.stdout[-2000:]
    out = json.loads(found.group(1).replace("&quot;", '"'))
    assert out["missing"] == []
    assert out["before"] > out["height"]  # the line was out of sight...
    assert 0 <= out["after"] < 100 and out["target"]  # ...the link brought it to the top
    assert out["marked"] == "rgb(249, 215, 126)"  # and it is marked
