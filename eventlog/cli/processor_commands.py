"""Commands over the processors: run, offsets, memory, remember, audit (the daemon: ``daemon_command``)."""

from __future__ import annotations

import sys

import click

import eventlog
from eventlog.cli import ExitStatus, cli
from eventlog.cli.common import emit, json_option, note, open_workspace, register_named_project
from eventlog.cli.render import json_line, preview, render_explanation, render_report, render_run
from eventlog.errors import NotFound


def _llm(kind: str | None, model: str | None, ws, on_fallback=note):  # noqa: ANN001, ANN202
    from processors.llm.providers import llm_for

    if kind == "replay":
        from processors.dream import replay_llm

        return replay_llm(ws)
    return llm_for(ws, kind, model, on_fallback=on_fallback)


class JobChoice(click.Choice):
    """The registered jobs that ``evlog run`` can run, read from the registry when asked (plugins included)."""

    def __init__(self) -> None:
        super().__init__((), case_sensitive=True)

    @property
    def choices(self) -> tuple[str, ...]:
        from processors import registry

        return tuple(registry.names(["follower", "state"]))

    @choices.setter
    def choices(self, _value: object) -> None:
        pass  # the registry is the list


def llm_options(f):  # noqa: ANN001, ANN201
    """--llm and --model, for commands that call a language model."""
    f = click.option("--model", default=None, help="Model id (default: the workspace's, else $EVLOG_MODEL, else the "
                                                   "provider's default).")(f)
    return click.option("--llm", "llm_kind", type=click.Choice(["claude-code", "openai", "anthropic", "offline",
                                                                 "replay"]), default=None,
                        help="Which model: the workspace's choice (evlog init), else anthropic if ANTHROPIC_API_KEY "
                             "is set, else the offline extractor; a failing one falls back to offline. replay "
                             "reuses outputs recorded in the log.")(f)


@cli.command("run")
@click.argument("processor", type=JobChoice())
@click.argument("key", required=False)
@click.option("--retry-failed", is_flag=True, help="dream: re-run the input ranges of failed or interrupted runs.")
@llm_options
@json_option
@click.pass_context
def run_cmd(ctx: click.Context, processor: str, key: str | None, retry_failed: bool, llm_kind: str | None,
            model: str | None, as_json: bool) -> None:
    """Run one processor now and report what it did.

    snapshot: messages -> daily diary (deduplicated, within the byte budget);
    digest: diary lines -> short-term memory entries;
    archive: short-term -> long-term memory (promote what is used, drop what is stale);
    consolidate [KEY]: summarise old messages of a session (or of all) into history;
    autocompact: consolidate the idlest, biggest sessions (at most 3, with backoff);
    dream: learn facts for MEMORY.md from messages and notes (--retry-failed re-runs
    failed calls); exits 1 when a call failed;
    recall: catch the search index up with the log.
    """
    from processors import registry

    if key is not None and processor != "consolidate":
        raise click.UsageError(f"KEY is only for 'run consolidate', not 'run {processor}'")
    if retry_failed and processor != "dream":
        raise click.UsageError("--retry-failed is only for 'run dream'")
    with open_workspace(ctx, writable=True) as ws:
        llm = _llm(llm_kind, model, ws) if registry.get(processor).needs_model else None
        report = eventlog.run(ws, processor, llm=llm, key=key, retry_failed=retry_failed)
    if as_json:
        click.echo(json_line(report))
    else:
        click.echo(render_report(report))
    if report.failed:
        note("a Dream call failed; 'evlog audit' shows why and 'evlog run dream --retry-failed' runs it again")
        ctx.exit(ExitStatus.CHECK_FAILED)


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
    return (f"{e.tier:<7} {e.entry_id:<28} {e.date} [{', '.join(e.session_keys)[:40]}] {preview(e.text, 60)}")


def _fact_line(f) -> str:  # noqa: ANN001
    flags = "".join(x for x in (" pinned" if f.pinned else "", f" {f.state}" if f.state != "active" else ""))
    where = f.project or "global"
    return f"{f.fact_id:<18} {where[-24:]:<24} {f.section[:16]:<16} {(f.subject or '-')[:14]:<14} {preview(f.text, 90)}{flags}"


from eventlog.cli.recall_command import recall_options as _recall_options  # noqa: E402

