"""``evlog ingest``: transcripts of other agents (files or whole folders) into the log."""

from __future__ import annotations

import os
import sys

import click

from eventlog.app.folding_log import FoldingLog
from eventlog.cli import ExitStatus, cli
from eventlog.cli.common import json_option, note, open_workspace, register_named_project
from eventlog.cli.render import json_line, to_jsonable
from eventlog.errors import RefusedInput
from eventlog.ingest import FORMAT_CHOICES, FileResult, IngestReport, collect_files, ingest_paths


def file_line(r: FileResult) -> str:
    """One human line for one file's result."""
    if r.error:
        return f"FAILED {r.error}"
    dup = f", {r.duplicates} already in the log" if r.duplicates else ""
    secrets = f", {r.secrets} secret(s) redacted" if r.secrets else ""
    return f"ok     {r.path}: {r.format}, {r.sessions} session(s), {r.messages} new message(s){dup}{secrets}"


def summary_line(report: IngestReport) -> str:
    """The closing human line of a run."""
    failed = len(report.failed)
    head = f"ingested {len(report.files) - failed} of {len(report.files)} file(s)"
    secrets = report.redacted_summary() or "no secrets redacted"
    return (f"{head}: {report.sessions} session(s), {report.messages} new message(s), "
            f"{report.duplicates} duplicate(s) skipped, {report.events} event(s) appended, {secrets}"
            + (f"; {failed} file(s) FAILED and appended nothing" if failed else ""))


def stderr_is_tty() -> bool:
    """Progress is drawn only on a terminal."""
    return sys.stderr.isatty()


def drop_excluded(home: str, files: list[str]) -> list[str]:
    """``files`` without those excluded from capture (``eventlog.app.capture``), each named on stderr."""
    from eventlog.app.capture import capture_blocked

    kept = []
    for f in files:
        why = capture_blocked(home, f, pause_counts=False)
        if why:
            note(f"skipped {why}; --include-excluded ingests it")
        else:
            kept.append(f)
    return kept


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(FORMAT_CHOICES), default="auto", show_default=True,
              help="Transcript format; auto detects it per file from its first line.")
@click.option("--project", type=click.Path(file_okay=False), default=None,
              help="Project directory of every ingested session (default: the cwd the transcript records, if any).")
@click.option("-v", "--verbose", is_flag=True, help="Also print each file's notes (what was skipped or matched).")
@click.option("--include-excluded", is_flag=True,
              help="Also ingest files excluded from capture ('evlog capture exclude'); they are skipped otherwise.")
@json_option
@click.pass_context
def ingest(ctx: click.Context, paths: tuple[str, ...], fmt: str, project: str | None, verbose: bool,
           include_excluded: bool, as_json: bool) -> None:
    """Ingest agent transcripts: files, or folders searched for *.jsonl.

    Formats: catbuddy (and evlog's own session files), nanobot, claude-code (a project
    folder under ~/.claude/projects, or single files) and codex (rollout files). Each
    file goes in as one atomic batch; a malformed file appends nothing and is reported
    with its line and reason, the others still go in. Ingesting again appends only
    what is new. Secrets (API keys, tokens, private keys, passwords in URLs and
    assignments, command-line passwords, cookies) are replaced by [REDACTED:<kind>],
    always (every way into the log redacts); the lines say how many. Files excluded from
    capture ('evlog capture exclude') are named and skipped unless --include-excluded; a
    paused capture does not stop an explicit ingest. Exits 0 when every file went in, 1 when some failed.
    """
    skipped: list[str] = []
    try:
        files = collect_files(paths, skipped)  # a missing path fails here, before the workspace is opened
    except RefusedInput as e:  # a workspace's own files: a usage mistake, like a bad option
        click.echo(f"evlog: error: {e}", err=True)
        ctx.exit(ExitStatus.USAGE)
    for line in skipped:
        note(line)
    if not include_excluded:
        files = drop_excluded(ctx.obj["home"], files)
    if not files:
        note("no transcript files (*.jsonl) found")
        return
    project = os.path.abspath(project) if project else ""
    held: list[FileResult] = []

    def show(r: FileResult) -> None:
        if as_json:
            click.echo(json_line({**to_jsonable(r), "ok": r.ok}))
            return
        note(file_line(r))
        for w in r.warnings:  # lines over the line limit: always said
            note(f"         {w}")
        for n in r.notes if verbose else ():
            note(f"         {n}")

    with open_workspace(ctx, writable=True) as ws:
        if project:
            register_named_project(ws, project)
        log = FoldingLog(ws)  # each file's batch folded as it is written, not read back at close
        if stderr_is_tty():  # a bar while it runs, the per-file lines after it
            with click.progressbar(length=len(files), label="ingesting", file=sys.stderr) as bar:
                def progress(r: FileResult, _done: int, _total: int) -> None:
                    held.append(r)
                    bar.update(1)

                report = ingest_paths(log, files, fmt=fmt, project=project, on_progress=progress)
        else:
            report = ingest_paths(log, files, fmt=fmt, project=project,
                                  on_progress=lambda r, _done, _total: show(r))
    for r in held:
        show(r)
    if not as_json:
        note(summary_line(report))
    if not report.ok:
        ctx.exit(ExitStatus.CHECK_FAILED)
