"""The built-in jobs, registered exactly the way a third-party processor registers (``processors.registry``).

One ``register`` line per job. The run functions import their processor when called, so
reading the registry (the CLI's choices, a workspace's default schedule) stays cheap.
``order`` is the daemon's order within one round (snapshot feeds the digest, Dream's facts
let the archive promote what they cite). Dream's default interval is 120 s: memory within
minutes of a session's last message (issue 21, item 6); a run with nothing new reads the
log after its offset and appends nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from processors.registry import Job, RunOptions, register

if TYPE_CHECKING:
    from processors.autocompact import AutoCompactReport
    from processors.consolidator import ConsolidateReport
    from processors.context import Context
    from processors.dream import DreamReport
    from processors.embed_job import EmbedReport
    from processors.llm import LLM
    from processors.recall_job import RecallReport
    from processors.runner import RunReport

#: Dream's default daemon interval (seconds): new messages become facts within about two minutes.
DREAM_INTERVAL = 120.0


def _model(options: RunOptions) -> LLM:
    if options.llm is not None:
        return options.llm
    from processors.llm import make_llm

    return make_llm()


def run_snapshot(ctx: Context, options: RunOptions) -> RunReport:
    from processors.runner import run_log_processor
    from processors.snapshot import Snapshot

    return run_log_processor(ctx, Snapshot())


def run_digest(ctx: Context, options: RunOptions) -> RunReport:
    from processors.digest import run_digest as digest

    return digest(ctx)


def run_archive(ctx: Context, options: RunOptions) -> RunReport:
    from processors.archive import run_archive as archive

    return archive(ctx)


def run_consolidate(ctx: Context, options: RunOptions) -> ConsolidateReport:
    from processors.consolidator import run_consolidate as consolidate

    return consolidate(ctx, _model(options), options.key)


def run_autocompact(ctx: Context, options: RunOptions) -> AutoCompactReport:
    from processors.autocompact import run_autocompact as autocompact

    return autocompact(ctx, _model(options), idle_minutes=ctx.config.idle_minutes)


def run_dream(ctx: Context, options: RunOptions) -> DreamReport:
    from processors.dream import run_dream as dream

    return dream(ctx, _model(options), retry_failed=options.retry_failed, max_calls=options.max_calls)


def run_recall(ctx: Context, options: RunOptions) -> RecallReport:
    from processors.recall_job import run_recall as recall

    return recall(ctx)


def run_embed(ctx: Context, options: RunOptions) -> EmbedReport:
    from processors.embed_job import run_embed as embed

    return embed(ctx)


register(Job(name="snapshot", kind="follower", run=run_snapshot, interval=300.0, order=10,
             consumes=frozenset({"message.appended"}), help="messages -> daily diary"))
register(Job(name="digest", kind="follower", run=run_digest, interval=900.0, order=20,
             consumes=frozenset({"diary.appended", "diary.lines"}), help="diary lines -> short-term memory entries"))
register(Job(name="archive", kind="state", run=run_archive, interval=86400.0, order=50,
             help="short-term -> long-term memory"))
register(Job(name="consolidate", kind="state", run=run_consolidate, needs_model=True, daemon=False,
             help="summarise old messages of a session into history"))
register(Job(name="autocompact", kind="state", run=run_autocompact, interval=300.0, needs_model=True, order=30,
             help="consolidate the idlest, biggest sessions"))
register(Job(name="dream", kind="follower", run=run_dream, interval=DREAM_INTERVAL, needs_model=True, order=40,
             help="messages and notes -> facts in MEMORY.md"))
register(Job(name="recall", kind="follower", run=run_recall, interval=60.0, order=60,
             help="catch the search index up with the log"))
register(Job(name="embed", kind="state", run=run_embed, interval=60.0, order=65,
             help="sentence vectors of new indexed texts, for hybrid recall (the embeddings extra)"))
register(Job(name="watch", kind="external", run=None, interval=0.0, order=70,
             help="ingest grown transcripts (supplied by the app: eventlog.app.agents.watch)"))
