"""Commands over the processors: run, offsets, memory, remember, audit, daemon."""

from __future__ import annotations

import click

from eventlog.cli import cli
from eventlog.cli.common import emit, json_option, note, open_workspace
from eventlog.cli.render import json_line, preview, render_explanation, render_report, render_run
from eventlog.errors import NotFound


def _llm(kind: str | None, model: str | None, ws):  # noqa: ANN001, ANN202
    from processors.llm import make_llm

    if kind == "replay":
        from processors.dream import replay_llm

        return replay_llm(ws)
    return make_llm(kind, model=model)


def llm_options(f):  # noqa: ANN001, ANN201
    """--llm and --model, for commands that call a language model."""
    f = click.option("--model", default=None, help="Claude model id (default: $EVLOG_MODEL, else a current Sonnet).")(f)
    return click.option("--llm", "llm_kind", type=click.Choice(["offline", "anthropic", "replay"]), default=None,
                        help="Which model: anthropic if ANTHROPIC_API_KEY is set, else the offline extractor; "
                             "replay reuses outputs recorded in the log.")(f)


@cli.command("run")
@click.argument("processor", type=click.Choice(["snapshot", "digest", "archive", "consolidate", "autocompact", "dream"]))
@click.argument("key", required=False)
@click.option("--retry-failed", is_flag=True, help="dream: re-run the input ranges of failed or interrupted runs.")
@llm_options
@json_option
@click.pass_context
def run_cmd(ctx: click.Context, processor: str, key: str | None, retry_failed: bool, llm_kind: str | None,
            model: str | None, as_json: bool) -> None:
    """Run one processor now and report what it did.

    snapshot: messages -> daily diary (deduplicated, within the byte budget);
    digest: diary -> short-term memory and Dream's history;
    archive: short-term -> long-term memory (promote what is used, drop what is stale);
    consolidate [KEY]: summarise old messages of a session (or of all) into history;
    autocompact: consolidate the idlest, biggest sessions (at most 3, with backoff);
    dream: learn facts for MEMORY.md from history (--retry-failed re-runs failed ranges).
    """
    import processors

    if key is not None and processor != "consolidate":
        raise click.UsageError(f"KEY is only for 'run consolidate', not 'run {processor}'")
    if retry_failed and processor != "dream":
        raise click.UsageError("--retry-failed is only for 'run dream'")
    with open_workspace(ctx, writable=True) as ws:
        llm = _llm(llm_kind, model, ws) if processor in ("consolidate", "autocompact", "dream") else None
        report = processors.run(ws, processor, llm=llm, key=key, retry_failed=retry_failed)
    if as_json:
        click.echo(json_line(report))
    else:
        click.echo(render_report(report))


@cli.command()
@json_option
@click.pass_context
def offsets(ctx: click.Context, as_json: bool) -> None:
    """Every processor's position, lag behind the log and any recorded loss."""
    import processors

    rows = processors.offsets(open_workspace(ctx))
    emit(rows, as_json, lambda r: f"{r.processor:<12} seq {r.seq:<8} lag {r.lag:<8} resets {r.resets:<3} "
                                  f"lost {r.lost_bytes} bytes/{r.lost_records} records  {r.detail}".rstrip())


def _entry_line(e) -> str:  # noqa: ANN001
    return (f"{e.tier:<7} {e.entry_id:<28} {e.date} bytes {e.start}..{e.end} "
            f"[{', '.join(e.session_keys)[:40]}] {preview(e.text, 60)}")


@cli.group(invoke_without_command=True)
@click.option("--tier", type=click.Choice(["stm", "ltm", "dropped"]), default=None, help="Only entries of this tier.")
@json_option
@click.pass_context
def memory(ctx: click.Context, tier: str | None, as_json: bool) -> None:
    """List short-term (stm) and long-term (ltm) memory entries with their sources."""
    if ctx.invoked_subcommand is not None:
        return
    emit(open_workspace(ctx).memory_entries.entries(tier), as_json, _entry_line)


@memory.command("recall")
@click.argument("query")
@json_option
@click.pass_context
def memory_recall(ctx: click.Context, query: str, as_json: bool) -> None:
    """Find memory entries containing QUERY and record that they were used (archive keeps them)."""
    from processors.archive import recall

    with open_workspace(ctx, writable=True) as ws:
        found = recall(ws, query)
    emit(found, as_json, _entry_line)
    if not found and not as_json:
        note(f"no memory entry contains {query!r}")


@cli.command()
@click.argument("text")
@click.option("--project", type=click.Path(file_okay=False, resolve_path=True), default=None,
              help="The note is about this project (its facts go to <project>/memory/MEMORY.md).")
@click.pass_context
def remember(ctx: click.Context, text: str, project: str | None) -> None:
    """Give Dream a note to learn from (a history entry), e.g. 'I prefer tabs'."""
    from processors.dream import remember as remember_note

    with open_workspace(ctx, writable=True) as ws:
        if project:
            ws.register_project(project)  # named on purpose: its MEMORY.md is mirrored there
        cursor = remember_note(ws, text, project=project or "")
    note(f"noted as history entry {cursor}; 'evlog run dream' learns from it")


@cli.group(invoke_without_command=True)
@click.option("-n", "--count", type=click.IntRange(min=0), default=10, show_default=True,
              help="Show the newest N runs (0 = all).")
@json_option
@click.pass_context
def audit(ctx: click.Context, count: int, as_json: bool) -> None:
    """List Dream runs: time, model, input range, attempts, outcome, tokens, facts added."""
    if ctx.invoked_subcommand is not None:
        return
    from processors.audit import dream_runs

    runs = dream_runs(open_workspace(ctx), count)
    emit(runs, as_json, render_run)
    if not as_json and not runs:
        note("no Dream runs yet ('evlog run dream')")


@audit.command("why")
@click.argument("text", required=False)
@click.option("--fact", "fact_id", default=None, help="Explain the fact with this id instead of matching text.")
@json_option
@click.pass_context
def audit_why(ctx: click.Context, text: str | None, fact_id: str | None, as_json: bool) -> None:
    """Explain a line of MEMORY.md: the run, its prompt hash and the source messages."""
    from processors.audit import why

    if (text is None) == (fact_id is None):
        raise click.UsageError("give either TEXT or --fact ID")
    found = why(open_workspace(ctx), text, fact_id=fact_id)
    if as_json:
        emit(found, True, json_line)
    else:
        for ex in found:
            click.echo(render_explanation(ex))
    if not found:
        raise NotFound(f"no fact in MEMORY.md matches {text or fact_id!r}")


@cli.command()
@llm_options
@click.option("--once", is_flag=True, help="Run every job once, then exit.")
@click.pass_context
def daemon(ctx: click.Context, llm_kind: str | None, model: str | None, once: bool) -> None:
    """Run snapshot, digest, autocompact, dream and archive on their schedules.

    Logs to stderr; SIGINT/SIGTERM stop it cleanly between jobs (every offset is
    committed). Intervals are the 'schedule' in evlog.json.
    """
    import signal
    import threading
    import time

    from processors.daemon import run_daemon

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())

    def log(msg: str) -> None:
        click.echo(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {msg}", err=True)

    with open_workspace(ctx, writable=True) as ws:
        run_daemon(ws, _llm(llm_kind, model, ws), stop=stop, log=log, once=once)
