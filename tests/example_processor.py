"""An example third-party processor: one file, one ``register`` line (what the README shows).

``todo`` follows ``message.appended`` and keeps every message that says ``TODO:`` as a
``history.appended`` entry (source ``todo``). It runs on the shared follower loop
(``processors.runner``), so its outputs and its offset are one atomic append: it needs no
dedup key to write each entry exactly once (tests/processors/test_followers_stateful.py checks it
across crashes), and a rerun appends nothing. A plugin package would end this file with the register line itself and
name the module in its ``evlog.processors`` entry point; the tests call ``register(JOB)``.
"""

from __future__ import annotations

from eventlog.events import Event, HistoryAppended, MessageAppended
from processors.context import Context
from processors.registry import Job, RunOptions
from processors.runner import Processor, RunReport, run_log_processor


class Todo(Processor):
    """Messages that say ``TODO:`` -> history entries."""

    name = "todo"
    consumes = frozenset({"message.appended"})

    def policy(self, ev: Event) -> list[Event]:
        assert isinstance(ev, MessageAppended)
        if "TODO:" not in ev.content:
            return []
        text = ev.content[ev.content.index("TODO:"):].strip()
        return [HistoryAppended(text=text, source="todo", session_key=ev.session_key, message_ids=[ev.message_id],
                                refs={"seq": ev.seq})]


def run_todo(ctx: Context, options: RunOptions) -> RunReport:
    return run_log_processor(ctx, Todo())


JOB = Job(name="todo", kind="follower", run=run_todo, interval=60.0, consumes=Todo.consumes,
          help="messages saying TODO: -> history entries")
