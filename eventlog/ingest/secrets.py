"""``eventlog.ingest.secrets``: the secret detector (``eventlog.secrets``) under its old name, and its dry run.

The detector moved to the log core (``eventlog/secrets.py``) because the writer's door
redacts every event with it (``eventlog.redact``) and the core must not import
``eventlog.ingest``. This module re-exports its API so existing imports keep working,
and keeps the ingest dry run: ``python -m eventlog.ingest.secrets [--show] PATH...``
lists what ingest would redact in a set of transcripts, with the secrets masked.
"""

from __future__ import annotations

from typing import Any

from eventlog.secrets import (
    CATALOGUE,
    KINDS,
    PLACEHOLDER,
    Kind,
    find,
    kinds_summary,
    placeholder,
    redact,
    redact_value,
    redact_values,
)

__all__ = ["CATALOGUE", "KINDS", "PLACEHOLDER", "Kind", "find", "kinds_summary", "placeholder", "redact", "redact_value",
           "redact_values"]


def _main(argv: list[str] | None = None) -> int:
    """``python -m eventlog.ingest.secrets [--show] PATH...``: what ingest would redact, and how fast.

    Parses every transcript under PATH as ingest does, redacts the text ingest keeps
    (message content, tool calls, extra; session titles and metadata) and prints each
    file's kinds, then the totals and the throughput. ``--show`` also prints where each
    secret is, with the secret itself masked (its kind and length, never its text).
    """
    import argparse
    import time

    from eventlog.ingest import collect_files, parse_file
    from eventlog.secrets import _apply, _collect

    ap = argparse.ArgumentParser(prog="python -m eventlog.ingest.secrets", description=_main.__doc__)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--show", action="store_true", help="print each secret's context (the secret itself masked)")
    args = ap.parse_args(argv)
    total_bytes = 0
    total_seconds = 0.0
    found: list[str] = []
    for path in collect_files(args.paths):
        pf = parse_file(path)
        values: list[Any] = []
        for s in pf.sessions:
            values.append([s.title, s.metadata])
            values.extend([m.content, m.tool_calls, m.extra] for m in s.messages)
        values.extend(su.title for su in pf.summaries)
        strings: list[str] = []
        _collect(values, strings, {})
        total_bytes += sum(len(x.encode("utf-8", "surrogatepass")) for x in strings)
        t0 = time.perf_counter()
        out = redact_values(values)
        total_seconds += time.perf_counter() - t0
        kinds = [k for _, ks in out for k in ks]
        found.extend(kinds)
        print(f"{path}: {kinds_summary(kinds) or 'nothing'}")
        if args.show:  # each secret in the context of the redacted text, so no secret is printed
            for x in strings:
                hits = find(x)
                red, shift = _apply(x, hits), 0
                for a, b, kind in hits:
                    at = a + shift
                    shift += len(placeholder(kind)) - (b - a)
                    end = at + len(placeholder(kind))
                    print(f"    {kind} ({b - a} chars): ...{red[max(0, at - 60):end + 30]}...".replace("\n", "\\n"))
    mb = total_bytes / 1e6
    rate = f", {mb / total_seconds:.0f} MB/s" if total_seconds > 0 else ""
    print(f"total: {kinds_summary(found) or 'nothing'} in {mb:.2f} MB of text, {total_seconds * 1000:.1f} ms{rate}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
