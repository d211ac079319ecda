"""Server-rendered SVG charts: stacked daily bars and lines, no JavaScript, no external library.

Charts are markup built here with every label escaped (project names come from data).
Colours come from the page's stylesheet through classes (``s0`` .. ``s7``, ``axis``,
``grid``), so light and dark themes apply and the Content-Security-Policy needs no inline
styles. Each bar and point has a ``<title>`` (the browser shows it on hover).
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable
from dataclasses import dataclass

from markupsafe import Markup, escape

from eventlog.app.web.data import Series

WIDTH, HEIGHT = 960, 270
LEFT, RIGHT, TOP, BOTTOM = 56, 12, 26, 36
MAX_BAR = 42  # pixels: a few days still look like bars
MAX_BARS = 120
MAX_SERIES = 7  # more become "other"
OTHER = "other"


@dataclass
class Chart:
    svg: Markup
    legend: list[tuple[str, str]]  # (css class, label)
    empty: bool
    note: str = ""


def _day(s: str) -> _dt.date | None:
    try:
        return _dt.date.fromisoformat(s[:10])
    except ValueError:
        return None


def _buckets(days: list[str]) -> tuple[list[str], dict[str, str], str]:
    """Consecutive buckets from the first to the last day (days, or weeks when that is too many bars)."""
    parsed = sorted({d for d in (_day(x) for x in days) if d is not None})
    if not parsed:
        return [], {}, ""
    first, last = parsed[0], parsed[-1]
    span = (last - first).days + 1
    if span <= MAX_BARS:
        return [(first + _dt.timedelta(days=i)).isoformat() for i in range(span)], {d: d[:10] for d in days}, ""
    step = 7 if span <= MAX_BARS * 7 else 30
    start = first - _dt.timedelta(days=first.weekday()) if step == 7 else first.replace(day=1)
    labels: list[str] = []
    mapping: dict[str, str] = {}
    if step == 7:
        n = (last - start).days // 7 + 1
        if n > MAX_BARS:  # show the newest MAX_BARS weeks
            start = start + _dt.timedelta(days=7 * (n - MAX_BARS))
            n = MAX_BARS
        labels = [(start + _dt.timedelta(days=7 * i)).isoformat() for i in range(n)]
        for d in days:
            p = _day(d)
            if p is not None and p >= start:
                mapping[d] = (p - _dt.timedelta(days=p.weekday())).isoformat()
        return labels, mapping, "one bar per week"
    months: list[str] = []
    y, m = start.year, start.month
    while (y, m) <= (last.year, last.month):
        months.append(f"{y:04d}-{m:02d}-01")
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    months = months[-MAX_BARS:]
    for d in days:
        p = _day(d)
        if p is not None and f"{p.year:04d}-{p.month:02d}-01" >= months[0]:
            mapping[d] = f"{p.year:04d}-{p.month:02d}-01"
    return months, mapping, "one bar per month"


def _short(day: str, n: int) -> str:
    """A day label: ``MM-DD`` when the chart spans less than a year, else the full date."""
    return day[5:] if n <= 366 and len(day) >= 10 else day


def _nice(top: float) -> tuple[float, list[float]]:
    """A round axis maximum and its ticks."""
    if top <= 0:
        return 1.0, [0.0, 1.0]
    raw = top / 4
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    n = math.ceil(top / step)
    return step * n, [step * i for i in range(n + 1)]


def _fmt(v: float) -> str:
    if v >= 1_000_000:
        return f"{v / 1_000_000:g}M"
    if v >= 1000:
        return f"{v / 1000:g}k"
    return f"{v:g}"


def _slots(n: int) -> tuple[float, float]:
    """(x of the first slot, slot width) for ``n`` bars: at most MAX_BAR wide, centred."""
    plot_w = WIDTH - LEFT - RIGHT
    bw = min(plot_w / max(n, 1), MAX_BAR)
    return LEFT + (plot_w - bw * n) / 2, bw


def _frame(ymax: float, ticks: list[float], labels: list[str], unit: str, *, x_of: Callable[[int], float]) -> list[str]:
    plot_h = HEIGHT - TOP - BOTTOM
    out = []
    for t in ticks:
        y = TOP + plot_h - plot_h * t / ymax
        out.append(f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>')
        out.append(f'<text class="axis" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{_fmt(t)}</text>')
    n = len(labels)
    if n:
        every = max(1, math.ceil(n / 8))
        for i in range(0, n, every):
            out.append(f'<text class="axis" x="{x_of(i):.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">'
                       f"{escape(labels[i])}</text>")
    out.append(f'<text class="axis unit" x="{LEFT}" y="{TOP - 12}" text-anchor="start">{escape(unit)}</text>')
    return out


def _svg(parts: list[str], title: str) -> Markup:
    return Markup(f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}" '
                  f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>{"".join(parts)}</svg>')


def stacked_bars(series: Series, *, title: str, unit: str, label_of: dict[str, str] | None = None) -> Chart:
    """Daily bars, one stacked segment per series (the biggest ``MAX_SERIES`` series, the rest as "other")."""
    label_of = label_of or {}
    totals = {name: sum(v.values()) for name, v in series.values.items()}
    names = sorted((n for n in totals if totals[n] > 0), key=lambda n: (-totals[n], n))
    keep, rest = names[:MAX_SERIES], names[MAX_SERIES:]
    labels, mapping, note = _buckets(series.days)
    if not labels or not keep:
        return Chart(_svg([], title), [], True)
    data: dict[str, dict[str, float]] = {n: {} for n in keep + ([OTHER] if rest else [])}
    for name, per_day in series.values.items():
        target = name if name in keep else OTHER if name in rest else None
        if target is None:
            continue
        for day, v in per_day.items():
            b = mapping.get(day)
            if b is not None:
                data[target][b] = data[target].get(b, 0) + v
    order = list(data)
    stack_tops = [sum(data[n].get(b, 0) for n in order) for b in labels]
    ymax, ticks = _nice(max(stack_tops))
    plot_h = HEIGHT - TOP - BOTTOM
    x0, bw = _slots(len(labels))
    gap = min(6.0, max(1.0, bw * 0.2))
    parts = _frame(ymax, ticks, [_short(b, len(labels)) for b in labels], unit, x_of=lambda i: x0 + bw * i + bw / 2)
    for i, b in enumerate(labels):
        y: float = TOP + plot_h
        for k, name in enumerate(order):
            v = data[name].get(b, 0)
            if v <= 0:
                continue
            h = plot_h * v / ymax
            y -= h
            shown = label_of.get(name, name) or "(no project)"
            parts.append(f'<rect class="s{k}" x="{x0 + bw * i + gap / 2:.1f}" y="{y:.1f}" width="{max(bw - gap, 1):.1f}" '
                         f'height="{h:.1f}"><title>{escape(b)} · {escape(shown)}: {_fmt(v)} {escape(unit)}</title></rect>')
    legend = [(f"s{k}", label_of.get(n, n) or "(no project)") for k, n in enumerate(order)]
    return Chart(_svg(parts, title), legend, False, note)


def line(series: Series, *, title: str, unit: str, name: str) -> Chart:
    """One cumulative series as a step line with points (values carried over days without a change)."""
    values = series.values.get(name, {})
    days = sorted(d for d in values if _day(d) is not None)
    if not days:
        return Chart(_svg([], title), [], True)
    first, last = _day(days[0]), _day(days[-1])
    assert first is not None and last is not None
    today = _dt.datetime.now(_dt.UTC).date()
    end = max(last, min(today, last + _dt.timedelta(days=30)))
    span = (end - first).days + 1
    ymax, ticks = _nice(max(values.values()))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    labels = [(first + _dt.timedelta(days=i)).isoformat() for i in range(span)]
    step = plot_w / max(span - 1, 1)
    shown = [_short(d, span) for d in labels]

    def x_of(i: int) -> float:
        return LEFT + step * i if span > 1 else LEFT + plot_w / 2

    if span <= MAX_BARS:
        parts = _frame(ymax, ticks, shown, unit, x_of=x_of)
    else:
        parts = _frame(ymax, ticks, [shown[0], shown[-1]], unit, x_of=lambda i: x_of(0 if i == 0 else span - 1))
    pts: list[str] = []
    cur = 0.0
    by_day = {d[:10]: v for d, v in values.items()}
    points = []
    for i, label in enumerate(labels):
        if label in by_day:
            cur = by_day[label]
            points.append((i, cur, label))
        x = x_of(i)
        y = TOP + plot_h - plot_h * cur / ymax
        if pts:
            pts.append(f"{x:.1f},{pts[-1].split(',')[1]}")
        pts.append(f"{x:.1f},{y:.1f}")
    parts.append(f'<polyline class="line s0" fill="none" points="{" ".join(pts)}"/>')
    for i, v, label in points:
        x = x_of(i)
        y = TOP + plot_h - plot_h * v / ymax
        parts.append(f'<circle class="dot s0" cx="{x:.1f}" cy="{y:.1f}" r="3"><title>{escape(label)}: {_fmt(v)} '
                     f"{escape(unit)}</title></circle>")
    return Chart(_svg(parts, title), [("s0", name)], False)
