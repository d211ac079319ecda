"""Coding sessions: the commands a project is worked with, learned from what was run and approved.

A teammate's CONTRIBUTING.md names the commands that test, lint, type-check, build and
run the project. In an agent session they show as shell commands (a ``Bash`` tool call,
or any tool whose arguments carry a ``command``) that the user let run and that
succeeded, again and again, after files were changed: the verification loop. Nothing here
knows a tool's name; a command counts by how it was used:

* **approved and succeeded**: its tool result is not an error (a refused or failed call is
  no evidence; a result that reports a non-zero exit status, as shell-only agents print it,
  is a failure too);
* **part of the loop**: run at least ``MIN_RUNS`` times in the batch, at least once after
  a file was edited or written by a tool call (``Edit``, ``Write``, ``MultiEdit``,
  ``NotebookEdit``, ``apply_patch``, or a shell line that writes a file: a patch, a
  here-document into a file, ``sed -i``);
* **a project command**: what is left of it after the shape is normalised (``cd DIR &&``
  prefixes, pipes into a pager or filter, redirections, file and path arguments, numbers
  and quoted text dropped) has a program and a subcommand word, and the program is not one
  of the POSIX file and text utilities or the version control system, which every project
  shares (``SHELL_UTILITIES``): those say nothing about this project;
* a command the **user typed** (``<bash-input>...</bash-input>``, Claude Code's ``!``
  prefix), or **named in their own words** and then run successfully, is kept after one
  run: the user's own choice;
* a **check that caught something**: it failed, files were edited, then the same command
  passed (a retry with no change in between is no evidence: a flaky or slow run);
* a **task the project declares**: it runs (``PROG TASK`` or ``PROG run TASK``) a script,
  recipe, target or alias that a manifest the agent read defines (``manifests``), or that
  a fact written from one in an earlier batch lists, and it succeeded once.

A shell command is a ``command`` string or an argv list (``["bash", "-lc", LINE]``, as
shell-only agents such as Codex call it). Each becomes one project fact, "The project is
worked on with `CMD` (...how it was seen)." (or "The user runs `CMD` in this project."),
sourced from the tool-call messages (at most three) and dated by the first.

The project's own files: a manifest (``manifests.PARSERS``) that a tool read successfully,
with a read tool or a shell line that prints one file (``cat``, ``sed -n``, ``head``), gives
"The project's PATH ... (read from the project's own file)." facts, PATH being the file's
place under the project (``todo-app/package.json`` says where the app lives); one outside
the project or inside an installed dependency's folder is not the project's own. A document
the user has the agent update again and again (``doc_facts``: named in two of their own
messages, written in each answering turn) is kept up to date. The offline extractor adds
all of these to its operations; Dream checks them like any other.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field

from processors.extract import manifests
from processors.extract.model import Entry, FactOp
from processors.extract.signals import SessionTools

MIN_RUNS = 2
#: How the facts these rules write begin: the only added facts a tool call may be the source of (``llm.parse_ops``).
EVIDENCE_SHAPES = ("The project is worked on with `", "The project's ")
MAX_COMMAND_CHARS = 60
#: The POSIX file/text utilities and git: shared by every project, so never one's own command.
SHELL_UTILITIES = frozenset("""awk basename cat cd chmod chown cp curl cut date diff dirname du echo env export file
find git grep head kill less ln ls mkdir mv nl open printf ps pwd readlink rm rmdir sed sleep sort stat tail tee
test touch tr tree true type uniq wc wget which whoami xargs yes""".split())
_EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit", "apply_patch", "edit_file", "write_file"})
_BASH_INPUT = re.compile(r"<bash-input>(.*?)</bash-input>", re.DOTALL)
_SPLIT = re.compile(r"\s*(?:&&|\|\||;)\s*")
_REDIRECT = re.compile(r"^\d?>>?|^&>|^<")
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "fish"})
#: What runs the command that follows it: ``sudo make install`` is ``make install``, ``sudo rm`` is ``rm``.
_PREFIXES = frozenset({"sudo", "time", "nohup", "exec", "env", "command", "nice", "doas"})
_PATHISH = re.compile(r"/|\.\w{1,5}$|^\.{1,2}$|^~")


@dataclass
class _Seen:
    command: str
    refs: list[str] = field(default_factory=list)
    runs: int = 0
    after_edit: bool = False
    typed: bool = False
    first_time: str = ""
    fixed: bool = False  # it failed, files were edited, then it succeeded: the check of a fix


_WORD = re.compile(r"^[A-Za-z][\w.+:-]*$")
_OPTION = re.compile(r"^(?:-{1,2}[A-Za-z][\w-]*|\+[\w.-]+)$")  # -m, --manifest, +nightly (a toolchain)


def _program(token: str) -> str:
    """How a teammate types the program: as written when it is the project's own (``./gradlew``, ``bin/rails``,
    ``.venv/bin/python``), its name when it is a path of this machine (``/usr/bin/make`` -> ``make``)."""
    if token.startswith(("/", "~")) or re.match(r"^[A-Za-z]:[\\/]", token):
        return re.split(r"[\\/]", token)[-1]
    return token


def _words(tokens: list[str]) -> tuple[list[str], bool]:
    """A command's words without its arguments (files and paths, numbers, quoted text, ``--x=y`` options), and
    whether a positional argument was dropped; a script the program runs (``python3 manage.py test``) stays
    when a subcommand word follows it."""
    kept: list[str] = []
    dropped = False
    for i, t in enumerate(tokens):
        if _REDIRECT.match(t) or t in ("2>&1", "&", "--"):
            break  # a redirection, or the arguments passed through to the tool
        script = i == 1 and "/" not in t and len(tokens) > 2 and bool(_WORD.match(tokens[2]))
        if i == 0:
            kept.append(_program(t))
        elif script or not (_PATHISH.search(t) or t.isdigit() or " " in t or (t.startswith("-") and "=" in t)):
            kept.append(t)
        else:
            dropped = dropped or not t.startswith("-")
    return kept, dropped


def normalise(command: str) -> str:
    """The project command a shell line runs ("" when it is none; see the module docstring)."""
    if "\n" in command.strip() or "<<" in command or len(command) > 400:
        return ""  # a script or a here-document: not a command someone reruns
    parts = [p for p in _SPLIT.split(command.strip()) if p and not p.startswith("cd ")]
    if not parts:
        return ""
    try:
        tokens = shlex.split(parts[0].split("|")[0].strip())
    except ValueError:
        return ""
    while tokens and (tokens[0] in _PREFIXES or ("=" in tokens[0] and not tokens[0].startswith("-"))):
        tokens.pop(0)  # FOO=1 cmd, sudo cmd, time cmd: the command is what follows
    kept, dropped = _words(tokens)
    if not kept or kept[0].rsplit("/", 1)[-1] in SHELL_UTILITIES:
        return ""
    if len(kept) == 1 or all(_OPTION.match(k) for k in kept[1:]):
        out = "" if dropped else " ".join(kept[:3])  # ``pytest -q``, ``make``: the program on the project itself;
        # ``python3 x.py`` or ``node build.js`` run one file, and say nothing about how the project is worked
    elif _WORD.match(kept[1]) or (_OPTION.match(kept[1]) and _WORD.match(kept[2])):
        out = " ".join(kept[:5])  # ``PROG SUBCOMMAND ...`` or ``PROG -m MODULE ...``
    else:
        out = ""
    return out if len(out) <= MAX_COMMAND_CHARS else ""


def _calls(e: Entry) -> list[tuple[str, str, dict]]:
    """(call id, tool name, arguments) of an assistant entry's tool calls."""
    out = []
    for c in e.meta.get("tool_calls") or []:
        if not isinstance(c, dict):
            continue
        raw = c.get("function")
        fn: dict = raw if isinstance(raw, dict) else {}
        try:
            args = json.loads(fn.get("arguments") or "{}")
        except (TypeError, ValueError):
            args = {}
        out.append((str(c.get("id") or ""), str(fn.get("name") or ""), args if isinstance(args, dict) else {}))
    return out