FACT_TIERS = ("active", "archived", "superseded", "forgotten", "all")
ENTRY_TIERS = ("stm", "ltm", "dropped")


@cli.group(invoke_without_command=True)
@click.option("--tier", type=click.Choice(FACT_TIERS + ENTRY_TIERS), default="active", show_default=True,
              help="Facts in this state (all: every state), or short-term (stm) / long-term (ltm) / dropped entries.")
@click.option("--project", default=None, help="Only the facts of this project's MEMORY.md ('' = the global file).")
@json_option
@click.pass_context
def memory(ctx: click.Context, tier: str, project: str | None, as_json: bool) -> None:
    """List facts (id, file, section, subject, text), or memory entries with --tier stm|ltm|dropped.

    Facts are what MEMORY.md shows (active), what left it for the budget (archived),
    was replaced (superseded) or forgotten. Change them with the subcommands; every
    change is an event, so replay keeps it. 'evlog audit why --fact ID' explains one.
    """
    if ctx.invoked_subcommand is not None:
        return
    ws = open_workspace(ctx)
    if tier in ENTRY_TIERS:
        from projections.memory_entries import entries_with_text

        emit(entries_with_text(ws.memory_entries.entries(tier), ws.log), as_json, _entry_line)
        return
    from eventlog import memory as mem

    rows = mem.facts(ws, state=None if tier == "all" else tier, project=project)
    emit(rows, as_json, _fact_line)
    if not rows and not as_json:
        note(f"no {tier} facts" + ("" if tier != "active" else " yet ('evlog run dream' learns them)"))


@memory.command("recall")
@click.argument("query")
@_recall_options
@json_option
@click.pass_context
def memory_recall(ctx: click.Context, query: str, as_json: bool, mark_used: bool, **options) -> None:  # noqa: ANN003
    """The same as 'evlog recall QUERY' (ranked search with sources)."""
    from eventlog.cli.recall_command import do_recall

    do_recall(ctx, query, as_json=as_json, mark_used=mark_used, **options)


@memory.command("forget")
@click.argument("fact_ids", nargs=-1)
@click.option("--match", "match", default=None, help="Forget every active fact whose text contains this (shown first).")
@click.option("--reason", default="", help="Why (kept in the log).")
@click.option("-y", "--yes", is_flag=True, help="With --match: forget the matches without asking.")
@click.pass_context
def memory_forget(ctx: click.Context, fact_ids: tuple[str, ...], match: str | None, reason: str, yes: bool) -> None:
    """Forget facts by id (or --match TEXT): they leave MEMORY.md and are never learned again from the same messages.

    --match first lists the facts it would forget and asks; without a terminal it
    refuses unless --yes is given (nothing is forgotten). 'evlog memory unforget ID'
    brings a fact back; 'evlog memory --tier forgotten' lists them.
    """
    from eventlog import memory as mem

    if bool(fact_ids) == bool(match):
        raise click.UsageError("give fact ids or --match TEXT (one of them)")
    ids = list(fact_ids)
    if match is not None:
        found = mem.matching(open_workspace(ctx), match)  # read-only: no lock held while the user decides
        if not found:
            raise NotFound(f"no active fact contains {match!r}")
        ids = [f.fact_id for f in found]
        if not yes and not _confirm_forget(found, match):
            return
    with open_workspace(ctx, writable=True) as ws:
        done = mem.forget(ws, ids, reason=reason)
    note(f"forgot {len(done)} fact(s): {', '.join(done)}" if done else "nothing to forget: already forgotten")


def _interactive() -> bool:
    """Whether a person can answer a question on stdin."""
    return sys.stdin.isatty()


def _confirm_forget(found: list, match: str) -> bool:
    """Show what --match would forget and ask; refuse (UsageError) without a terminal."""
    note(f"--match {match!r} would forget {len(found)} fact(s):")
    for f in found:
        note("  " + _fact_line(f))
    if not _interactive():
        raise click.UsageError(f"--match would forget {len(found)} fact(s) (listed above); nothing was forgotten: "
                               "pass --yes to forget them without a terminal")
    if not click.confirm(f"Forget these {len(found)} fact(s)?", default=False, err=True):
        note("nothing forgotten")
        return False
    return True


