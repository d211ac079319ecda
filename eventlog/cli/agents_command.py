"""Agents use evlog: ``evlog mcp``, ``evlog hook claude-code``, ``evlog setup claude-code``, ``evlog watch``.

Heavy imports (the MCP SDK, the ingest parsers) happen inside the commands, so
``evlog --help`` and the other commands do not pay for them.
"""

from __future__ import annotations

import os
import sys
import threading

import click

from eventlog.cli import ExitStatus, cli
from eventlog.cli.common import json_option, note
from eventlog.cli.render import json_line, to_jsonable
from eventlog.errors import RefusedInput
from eventlog.ingest import FORMAT_CHOICES


@cli.command()
@click.option("--max-tokens", type=click.IntRange(min=200), default=4000, show_default=True,
              help="Budget of one tool result (lists that do not fit end with a 'more' cursor).")
@click.pass_context
def mcp(ctx: click.Context, max_tokens: int) -> None:
    """Serve evlog to agents over MCP (stdio): recall, remember, forget, why, sessions, session_messages.

    Resources: evlog://memory (the global MEMORY.md) and evlog://memory/project/<path>.
    Register it in an MCP client as the command 'evlog mcp' (see 'evlog setup claude-code').
    Shares the workspace with the daemon, hooks and other writers (--lock-timeout bounds a wait).
    """
    try:
        from eventlog.app.agents.mcp import serve_stdio
    except ImportError as e:  # the optional dependency
        raise click.ClickException(f"evlog mcp needs the MCP SDK: pip install 'mcp>=2' ({e})") from None
    serve_stdio(ctx.obj["home"], lock_timeout=min(ctx.obj["lock_timeout"], 5.0), result_tokens=max_tokens)


@cli.group()
def hook() -> None:
    """Hooks agent harnesses run (they never fail the harness: problems are notes on stderr, exit 0)."""


@hook.command("claude-code")
@click.option("--budget", type=click.IntRange(min=500), default=8000, show_default=True,
              help="Bytes of memory a SessionStart hook may add to the conversation.")
@click.option("--max-bytes", type=click.IntRange(min=1024), default=8 * 1024 * 1024, show_default=True,
              help="New transcript bytes one capture reads (the rest: the next hook, or evlog watch).")
@click.option("--timeout", "deadline", type=click.FloatRange(min=0.5), default=20.0, show_default=True,
              help="Give up after this many seconds whatever happens (exit 0; the next hook catches up).")
@click.pass_context
def hook_claude_code(ctx: click.Context, budget: int, max_bytes: int, deadline: float) -> None:
    """Handle a Claude Code hook: JSON on stdin, hook output on stdout.

    Stop, SubagentStop, PreCompact, SessionEnd: ingest what the transcript gained since the
    last hook (only the new bytes). SessionStart: print the memory for the session's
    directory (project facts, then facts about the user) as additionalContext.
    UserPromptSubmit: the facts matching the prompt. Always exits 0; problems (locked or
    damaged workspace, missing transcript, bad input) are one line on stderr.
    """
    def load():  # noqa: ANN202 - imported inside the guard: even an import error never fails Claude Code
        from eventlog.app.agents.hooks import handle_claude_code

        return handle_claude_code

    _run_hook(ctx, load, budget, max_bytes, deadline)


@hook.command("codex")
@click.option("--budget", type=click.IntRange(min=500), default=8000, show_default=True,
              help="Bytes of memory a SessionStart hook may add to the conversation.")
@click.option("--max-bytes", type=click.IntRange(min=1024), default=8 * 1024 * 1024, show_default=True,
              help="New rollout bytes one capture reads (the rest: the next hook, or evlog watch).")
@click.option("--timeout", "deadline", type=click.FloatRange(min=0.5), default=20.0, show_default=True,
              help="Give up after this many seconds whatever happens (exit 0; the next hook catches up).")
@click.pass_context
def hook_codex(ctx: click.Context, budget: int, max_bytes: int, deadline: float) -> None:
    """Handle a Codex hook: JSON on stdin, hook output on stdout.

    Stop, PreCompact: ingest what the session's rollout file gained since the last hook.
    SessionStart: print the memory for the session's directory as additionalContext.
    UserPromptSubmit: the facts matching the prompt. Always exits 0; problems are one
    line on stderr.
    """
    def load():  # noqa: ANN202 - imported inside the guard: even an import error never fails Codex
        from eventlog.app.agents.codex_hooks import handle_codex

        return handle_codex

    _run_hook(ctx, load, budget, max_bytes, deadline)


def _run_hook(ctx: click.Context, load, budget: int, max_bytes: int, deadline: float) -> None:  # noqa: ANN001
    """Read the hook input, call the handler ``load()`` returns, print its output; never fails the agent (exit 0)."""
    timer = threading.Timer(deadline, _give_up, args=(deadline,))
    timer.daemon = True
    timer.start()
    try:
        from eventlog.app.agents.hook_socket import HOOK_LOCK_WAIT_S
        from eventlog.app.agents.hooks import MAX_PAYLOAD_BYTES

        raw = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
        if len(raw) > MAX_PAYLOAD_BYTES:
            note(f"evlog hook: the hook input is larger than {MAX_PAYLOAD_BYTES} bytes; ignored")
            return
        result = load()(raw, home=ctx.obj["home"], budget=budget, max_bytes=max_bytes,
                         lock_timeout=min(ctx.obj["lock_timeout"], HOOK_LOCK_WAIT_S))
        for line in result.notes:
            note(f"evlog hook: {line}")
        if result.stdout:
            sys.stdout.write(result.stdout + "\n")
            sys.stdout.flush()
    except Exception as e:  # noqa: BLE001 - a hook must never fail the agent
        note(f"evlog hook: internal error ({e.__class__.__name__}: {e}); nothing lost, the next hook catches up")
    finally:
        timer.cancel()


def _give_up(seconds: float) -> None:
    note(f"evlog hook: gave up after {seconds:g}s (a slow disk or a busy workspace); the next hook catches up")
    sys.stderr.flush()
    os._exit(0)


@cli.group()
def setup() -> None:
    """Connect agent harnesses to evlog (hooks and MCP server in their settings)."""


@setup.command("claude-code")
@click.option("--scope", type=click.Choice(["user", "project"]), default="user", show_default=True,
              help="user: ~/.claude/settings.json and ~/.claude.json; project: .claude/settings.json and .mcp.json "
                   "of --project.")
@click.option("--project", "project_dir", type=click.Path(file_okay=False), default=None,
              help="The project for --scope project (default: the current directory).")
@click.option("--dry-run", is_flag=True, help="Show the diff of every file it would change; change nothing.")
@click.option("--uninstall", is_flag=True, help="Remove evlog's hooks and MCP server (everything else stays; it lists what is left and how to remove it).")
@click.option("--command", "program", default=None, metavar="CMD",
              help="How Claude Code starts evlog (default: this evlog's absolute path).")
@click.option("--prompt-context", is_flag=True, help="Also add the facts matching each prompt (UserPromptSubmit).")
@click.pass_context
def setup_claude_code(ctx: click.Context, scope: str, project_dir: str | None, dry_run: bool, uninstall: bool,
                      program: str | None, prompt_context: bool) -> None:
    """Merge evlog's hooks and MCP server into Claude Code's settings (idempotent, atomic, with a backup).

    Hooks: SessionStart (memory as context), Stop, SubagentStop, PreCompact, SessionEnd
    (capture). MCP server 'evlog' (the tools of 'evlog mcp'). Every other setting, hook and
    server is kept. Each changed file is saved first as <file>.evlog.bak.
    """
    from eventlog.app.agents import setup as st

    plan = st.plan_claude_code(scope=scope, project_dir=project_dir, program=program, home=ctx.obj["home"],
                               uninstall=uninstall, prompt_context=prompt_context)
    _run_setup(ctx, plan, dry_run, "Claude Code",
               "restart Claude Code (or check /hooks and /mcp in it) to use the new settings")


@setup.command("codex")
@click.option("--dry-run", is_flag=True, help="Show the diff of every file it would change; change nothing.")
@click.option("--uninstall", is_flag=True, help="Remove evlog's hooks, MCP server and the feature flag it added (and list what is left).")
@click.option("--command", "program", default=None, metavar="CMD",
              help="How Codex starts evlog (default: this evlog's absolute path).")
@click.option("--prompt-context", is_flag=True, help="Also add the facts matching each prompt (UserPromptSubmit).")
@click.option("--codex-home", "codex_dir", type=click.Path(file_okay=False), default=None,
              help="Codex's folder (default: $CODEX_HOME, else ~/.codex).")
@click.pass_context
def setup_codex(ctx: click.Context, dry_run: bool, uninstall: bool, program: str | None, prompt_context: bool,
                codex_dir: str | None) -> None:
    """Merge evlog's hooks and MCP server into Codex's ~/.codex (idempotent, atomic, with a backup).

    hooks.json: SessionStart (memory as context), Stop and PreCompact (capture the rollout
    file), each running 'evlog hook codex'. config.toml: [features] codex_hooks = true and
    [mcp_servers.evlog], written as a marked block: every other key and comment of the file
    is kept byte for byte. Each changed file is saved first as <file>.evlog.bak.
    """
    from eventlog.app.agents.codex_setup import plan_codex

    plan = plan_codex(program=program, home=ctx.obj["home"], uninstall=uninstall, prompt_context=prompt_context,
                      codex_dir=codex_dir)
    _run_setup(ctx, plan, dry_run, "Codex", "restart Codex (and trust the new hooks if it asks) to use them")


def _run_setup(ctx: click.Context, plan, dry_run: bool, agent: str, restart: str) -> None:  # noqa: ANN001
    """Show (--dry-run) or apply a setup plan, with one line per file on stderr."""
    from eventlog.app.agents import setup as st

    if dry_run:
        for c in plan.changes:
            if c.changed:
                click.echo(c.diff(), nl=False)
            else:
                note(f"unchanged: {c.path}")
        if not plan.changed:
            note("nothing to change")
        return
    if not plan.uninstall:
        from eventlog import init_workspace
        from processors.llm.providers import current_choice

        _config, created = init_workspace(ctx.obj["home"])
        if created:
            note(f"created the workspace {ctx.obj['home']}")
        choice = current_choice(_config)
        if created and not _config.llm:
            init_workspace(ctx.obj["home"], llm=choice.kind)
        note(f"Dream's model: {choice.kind} ({choice.reason}); change it with 'evlog init --llm KIND'")
    written = st.apply(plan)
    for c in plan.changes:
        if c in written:
            note(f"updated {c.path}: {'; '.join(c.summary) or 'merged'}" + (f" (backup: {c.backup})" if c.backup else ""))
        else:
            note(f"unchanged: {c.path}" + (f" ({'; '.join(c.summary)})" if c.summary else ""))
    if written and not plan.uninstall:
        note(f"{restart}; sessions are captured as they happen, and become MEMORY.md facts when Dream runs "
             "('evlog daemon install', or 'evlog run dream')")
    elif written:
        note("evlog's hooks and MCP server are removed (the workspace and its memory stay)")
    elif not plan.uninstall:
        note(f"evlog is already set up for {agent} here")
    else:
        note("evlog was not set up here: nothing to remove")
    if plan.uninstall:
        from eventlog.app.leftovers import left_behind, render_leftovers

        for line in render_leftovers(left_behind(ctx.obj["home"],
                                                 backups=[c.path + st.BACKUP_SUFFIX for c in plan.changes])):
            note(line)


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--debounce", type=click.FloatRange(min=0), default=None,
              help="Seconds a file must be quiet before it is read (default 2, or watch.debounce in evlog.json).")
@click.option("--interval", type=click.FloatRange(min=0.05), default=None,
              help="Seconds between polls (default 1, or watch.interval in evlog.json).")
@click.option("--once", is_flag=True, help="Ingest what is new once (no debounce), then exit.")
@click.option("--format", "fmt", type=click.Choice(FORMAT_CHOICES),
              default="auto", show_default=True, help="Transcript format (auto: detected per file).")
@json_option
@click.pass_context
def watch(ctx: click.Context, paths: tuple[str, ...], debounce: float | None, interval: float | None, once: bool,
          fmt: str, as_json: bool) -> None:
    """Follow transcript folders and ingest what grows (only the new bytes), until Ctrl-C.

    PATHS are files or folders (searched for *.jsonl); default: watch.paths in evlog.json,
    else the Claude Code, Codex and nanobot folders that exist. Survives rotation, deletion
    and files replaced by shorter ones; a line still being written is read when complete.
    """
    import signal

    from eventlog import Workspace
    from eventlog.app.agents.watch import Watcher, default_paths, watch_settings

    home = ctx.obj["home"]
    settings = watch_settings(home)
    roots = list(paths) or settings.paths or default_paths()
    if not roots:
        raise click.UsageError("nothing to watch: give PATHS (no Claude Code, Codex or nanobot folder found)")
    for p in roots:
        if not os.path.exists(os.path.expanduser(p)):
            note(f"{p} does not exist yet; watching for it")
    failures = []

    def show(r) -> None:  # noqa: ANN001
        if as_json:
            click.echo(json_line({**to_jsonable(r), "ok": r.ok}))
        elif r.error:
            note(f"FAILED {r.error}")
        elif r.file.events or r.reset:
            reset = f" (read again from the start: {r.reset})" if r.reset else ""
            note(f"ok     {r.path}: {r.file.messages} new message(s), {r.file.events} event(s){reset}")
        for w in [] if as_json else r.file.warnings:
            note(f"       {w}")
        if r.error:
            failures.append(r)

    try:
        w = Watcher(home, roots, debounce=settings.debounce if debounce is None else debounce, fmt=fmt,
                    on_result=show)
    except RefusedInput as e:
        click.echo(f"evlog: error: {e}", err=True)
        ctx.exit(ExitStatus.USAGE)
    with Workspace.open(home, writable=True, lock_timeout=ctx.obj["lock_timeout"]) as ws:
        if once:
            results = w.step(ws.log, debounce=0.0)
            if not as_json:
                note(f"watched {len(roots)} path(s): {len(results)} file(s) read, "
                     f"{sum(r.file.messages for r in results)} new message(s)")
            if failures:
                ctx.exit(ExitStatus.CHECK_FAILED)
            return
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        note(f"watching {', '.join(roots)} (Ctrl-C stops)")
        try:
            w.run(ws, stop, interval=settings.interval if interval is None else interval)
        except KeyboardInterrupt:
            pass
        note("watch stopped")