def shell_line(args: dict) -> str | None:
    """The shell line a tool call runs: a ``command`` string, or an argv list (``["bash", "-lc", LINE]``)."""
    command = args.get("command")
    if isinstance(command, str):
        return command
    if isinstance(command, list) and command and all(isinstance(c, str) for c in command):
        if len(command) >= 3 and command[-2] in ("-c", "-lc") and command[0].rsplit("/", 1)[-1] in _SHELLS:
            return command[-1]
        return shlex.join(command)
    return None


def session_tools(entries: list[Entry]) -> SessionTools:
    """The programs the batch's shell calls ran and the words of those commands (as ``normalise`` keeps them:
    shell utilities and git give none), and the base names of the files any tool call names (``signals``)."""
    programs: set[str] = set()
    words: set[str] = set()
    files: set[str] = set()
    for e in entries:
        for _id, _name, args in _calls(e):
            path = args.get("file_path") or args.get("path")
            if isinstance(path, str) and path:
                files.add(re.split(r"[\\/]", path)[-1].casefold())
            line = shell_line(args)
            kept = normalise(line).split() if line else []
            if kept:
                programs.add(kept[0].rsplit("/", 1)[-1].casefold())
                words.update(w.casefold() for w in kept[:2])
    return SessionTools(frozenset(programs), frozenset(words), frozenset(files))


