"""``import eventlog`` is the front door (issue 20, item 4): every name a library user needs, lazily."""

from __future__ import annotations

import subprocess
import sys

import eventlog

EXAMPLE = '''
import eventlog

eventlog.init_workspace(HOME)
with eventlog.open_session_store(HOME) as store:
    store.get_or_create("cli:me", title="Refactor")
    store.add_message("cli:me", "user", "I prefer pytest over unittest.")
with eventlog.open_workspace(HOME, writable=True) as ws:
    ws.append([eventlog.events.MessageAppended(session_key="cli:me", message_id="m2", role="user",
                                               content="We deploy on Fridays.")])
    eventlog.remember(ws, "I am vegetarian.")
    report = eventlog.run(ws, "dream", llm=eventlog.make_llm("offline"))
    assert not report.failed, report
    for fact in eventlog.memory.facts(ws):
        print(fact.text)
    hits = eventlog.recall.search(ws, "pytest", limit=5)
    eventlog.recall.use(ws, hits)
    assert hits and ws.log.verify() == []
'''


def test_the_library_example_needs_only_import_eventlog(tmp_path):
    script = tmp_path / "example.py"
    script.write_text(f"HOME = {str(tmp_path / 'ws')!r}\n" + EXAMPLE)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "The user prefers pytest over unittest." in out.stdout
    assert "vegetarian" in out.stdout


def test_every_public_name_resolves():
    for name in eventlog.__all__:
        assert getattr(eventlog, name) is not None, name
    assert eventlog.run.__module__ == "processors"
    assert eventlog.register_processor.__name__ == "register"


def test_import_eventlog_loads_no_layer_above_the_core():
    code = ("import sys, eventlog; bad = sorted(m for m in sys.modules if m.split('.')[0] in ('processors', "
            "'projections') or m.startswith('eventlog.app')); print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr
