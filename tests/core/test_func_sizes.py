"""tools/func_sizes.py: functions over 60 lines or McCabe complexity 15, counted as ruff's C901 counts."""

from __future__ import annotations

import json
import textwrap

from tools import func_sizes


def _write(tmp_path, code: str) -> str:
    p = tmp_path / "m.py"
    p.write_text(textwrap.dedent(code))
    return str(p)


def test_complexity_counts_branches_loops_handlers_and_cases(tmp_path):
    path = _write(tmp_path, """
        def f(x):
            if x:            # 1
                pass
            elif x > 1:      # 2
                pass
            for i in x:      # 3
                pass
            else:            # a loop's else adds nothing
                pass
            while x:         # 4
                break
            try:
                pass
            except ValueError:   # 5
                pass
            except KeyError:     # 6
                pass
            else:                # 7
                pass
            match x:
                case 1:      # 8
                    pass
                case _:      # the fall-through adds nothing
                    pass
            y = [a for a in x if a] and (x or x) and (1 if x else 2)  # nothing
            def g():         # 9, and g's own if: 10
                if x:
                    pass
            return y
        """)
    (fs,) = [f for f in func_sizes.functions(path) if f.name == "f"]
    assert fs.complexity == 11 and fs.lines == 29


def test_offenders_over_either_limit_and_the_exit_status(tmp_path, capsys):
    body = "\n".join(f"    x{i} = {i}" for i in range(70))
    path = _write(tmp_path, f"def long():\n{body}\n\ndef short():\n    return 1\n")
    found = func_sizes.offenders([path])
    assert [f.name for f in found] == ["long"] and found[0].lines == 71
    assert func_sizes.main([path, "--json"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert json.loads(out[0])["name"] == "long"
    assert func_sizes.main([path, "--max-lines", "100"]) == 0
    assert func_sizes.main([path, "--report-only"]) == 0


def test_check_passes_known_offenders_and_fails_new_and_stale_ones(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(70))
    path = _write(tmp_path, f"def long():\n{body}\n\ndef fine():\n    return 1\n")
    found = func_sizes.offenders([path])
    root = str(tmp_path)
    assert func_sizes.check(found, [path], frozenset({"m.py:long"}), root) == ([], [])
    new, stale = func_sizes.check(found, [path], frozenset(), root)
    assert [f.name for f in new] == ["long"] and stale == []
    # an entry whose function is within the limits now is stale; one in a file not scanned is not
    new, stale = func_sizes.check(found, [path], frozenset({"m.py:long", "m.py:fine", "other.py:f"}), root)
    assert new == [] and stale == ["m.py:fine"]