#: How a shell tool reports a command's status in its output, when the harness marks no error
#: (Codex: ``Exit code: 1`` or ``{"metadata": {"exit_code": 1}}``; nanobot's exec: a last ``Exit code: 1`` line).
_EXIT_CODE = re.compile(r'(?:^|\n)\s*exit code:?\s*(-?\d+)\s*(?:\n|$)|"exit_code"\s*:\s*(-?\d+)', re.IGNORECASE)


def _exit_status(text: str) -> int:
    """The exit status a tool result reports (0 when it reports none)."""
    m = _EXIT_CODE.search(text[:400]) or _EXIT_CODE.search(text[-200:])
    return int(m.group(1) or m.group(2)) if m else 0


def _failed(entries: list[Entry]) -> set[str]:
    """The ids of tool calls whose result is an error, a refusal, or reports a non-zero exit status."""
    return {str(e.meta.get("tool_call_id")) for e in entries
            if e.role == "tool" and e.meta.get("tool_call_id")
            and (e.meta.get("is_error") or _exit_status(e.text or ""))}


#: A shell line that changes the project's files: a patch, a here-document into a file, an in-place edit.
_SHELL_WRITE = re.compile(r"^\s*apply_patch\b|<<.*?>{1,2}\s*(?!/dev/|/tmp/)[\w./-]+|>{1,2}\s*(?!/dev/|/tmp/)[\w./-]+.*?<<"
                          r"|\b(?:sed|perl)\s+-[a-z]*i\b")


def _edits(name: str, args: dict) -> bool:
    """Whether a tool call changes files: an edit tool, or a shell line that writes (``_SHELL_WRITE``)."""
    if name in _EDIT_TOOLS:
        return True
    line = shell_line(args)
    return bool(line and _SHELL_WRITE.search(line.split("\n", 1)[0]))


def _user_words(entries: list[Entry]) -> list[tuple[Entry, str]]:
    """The user's own words in the batch (no injected, skill, harness, pasted or quoted text), folded."""
    from processors.extract.pasted import typed_part
    from processors.extract.text import own_text, skip_reason

    out = []
    for e in entries:
        if e.role == "user" and skip_reason(e) is None:
            text = typed_part(own_text(e.text))  # what the user pasted or quoted is not their choice
            if text:
                out.append((e, " " + " ".join(text.casefold().split()) + " "))
    return out


def _typed(e: Entry, seen: dict[str, _Seen]) -> None:
    for typed in _BASH_INPUT.findall(e.text or ""):
        cmd = normalise(typed.strip())
        if cmd:
            s = seen.setdefault(cmd, _Seen(cmd, first_time=e.time))
            s.typed, s.runs = True, s.runs + 1
            s.refs.append(e.ref)


