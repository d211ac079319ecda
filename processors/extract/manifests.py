"""What a project's own files declare: its stack with versions and the tasks it defines.

A manifest is a file a project keeps to say what it is built on and how it is worked
(``package.json``, ``mix.exs``, ``pyproject.toml``, ``Cargo.toml``, ``go.mod``,
``flake.nix``) or which tasks it defines (``justfile``, ``Makefile``, ``Taskfile.yml``,
``magefile.go``, and the scripts or aliases of the files above). ``read(name, text)``
parses one file's text as a tool read it and returns a ``Manifest``:

* ``said``: clauses that complete "The project's FILE ..." ("depends on next 15.5.2, ...",
  "needs Elixir ~> 1.19", "has the recipes test, lint");
* ``declared``: the names of the tasks the file defines (a package.json script, a
  just recipe, a make target, a mage target, a mix alias), which make a command that
  runs one of them the project's own (``workflow``).

Nothing here knows a dependency or task name: only the file formats. ``declared_in(text)``
reads the task names back from a fact these clauses wrote, so a later batch knows them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MAX_DEPS = 10
MAX_TASKS = 12
#: The clause that lists a file's tasks: "has the scripts a (x), b (y)", "has the recipes a, b".
_TASKS_CLAUSE = re.compile(r"has the (?:scripts|recipes|targets|tasks|aliases) (.*?)(?: \(read from|$)")
_TASK_NAME = re.compile(r"(?:^|, )([\w:.\-]+)(?= \(|,|$)")


@dataclass
class Manifest:
    said: list[str] = field(default_factory=list)
    declared: list[str] = field(default_factory=list)


def _tasks(kind: str, names: list[str], bodies: dict[str, str] | None = None) -> str:
    shown = names[:MAX_TASKS]
    if bodies:
        return f"has the {kind} " + ", ".join(f"{k} ({bodies[k]})" if bodies.get(k) else k for k in shown)
    return f"has the {kind} " + ", ".join(shown)


def _package_json(text: str) -> Manifest:
    data, _end = json.JSONDecoder().raw_decode(text.lstrip())  # a harness may append a note after the file
    if not isinstance(data, dict):
        return Manifest()
    out = Manifest()
    deps = {**(data.get("dependencies") or {}), **(data.get("devDependencies") or {})}
    named = [f"{k} {v}" for k, v in deps.items() if isinstance(v, str) and not k.startswith("@types/")][:MAX_DEPS]
    if named:
        out.said.append("depends on " + ", ".join(named))
    raw = data.get("scripts")
    scripts = {k: v for k, v in raw.items() if isinstance(v, str)} if isinstance(raw, dict) else {}
    if scripts:
        out.said.append(_tasks("scripts", list(scripts)[:8], scripts))
        out.declared = list(scripts)
    if isinstance(data.get("packageManager"), str):
        out.said.append(f"uses the package manager {data['packageManager']}")
    return out


def _mix_exs(text: str) -> Manifest:
    out = Manifest()
    elixir = re.search(r'elixir:\s*"([^"]+)"', text)
    deps = re.findall(r'\{:(\w+),\s*"([^"]+)"', text)
    if elixir:
        out.said.append(f"needs Elixir {elixir.group(1)}")
    if re.search(r"apps_path:\s*\"", text):
        out.said.append("is an umbrella project (its apps under " + re.findall(r'apps_path:\s*"([^"]+)"', text)[0] + "/)")
    if deps:
        out.said.append("depends on " + ", ".join(f"{n} {v}" for n, v in deps[:MAX_DEPS]))
    body = re.search(r"defp\s+aliases\b.*?\[(.*?)\n\s*\]\s*\n\s*end", text, re.DOTALL)
    if body:
        names = re.findall(r'^\s*(?:"([\w.]+)"|([\w.]+)):', body.group(1), re.MULTILINE)
        out.declared = [a or b for a, b in names]
        if out.declared:
            out.said.append(_tasks("aliases", out.declared))
    return out


def _toml(text: str) -> Manifest:
    import tomllib

    data = tomllib.loads(text)
    out = Manifest()
    project: dict[str, Any] = next((data[k] for k in ("project", "package") if isinstance(data.get(k), dict)), {})
    for key, what in (("requires-python", "needs Python"), ("rust-version", "needs Rust"), ("edition", "uses the edition")):
        if isinstance(project.get(key), str):
            out.said.append(f"{what} {project[key]}")
    deps: list[Any] = project["dependencies"] if isinstance(project.get("dependencies"), list) else []
    if not deps and isinstance(data.get("dependencies"), dict):
        deps = [f"{k} {v if isinstance(v, str) else v.get('version', '') if isinstance(v, dict) else ''}".strip()
                for k, v in data["dependencies"].items()]
    named = [d for d in deps[:MAX_DEPS] if isinstance(d, str)]
    if named:
        out.said.append("depends on " + ", ".join(named))
    tool: dict[str, Any] = data["tool"] if isinstance(data.get("tool"), dict) else {}
    poe = tool.get("poe", {}).get("tasks") if isinstance(tool.get("poe"), dict) else None
    scripts = project.get("scripts")
    for kind, table in (("tasks", poe), ("scripts", scripts)):
        if isinstance(table, dict) and table:
            out.declared += list(table)
            out.said.append(_tasks(kind, list(table)))
    return out


def _go_mod(text: str) -> Manifest:
    go = re.search(r"^go\s+(\S+)", text, re.MULTILINE)
    reqs = re.findall(r"^\s*([\w.\-/]+)\s+(v[\w.\-+]+)", text, re.MULTILINE)
    return Manifest(([f"needs Go {go.group(1)}"] if go else [])
                    + (["depends on " + ", ".join(f"{n} {v}" for n, v in reqs[:MAX_DEPS])] if reqs else []))


def _flake_nix(text: str) -> Manifest:
    inputs = re.findall(r'([\w-]+)(?:\.url\s*=|\s*=\s*\{\s*url\s*=)\s*"([^"]+)"', text)
    return Manifest([f"takes the inputs {', '.join(f'{n} ({u})' for n, u in inputs[:MAX_DEPS])}"] if inputs else [])


def _recipes(kind: str, pattern: str) -> Callable[[str], Manifest]:
    rule = re.compile(pattern, re.MULTILINE)

    def parse(text: str) -> Manifest:
        names = list(dict.fromkeys(m for m in rule.findall(text) if not m.startswith(".")))
        return Manifest([_tasks(kind, names)], names) if names else Manifest()
    return parse


def _magefile(text: str) -> Manifest:
    if not re.search(r"^//go:build mage|^// \+build mage", text, re.MULTILINE):
        return Manifest()
    names = [n[0].lower() + n[1:] for n in re.findall(r"^func ([A-Z]\w*)\(", text, re.MULTILINE)]
    return Manifest([_tasks("targets", names)], names) if names else Manifest()


#: File name -> parser: what each kind of file declares.
PARSERS: dict[str, Callable[[str], Manifest]] = {
    "package.json": _package_json, "mix.exs": _mix_exs, "pyproject.toml": _toml, "Cargo.toml": _toml,
    "go.mod": _go_mod, "flake.nix": _flake_nix, "magefile.go": _magefile,
    "justfile": _recipes("recipes", r"^@?([A-Za-z][\w-]*)(?:\s+[^:=\n]*)?:(?!=)"),
    "Justfile": _recipes("recipes", r"^@?([A-Za-z][\w-]*)(?:\s+[^:=\n]*)?:(?!=)"),
    "Makefile": _recipes("targets", r"^([A-Za-z][\w.-]*)\s*:(?!=)"),
    "Taskfile.yml": _recipes("tasks", r"^  ([A-Za-z][\w:-]*):\s*$"),
}


def read(name: str, text: str) -> Manifest:
    """What the file called ``name`` declares (an empty ``Manifest`` for a file of no known format)."""
    parse = PARSERS.get(name)
    return parse(text) if parse else Manifest()


def declared_in(fact: str) -> list[str]:
    """The task names a fact written from a manifest lists ("... has the scripts dev (next dev), build ...")."""
    m = _TASKS_CLAUSE.search(fact)
    return _TASK_NAME.findall(m.group(1)) if m else []
