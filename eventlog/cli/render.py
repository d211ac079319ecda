"""Pure functions that turn library results into text: one line of human output or JSON.

Commands never format by hand; they pass what the library returned to one of these.
JSON output is one object per line (NDJSON), keys as the library names them.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import msgspec

from eventlog.codec import ENCODER
from eventlog.events import Event, MessageAppended

_PREVIEW = 100


def to_jsonable(obj: Any) -> Any:
    """Builtins for dataclasses, msgspec Structs and containers of them."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, msgspec.Struct):
        return msgspec.to_builtins(obj)
    if isinstance(obj, dict):
        return {k: to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_jsonable(v) for v in obj]
    return obj


def json_line(obj: Any) -> str:
    """One compact JSON object (no trailing newline), UTF-8 kept as is."""
    if isinstance(obj, Event):
        return ENCODER.encode(obj).decode()
    return json.dumps(to_jsonable(obj), ensure_ascii=False, separators=(",", ":"), sort_keys=False)


def preview(text: str, width: int = _PREVIEW) -> str:
    """One line of at most ``width`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def event_line(ev: Event) -> str:
    """A readable one-line summary of an event: ``#seq ts type details``."""
    head = f"#{ev.seq:<6} {ev.ts[:23]:<23} {ev.type:<20}"
    match ev:
        case MessageAppended():
            return f"{head} [{preview(ev.session_key, 40)}] {ev.role}: {preview(ev.content)}"
        case _:
            fields = msgspec.to_builtins(ev)
            parts = []
            for k, v in fields.items():
                if k in ("type", "seq", "ts", "dedup"):
                    continue
                text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
                parts.append(f"{k}={preview(text, 60)}")
            return f"{head} {' '.join(parts)}"


def kv_block(pairs: list[tuple[str, Any]]) -> str:
    """Aligned ``key: value`` lines."""
    width = max((len(k) for k, _ in pairs), default=0)
    return "\n".join(f"{k + ':':<{width + 1}} {v}" for k, v in pairs)


def render_report(report: Any) -> str:
    """A processor's report as aligned ``key: value`` lines (nested lists one per line)."""
    data = to_jsonable(report)
    pairs: list[tuple[str, Any]] = []
    for k, v in data.items():
        if isinstance(v, list):
            if not v:
                continue
            for item in v:
                pairs.append((k.replace("_", " "), _one_line(item)))
        elif isinstance(v, dict):
            if v:
                pairs.append((k.replace("_", " "), ", ".join(f"{a}={b}" for a, b in v.items())))
        else:
            pairs.append((k.replace("_", " "), v))
    return kv_block(pairs)


def _one_line(item: Any) -> str:
    """An item of a report's list: ``key value`` pairs, each value readable (never a Python repr)."""
    if isinstance(item, dict):
        return "  ".join(f"{k.replace('_', ' ')} {readable(v)}" for k, v in item.items() if v not in ("", [], {}, None))
    return readable(item)


def readable(value: Any, width: int = 60) -> str:
    """A value as a person reads it: numbers as a range and a count (``2..18 (17)``), strings joined
    (the first three and ``+N more``), mappings as ``k=v``; text cut to ``width``."""
    if isinstance(value, list | tuple):
        if value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return f"{min(value)}..{max(value)} ({len(value)})" if len(value) > 1 else str(value[0])
        shown = ", ".join(readable(v, 24) for v in value[:3])
        return shown + (f" +{len(value) - 3} more" if len(value) > 3 else "")
    if isinstance(value, dict):
        return ", ".join(f"{k}={readable(v, 24)}" for k, v in value.items())
    return preview(str(value), width)


def render_run(row: Any) -> str:
    """One Dream run (an audit RunRow): time, model, input range, attempts, outcome, tokens, facts."""
    cursors = row.input_cursors
    span = f"{min(cursors)}..{max(cursors)} ({len(cursors)})" if cursors else "-"
    retried = f" retried by {row.retried_by}" if row.retried_by else ""
    return (f"{row.time[:19]:<19} {row.run_id:<16} {row.model:<22} entries {span:<16} attempts {row.attempts} "
            f"{row.outcome:<11} tokens {row.input_tokens}+{row.output_tokens} facts +{row.facts_added}{retried}"
            + (f"  ({preview(row.reason, 80)})" if row.reason else ""))