def _scan(entries: list[Entry]) -> dict[str, _Seen]:
    failed = _failed(entries)
    seen: dict[str, _Seen] = {}
    fails: dict[str, int] = {}  # command -> the edit count when it last failed
    edits = 0
    for e in entries:
        if e.role == "user":
            _typed(e, seen)
            continue
        if e.role != "assistant":
            continue  # a subagent's calls count too: they ran in the same project, with the same approval
        for call_id, name, args in _calls(e):
            if _edits(name, args):
                edits += call_id not in failed
                continue
            line = shell_line(args)
            cmd = normalise(line) if line else ""
            if not cmd:
                continue
            if call_id in failed:
                fails[cmd] = edits
                continue
            s = seen.setdefault(cmd, _Seen(cmd, first_time=e.time))
            s.runs += 1
            s.after_edit = s.after_edit or edits > 0
            s.fixed = s.fixed or (cmd in fails and edits > fails[cmd])  # failed, files changed, now it passes
            fails.pop(cmd, None)
            if e.ref not in s.refs:
                s.refs.append(e.ref)
    return seen


def _merged(seen: dict[str, _Seen]) -> dict[str, _Seen]:
    """Variants folded into the shortest form they extend (``bd show X`` into ``bd show``, ``mix compile --force`` into ``mix compile``)."""
    out: dict[str, _Seen] = {}
    for cmd in sorted(seen, key=lambda c: (len(c.split()), c)):
        s = seen[cmd]
        base = next((b for b in out if cmd.startswith(b + " ") and (" " in b or cmd.split()[1][0] in "-+")), None)
        # (a bare program absorbs its options, ``pytest -q`` into ``pytest``, never a subcommand: ``make check``)
        if base is None:
            out[cmd] = _Seen(cmd, list(s.refs), s.runs, s.after_edit, s.typed, s.first_time, s.fixed)
            continue
        b = out[base]
        b.runs += s.runs
        b.after_edit = b.after_edit or s.after_edit
        b.typed = b.typed or s.typed
        b.fixed = b.fixed or s.fixed
        b.refs += [r for r in s.refs if r not in b.refs]
    return out


def _declared_task(command: str, declared: set[str]) -> str:
    """The part of ``command`` that runs a task the project's files declare (``pnpm dev``, ``npm run build``), or ""."""
    words = command.split()
    at = 2 if len(words) > 2 and words[1] == "run" else 1
    return " ".join(words[:at + 1]) if len(words) > at and words[at].casefold() in declared else ""


def _fact_text(s: _Seen, declared: set[str]) -> str:
    times = "once" if s.runs == 1 else f"{s.runs} times"
    if s.typed:
        return f"The user runs `{s.command}` in this project."
    if s.runs >= MIN_RUNS and s.after_edit:
        return f"The project is worked on with `{s.command}` (run {s.runs} times after edits)."
    if s.fixed:
        return f"The project is worked on with `{s.command}` (it failed, files were edited, then it passed)."
    task = _declared_task(s.command, declared)
    if task:
        return f"The project is worked on with `{task}` (a task the project's own files declare; run {times})."
    return ""


def _reason(text: str) -> str:
    if text.startswith("The user runs"):
        return "a command the user typed or named, and that ran"
    if "(a task the project's own files declare" in text:
        return "a task a manifest of the project declares, run successfully"
    return "a command run and approved in the session's verification loop"


def command_facts(entries: list[Entry], known: frozenset[str] | set[str] = frozenset()) -> list[FactOp]:
    """Project facts for the commands a batch shows the project is worked with (see the module docstring).

    ``known`` holds fact texts already in memory (casefolded); a command already stated is not added again.
    """
    ops: list[FactOp] = []
    project = next((e.project for e in entries if e.project), "")
    words = _user_words(entries)
    declared = {n.casefold() for m in _manifest_reads(entries) for n in m[3].declared}
    declared |= {n.casefold() for k in known for n in manifests.declared_in(k)}
    for s in _merged(_scan(entries)).values():
        named = next((e for e, w in words if f" {s.command.casefold()} " in w), None) if not s.typed else None
        if named is not None:  # the user named it in their own words, and it then ran: their command
            s.typed, s.refs, s.first_time = True, [named.ref], named.time
        text = _fact_text(s, declared)
        shown = text[text.find("`"):text.find("`", text.find("`") + 1) + 1].casefold()
        if not text or any(shown in k for k in known) or any(shown in o.text.casefold() for o in ops):
            continue
        ops.append(FactOp(op="add", text=text, subject="project", scope="project", section="Project Context",
                          when=s.first_time, sources=s.refs[:3], project=project,
                          reason=_reason(text)))
    return ops


