"""``eventlog.lazy_pattern.LazyPattern``: ``re.compile``'s results, compiled at the first use and only then.

And the modules that hold many patterns (``eventlog.secrets``, ``projections.recall.text``) compile none at
import: a fresh interpreter that imports them and scans a line compiles the anchor scan and no shape.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from eventlog.lazy_pattern import METHODS, LazyPattern
from tests.conftest import REPO

SOURCES = [r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", r"(a)(b)?", r"\s+", r"x(?<=[^y]x)"]


@given(source=st.sampled_from(SOURCES), text=st.text(alphabet="aAbB09 xy\n", max_size=30),
       pos=st.integers(0, 5))
def test_every_method_gives_what_the_compiled_pattern_gives(source: str, text: str, pos: int) -> None:
    lazy, real = LazyPattern(source), re.compile(source)
    for args in ((text,), (text, pos), (text, pos, pos + 10)):
        for name in ("match", "search", "fullmatch"):
            a, b = getattr(lazy, name)(*args), getattr(real, name)(*args)
            assert (a and (a.span(), a.groups())) == (b and (b.span(), b.groups()))
        assert [m.span() for m in lazy.finditer(*args)] == [m.span() for m in real.finditer(*args)]
        assert lazy.findall(*args) == real.findall(*args)
    assert lazy.sub("-", text) == real.sub("-", text) and lazy.split(text) == real.split(text)


def test_it_compiles_at_the_first_use_once_and_keeps_the_compiled_methods(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real_compile = re.compile

    def counting(source: str) -> re.Pattern[str]:
        calls.append(source)
        return real_compile(source)

    monkeypatch.setattr(re, "compile", counting)
    lazy = LazyPattern(r"l(a)zy")
    assert calls == [] and not lazy.compiled
    assert lazy.search("a lazy one").group(1) == "a"  # type: ignore[union-attr]
    assert calls == [r"l(a)zy"] and lazy.compiled
    assert lazy.match("lazy") and lazy.finditer("lazy lazy") and lazy.sub("", "lazy") == ""
    assert calls == [r"l(a)zy"]
    compiled = real_compile(r"l(a)zy")
    assert all(getattr(lazy, m) == getattr(compiled, m) for m in METHODS)  # bound methods of the compiled pattern


def test_names_that_are_not_matching_methods_are_not_served() -> None:
    lazy = LazyPattern("x")
    with pytest.raises(AttributeError):
        lazy.groups  # noqa: B018
    assert not lazy.compiled and lazy.source == "x" and repr(lazy) == "LazyPattern('x')"


def test_importing_the_scanner_and_scanning_plain_text_compiles_only_the_anchor_scan() -> None:
    probe = ("import re\n"
             "from eventlog import secrets\n"
             "from projections.recall import text\n"
             "from eventlog.lazy_pattern import LazyPattern\n"
             "def compiled(module):\n"
             "    return sorted(n for n, v in vars(module).items() if isinstance(v, LazyPattern) and v.compiled)\n"
             "print(compiled(secrets), compiled(text))\n"
             "assert secrets.redact('plain words\\nabout a garden') == ('plain words\\nabout a garden', [])\n"
             "print(compiled(secrets), compiled(text))\n"
             "assert secrets.redact('export GITHUB_TOKEN=ghp_' + 'a1B2' * 9)[1] == ['github-token']\n"
             "print(compiled(secrets))\n"
             "print(sum(isinstance(v, re.Pattern) for v in vars(secrets).values()))\n")
    env = {**os.environ, "PYTHONPATH": REPO}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, env=env, check=True)
    assert out.stdout.splitlines()[:2] == ["[] []", "['_ANCHOR', '_WRAP'] []"]
    assert "'_G'" in out.stdout.splitlines()[2]  # the token's shape, compiled when its anchor was found
    assert out.stdout.splitlines()[3] == "0"  # no pattern of the scanner is compiled at import