def render_explanation(ex: Any) -> str:
    """Why a MEMORY.md line is there: the fact, who added it, its run, its messages and its supersede chain."""
    about = ", ".join(x for x in (f"about {ex.subject}" if ex.subject else "", f"true since {ex.when[:10]}" if ex.when else "",
                                  ex.state if ex.state != "active" else "", f"added by {ex.by}" if ex.by else "",
                                  f"proposed by an {ex.proposed}" if getattr(ex, "proposed", "") else "",
                                  f"written by {ex.author}" if getattr(ex, "author", "") else "") if x)
    out = [f"{ex.fact_id}  [{ex.file} / {ex.section}]  {ex.text}" + (f"  ({about})" if about else "")]
    if ex.run_id:
        out.append(f"  run {ex.run_id} ({ex.outcome}) at {ex.run_time[:19]}, model {ex.model}, prompt {ex.prompt_hash}, "
                   f"tokens {ex.input_tokens}+{ex.output_tokens}")
    for m in ex.messages:
        out.append(f"  from message {m.message_id} ({m.speaker or m.role}, {m.timestamp[:19]}, {m.session_key or 'note'}): "
                   f"{m.excerpt}")
    for s in ex.sources:
        where = f" session {s.session_key}" if s.session_key else ""
        out.append(f"  from history {s.cursor} ({s.source}{where}): {s.excerpt}")
        for m in s.messages:
            out.append(f"    message {m.message_id} ({m.role}, {m.timestamp[:19]}, {m.session_key}): {m.excerpt}")
    if len(ex.chain) > 1:
        out.append("  chain: " + " -> ".join(f"{c.fact_id} ({c.state})" for c in ex.chain))
    if len(ex.history) > 1:  # learned alone is what the first line says
        out.append("  history:")
        out.extend("    " + history_step(h) for h in ex.history)
    return "\n".join(out)


def history_step(h: Any) -> str:
    """One change of a fact (an audit HistoryStep): ``time  action by who: what``."""
    who = f" by {h.by}" if h.by else ""
    match h.action:
        case "edited":
            what = f": {preview(h.old_text, 80)!r} -> {preview(h.text, 80)!r}"
        case "learned":
            what = (f" ({h.detail})" if h.detail else "") + f": {preview(h.text, 80)!r}"
        case "superseded" | "replaced":
            who = (" by fact " if h.action == "superseded" else " fact ") + h.other + (f" ({h.by})" if h.by else "")
            what = (f": {preview(h.text, 80)!r}" if h.text else "") + (f" ({preview(h.detail, 80)})" if h.detail else "")
        case _:
            what = f" ({preview(h.detail, 80)})" if h.detail else ""
    return f"{h.time[:19]}  {h.action}{who}{what}"


def session_table(rows: list[tuple[int, Any]]) -> list[str]:
    """``evlog sessions``: a header, then one line per (depth, SessionNode): updated, messages, project, key, title.

    Keys are the nodes' unique short forms, never cut; a child is indented under its parent
    with ``└``; a session without a title shows its preview in parentheses; ``+N probes``
    counts the probe sessions folded into a row.
    """
    cells = []
    for depth, node in rows:
        info = node.info
        project = info.project.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1] if info.project else "-"
        key = ("  " * (depth - 1) + "└ " if depth else "") + node.short_key
        title = info.display or info.title or (f"({preview(info.preview, 58)})" if info.preview else "-")
        folded = f"  [+{node.probes} probe{'s' if node.probes != 1 else ''}]" if node.probes else ""
        cells.append((info.updated_at[:19].replace("T", " "), str(info.message_count), preview(project, 20), key,
                      preview(title, 70) + folded))
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate(_SESSION_HEADER[:4])]
    lines = []
    for c in [_SESSION_HEADER, *cells]:
        lines.append(f"{c[0]:<{widths[0]}}  {c[1]:>{widths[1]}}  {c[2]:<{widths[2]}}  {c[3]:<{widths[3]}}  {c[4]}".rstrip())
    return lines


_SESSION_HEADER = ("UPDATED", "MSGS", "PROJECT", "KEY", "TITLE")