# --- the project's own files ---------------------------------------------------------------------

_LINE_NO = re.compile(r"^\s*\d+(?:→|\t)", re.MULTILINE)
_READ_TOOLS = frozenset({"Read", "read_file", "view"})
#: Shell programs that print a file: ``cat package.json`` in a shell-only agent (Codex) is a read.
_PRINTERS = frozenset({"cat", "head", "sed", "nl", "bat", "less", "more", "type", "Get-Content"})


_OUTPUT_HEADER = re.compile(r"^Exit code: 0\n(?:[A-Z][\w ]*: [^\n]*\n)*?Output:\n")


def _file_text(text: str) -> str:
    """The file a read printed, without the shell tool's framing (Codex's ``Exit code: 0 ... Output:`` header or
    ``{"output": ..., "metadata": ...}`` wrapper) and without the line numbers a read tool adds."""
    if text.startswith('{"output"'):
        try:
            wrapped = json.loads(text)
        except ValueError:
            wrapped = None
        if isinstance(wrapped, dict) and isinstance(wrapped.get("output"), str):
            text = wrapped["output"]
    return _LINE_NO.sub("", _OUTPUT_HEADER.sub("", text, count=1))


def _shell_read(line: str) -> str:
    """The file a shell line prints whole or in part (``cd app && cat package.json``, ``sed -n 1,80p go.mod``), or ""."""
    parts = [p for p in _SPLIT.split(line.strip()) if p]
    if not parts or len(parts) > 2 or "|" in parts[-1]:
        return ""
    where = parts[0][3:].strip() if len(parts) == 2 and parts[0].startswith("cd ") else ""
    try:
        tokens = shlex.split(parts[-1])
    except ValueError:
        return ""
    files = [t for t in tokens[1:] if not t.startswith("-") and not re.match(r"^\d+(,\d+)?p$", t)]
    if not tokens or tokens[0] not in _PRINTERS or len(files) != 1:
        return ""
    return f"{where.rstrip('/')}/{files[0]}" if where and not files[0].startswith("/") else files[0]


#: Where the package managers put the code a project depends on: a manifest in there is a dependency's.
DEPENDENCY_DIRS = frozenset({"node_modules", "deps", "vendor", "_build", "target", ".venv", "venv",
                             "site-packages", "Pods", ".git"})


def _where(path: str, project: str) -> str:
    """How a fact names the file: its path under the project ("todo-app/package.json"), its name when the
    project is unknown, "" when it is no file of the project's own (outside it, or an installed dependency's)."""
    path = path.replace("\\", "/")
    root = project.rstrip("/").replace("\\", "/")
    if root and path.startswith(root + "/"):
        where = path[len(root) + 1:]
    elif not path.startswith(("/", "~")) and not re.match(r"^[A-Za-z]:/", path):
        where = path.removeprefix("./")
    else:
        where = "" if root else path.rsplit("/", 1)[-1]
    parts = where.split("/")
    return "" if ".." in parts or DEPENDENCY_DIRS.intersection(parts[:-1]) else where


