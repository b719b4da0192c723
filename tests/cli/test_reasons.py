"""Findings that say what to change (issue 20, items 4 and 5), through the real CLI: NJ203
on a module global offers the rebinding to write; NJ301 gives every reason at once and
keeps `dtype=` where jax.random takes one; NJ302 counts a draw once; every reason --jit
gives for leaving a function eager names the line and the code, and what would change it."""

from __future__ import annotations

import json

from helpers import invoke


def _check(tmp_path, source: str, *flags) -> list[dict]:
    path = tmp_path / "model.py"
    path.write_text(source)
    result = invoke("check", path, "--no-cache", "--format", "json", *flags)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.output)["findings"]


def _convert(tmp_path, source: str, *flags) -> dict:
    path = tmp_path / "model.py"
    path.write_text(source)
    result = invoke("convert", path, "--diff", "--no-cache", "--format", "json", *flags)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.output)


def test_nj203_on_a_module_global_says_what_to_write_instead(tmp_path):
    findings = _check(tmp_path, "import numpy as np\n\nw = np.zeros(3)\n\n\n"
                                "def read():\n    return w.sum()\n\n\n"
                                "w *= 2.0 + 1.0\ntotal = read()\n")
    (finding,) = [f for f in findings if f["code"] == "NJ203"]
    assert "module global read by functions" in finding["message"]
    assert "write `w = w * (2.0 + 1.0)`" in finding["message"]


def test_nj301_gives_every_reason_of_a_state_at_once(tmp_path):
    findings = _check(tmp_path, "import numpy as np\n\n\ndef main():\n"
                                "    rng = np.random.default_rng(0)\n"
                                "    a = rng.integers(0, 5, size=3, endpoint=True)\n"
                                "    b = rng.hypergeometric(5, 5, 3, size=2)\n"
                                "    return a, b\n")
    (finding,) = [f for f in findings if f["code"] == "NJ301"]
    assert "`endpoint=` has no jax.random counterpart" in finding["message"]
    assert "no hypergeometric distribution" in finding["message"]


def test_nj301_does_not_refuse_a_dtype_jax_random_takes(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "model.py").write_text(
        "import numpy as np\n\n\ndef main():\n    rng = np.random.default_rng(0)\n"
        "    return rng.random(3, dtype=np.float32), "
        "rng.integers(0, 5, size=3, dtype=np.int16)\n")
    result = invoke("convert", tmp_path / "src", "--out", tmp_path / "out", "--no-cache")
    assert result.exit_code == 0 and "NJ301" not in result.output, result.output
    text = (tmp_path / "out" / "model.py").read_text()
    assert "jax.random.uniform(subkey, (3,), dtype=jnp.float32)" in text
    assert "jax.random.randint(subkey_2, (3,), 0, 5, dtype=jnp.int16)" in text


def test_nj302_counts_each_draw_once(tmp_path):
    run = _convert(tmp_path, "import numpy as np\n\n\ndef main():\n"
                             "    rng = np.random.default_rng(0)\n"
                             "    a = rng.normal(size=3)\n"
                             "    b = rng.normal(size=3) + rng.uniform(size=3)\n"
                             "    return a, b\n")
    changes = [(c["line"], c["message"].split("`")[1]) for c in run["changes"]
               if c["code"] == "NJ302"]
    # the state, then three draws (two on one line): one change each
    assert sorted(changes) == [(5, "rng = np.random.default_rng(0)"), (6, "rng.normal"),
                               (7, "rng.normal"), (7, "rng.uniform")]


JIT_PROGRAM = '''import numpy as np

TABLE = {"a": 1}


def kernel(x, k):
    return x * k


def scale(x, factor=np.ones(3)):
    return x * factor


def listy(x, idx):
    return x[0] * len(idx)


def mixed(x, s):
    return x * s


def stored(x):
    return x * 2.0


def effect(x):
    print("no array")


def main():
    data = np.arange(3.0)
    k = TABLE["a"]
    handler = stored
    effect(data)
    return (kernel(data, k), listy(data, [1, 2]), mixed(data, 2.0) + mixed(data, np.ones(3)),
            scale(data), handler)
'''


def test_every_jit_reason_names_the_place_the_value_and_what_to_change(tmp_path):
    findings = _check(tmp_path, JIT_PROGRAM, "--jit")
    reasons = {f["message"].split("`")[1]: f["message"] for f in findings if f["code"] == "NJ502"}
    assert ("`k` in `kernel(data, k)` on line 35" in reasons["kernel"]
            and "compute the value from those" in reasons["kernel"])
    assert ("`np.ones(3)` on line 10" in reasons["scale"]
            and "make it a number" in reasons["scale"])
    assert ("`[1, 2]` in `listy(data, [1, 2])` on line 35" in reasons["listy"]
            and "pass a tuple" in reasons["listy"])
    assert ("`np.ones(3)` in `mixed(data, np.ones(3))` on line 35" in reasons["mixed"]
            and "`2.0` in `mixed(data, 2.0)` on line 35" in reasons["mixed"]
            and "same kind at every call" in reasons["mixed"])
    # used as a value (`handler = stored`), it is judged on its own body, as a library's
    # function is: whoever calls it may pass a Python number
    assert ("`return x * 2.0` on line 23 may return Python numbers" in reasons["stored"]
            and "jnp.asarray" in reasons["stored"])
    assert "`print(\"no array\")` prints Python values" in reasons["effect"] \
        and "(line 27)" in reasons["effect"] and "print them outside" in reasons["effect"]
    assert "reads `TABLE`" in reasons["main"] and "(line 32)" in reasons["main"] \
        and "pass `TABLE` as an argument" in reasons["main"]