@memory.command("unforget")
@click.argument("fact_id")
@click.pass_context
def memory_unforget(ctx: click.Context, fact_id: str) -> None:
    """Bring back forgotten fact FACT_ID: it is active (and in MEMORY.md) again. 'forget' is reversible; 'evlog erase' is not."""
    from eventlog import memory as mem

    with open_workspace(ctx, writable=True) as ws:
        changed = mem.unforget(ws, fact_id)
    note(f"restored {fact_id}" if changed else f"{fact_id} is not forgotten: nothing to restore")


@memory.command("edit")
@click.argument("fact_id")
@click.argument("text")
@click.pass_context
def memory_edit(ctx: click.Context, fact_id: str, text: str) -> None:
    """Change the text of fact FACT_ID to TEXT."""
    from eventlog import memory as mem

    with open_workspace(ctx, writable=True) as ws:
        changed = mem.edit(ws, fact_id, text)
    note(f"edited {fact_id}" if changed else f"{fact_id} already reads so")


@memory.command("confirm")
@click.argument("fact_id")
@click.pass_context
def memory_confirm(ctx: click.Context, fact_id: str) -> None:
    """Confirm agent-proposed fact FACT_ID ("An agent noted: ..."): it reads as your own from now on."""
    from eventlog import memory as mem

    with open_workspace(ctx, writable=True) as ws:
        changed = mem.confirm(ws, fact_id)
        text = mem.find(ws, fact_id).text
    note(f"confirmed {fact_id}: {text}" if changed else f"{fact_id} is already confirmed")


@memory.command("pin")
@click.argument("fact_id")
@click.option("--off", is_flag=True, help="Unpin instead.")
@click.pass_context
def memory_pin(ctx: click.Context, fact_id: str, off: bool) -> None:
    """Pin a fact: it never leaves MEMORY.md for the budget (an archived one comes back). --off unpins."""
    from eventlog import memory as mem

    with open_workspace(ctx, writable=True) as ws:
        changed = mem.pin(ws, fact_id, not off)
    note(f"{'unpinned' if off else 'pinned'} {fact_id}" if changed else f"{fact_id} was already {'unpinned' if off else 'pinned'}")


@cli.command()
@click.argument("text")
@click.option("--project", type=click.Path(file_okay=False, resolve_path=True), default=None,
              help="The note is about this project (its facts go to <project>/memory/MEMORY.md).")
@click.pass_context
def remember(ctx: click.Context, text: str, project: str | None) -> None:
    """Give Dream a note to keep, e.g. 'I prefer tabs' (the same note twice is kept once).

    A note is always kept: rewritten in the third person when that works ('I'm vegetarian.'
    becomes 'The user is vegetarian.'), verbatim otherwise; or refused with the reason
    printed (a secret, a request for work), and then nothing is written.
    """
    from eventlog import remember as remember_note
    from processors.extract.notes import note_verdict

    with open_workspace(ctx, writable=True) as ws:
        cursor = remember_note(ws, text, project=project or "")
        if project:
            register_named_project(ws, project)
    note(f"noted (seq {cursor}), to be kept as: {note_verdict(text).text} ('evlog run dream' learns from it)")


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
@click.option("--fact", "fact_id", default=None, help="Explain the fact with this id (in any state) instead of matching text.")
@json_option
@click.pass_context
def audit_why(ctx: click.Context, text: str | None, fact_id: str | None, as_json: bool) -> None:
    """Explain a fact: who added it, the run, the exact source messages, the supersede chain and its history.

    TEXT finds facts in every state (active first, then archived, forgotten, superseded).
    The history lists every change with its time: learned, edited (by whom, the text
    before and after), pinned, archived, superseded, forgotten, unforgotten.
    """
    from processors.audit import why

    if (text is None) == (fact_id is None):
        raise click.UsageError("give either TEXT or --fact ID")
    found = why(open_workspace(ctx), text, fact_id=fact_id, states=WHY_STATES)
    found.sort(key=lambda ex: WHY_STATES.index(ex.state) if ex.state in WHY_STATES else len(WHY_STATES))
    if as_json:
        emit(found, True, json_line)
    else:
        for ex in found:
            click.echo(render_explanation(ex))
    if not found:
        raise NotFound(f"no fact in MEMORY.md matches {text or fact_id!r}, in any state ({', '.join(WHY_STATES)})")


#: The states 'audit why TEXT' looks in, in the order it shows them.
WHY_STATES = ("active", "archived", "forgotten", "superseded")