def _manifest_reads(entries: list[Entry]) -> list[tuple[str, str, Entry, manifests.Manifest]]:
    """(file as named, file name, the call, what it declares) for each manifest a tool call read successfully."""
    reads: dict[str, tuple[str, Entry]] = {}
    for e in entries:
        if e.role == "assistant":
            for call_id, name, args in _calls(e):
                path = args.get("file_path") or args.get("path") if name in _READ_TOOLS else None
                line = shell_line(args) if path is None else None
                path = path if isinstance(path, str) else _shell_read(line) if line else ""
                if path.replace("\\", "/").rsplit("/", 1)[-1] in manifests.PARSERS:
                    reads[call_id] = (path, e)
    out = []
    done: set[str] = set()
    for e in entries:
        call_id = str(e.meta.get("tool_call_id") or "")
        if e.role != "tool" or call_id not in reads or e.meta.get("is_error"):
            continue
        path, call = reads[call_id]
        where = _where(path, call.project)
        if not where or where in done:
            continue
        try:
            said = manifests.read(where.rsplit("/", 1)[-1], _file_text(e.text or ""))
        except (ValueError, TypeError, AttributeError, IndexError, KeyError):
            continue  # a cut or odd file: nothing read from it
        done.add(where)
        out.append((where, where.rsplit("/", 1)[-1], call, said))
    return out


#: A document the user names: a file of prose markup (``CLAUDE.md``, ``docs/api.rst``, ``@NOTES.txt``).
_DOC = re.compile(r"(?<![\w/.-])@?((?:[\w.-]+/)*[\w.-]+\.(?:md|markdown|rst|adoc|txt))(?![\w/])", re.IGNORECASE)
MIN_DOC_REQUESTS = 2


def _written(entries: list[Entry]) -> list[tuple[int, str]]:
    """(position, path folded) of each file a tool call wrote or edited successfully."""
    failed = _failed(entries)
    return [(i, str(args.get("file_path") or args.get("path") or "").casefold())
            for i, e in enumerate(entries) if e.role == "assistant"
            for call_id, name, args in _calls(e) if name in _EDIT_TOOLS and call_id not in failed]


def doc_facts(entries: list[Entry], known: frozenset[str] | set[str] = frozenset()) -> list[FactOp]:
    """The documents the user has the agent keep up to date: named in at least ``MIN_DOC_REQUESTS`` of their
    own messages, each followed by a successful write of that file (a doc asked about, or written once, is not)."""
    words = {e.ref: w for e, w in _user_words(entries)}
    writes = _written(entries)
    asked: dict[str, list[Entry]] = {}
    turns = [i for i, e in enumerate(entries) if e.ref in words] + [len(entries)]
    for i, end in zip(turns, turns[1:], strict=False):  # a request and the agent's turn that answers it
        e = entries[i]
        for doc in dict.fromkeys(d.casefold() for d in _DOC.findall(words[e.ref])):
            if any(i < j < end and (p == doc or p.endswith("/" + doc)) for j, p in writes):
                asked.setdefault(doc, []).append(e)
    ops: list[FactOp] = []
    for doc, by in asked.items():
        name = next(d for d in _DOC.findall(by[0].text) if d.casefold() == doc)
        text = f"The project's {name} is kept up to date: the user asked the agent to update it {len(by)} times."
        if len(by) >= MIN_DOC_REQUESTS and not any(f"{doc} is kept up to date" in k for k in known):
            ops.append(FactOp(op="add", text=text, subject="project", scope="project", section="Project Context",
                              when=by[0].time, sources=[x.ref for x in by[:3]], project=by[0].project,
                              reason="a document the user asked to update again and again, and that was written"))
    return ops


def manifest_facts(entries: list[Entry], known: frozenset[str] | set[str] = frozenset()) -> list[FactOp]:
    """Project facts from the project's own files: the manifests (``manifests.PARSERS``) a tool call read
    successfully, marked as from that file, and the documents the user has kept up to date (``doc_facts``)."""
    ops: list[FactOp] = doc_facts(entries, known)
    for where, name, call, said in _manifest_reads(entries):
        for part in said.said:
            text = f"The project's {where} {part} (read from the project's own file)."
            if text.casefold() in known or len(text) > 400:
                continue
            ops.append(FactOp(op="add", text=text, subject="project", scope="project", section="Project Context",
                              when=call.time, sources=[call.ref], project=call.project,
                              reason=f"read from the project's {name}"))
    return ops
