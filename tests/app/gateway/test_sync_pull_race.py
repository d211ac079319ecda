"""A pull and another process's writer at once (found by tools/chaos.py).

``sync.pull`` plans a page for the seqs it will be written at and then appends it. It held
only its own process's lock meanwhile, so a writer in another process (an agent, a hook,
the daemon) could append in between: the page then landed at other seqs than planned and
the pull exited 3 ("pull batch was not written densely ... run 'evlog verify'") after
writing it. The pull now holds the log's write turn from planning to appending.
"""

from __future__ import annotations

import threading

from eventlog.app.gateway import sync
from eventlog.app.gateway.memory_store import MemoryGateway
from eventlog.app.session_store import LocalSessionStore
from eventlog.app.workspace import Workspace

EMAIL = "racer@example.test"


def test_a_writer_appending_while_a_pull_plans_its_page_waits_its_turn(workspace, monkeypatch):
    gw = MemoryGateway("race")
    store = gw.store(EMAIL)
    for i in range(3):
        store.add_message("from-gateway", "user", f"pulled {i}", message_id=f"g{i}")
    other = LocalSessionStore.open(workspace, lock_timeout=30)  # another writer, as in another process
    real_plan = sync.plan_page
    done = threading.Event()

    def plan_while_another_writes(*args, **kwargs):
        if not done.is_set():
            t = threading.Thread(target=lambda: (other.add_message("agent", "user", "meanwhile", message_id="m1"),
                                                 done.set()), daemon=True)
            t.start()
            done.wait(1.0)  # the other writer gets in now, unless the pull holds the turn
        return real_plan(*args, **kwargs)

    monkeypatch.setattr(sync, "plan_page", plan_while_another_writes)
    try:
        with Workspace.open(workspace, writable=True, lock_timeout=30) as ws:
            report = sync.pull(ws, remote=gw.remote(EMAIL))
        assert report.messages == 3
        assert done.wait(30), "the other writer never got its turn"
    finally:
        other.ws.close()
    with Workspace.open(workspace, writable=True) as ws:
        assert [p for p in ws.log.verify() if p.damaged] == []
        assert [m.content for m in LocalSessionStore(ws).history("from-gateway")] == [f"pulled {i}" for i in range(3)]
        assert [m.content for m in LocalSessionStore(ws).history("agent")] == ["meanwhile"]
