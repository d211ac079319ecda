"""One door for secrets (INVARIANTS I24): no secret of the corpus reaches a file, the gateway, a prompt or a hook.

The secrets of ``tests/secret_corpus.py`` go in through every way into a workspace:
``evlog ingest``, the Claude Code hook, ``evlog watch`` (nanobot and Codex context lines), ``evlog append``,
``LocalSessionStore``, ``evlog remember``, the MCP ``remember`` tool and ``evlog sync pull``
from a gateway. Then every processor runs (snapshot, digest, consolidate, Dream, the recall
index, a replay that writes checkpoints), the SessionStart and UserPromptSubmit hooks
answer, and the workspace is pushed to a second gateway. Then a forensic search: every
byte of every file under the workspace (segments, session files, diaries, MEMORY.md,
``state/recall.sqlite``, ``state/projections.ckpt``...), the pushed gateway's tables, every
prompt a model received and every hook output is searched, lower-cased, for each secret
and its distinctive pieces.
"""

from __future__ import annotations

import json
import os
from typing import Any

import msgspec
import pytest

import eventlog.cli.ingest_command  # noqa: F401  (registers `evlog ingest`)
from eventlog.app.agents.hooks import handle_claude_code
from eventlog.app.agents.mcp import Backend
from eventlog.app.gateway import sync
from eventlog.app.gateway.memory_store import MemoryGateway
from eventlog.app.session_store import LocalSessionStore
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.cli import cli
from eventlog.errors import InvalidEventError
from eventlog.events import MessageAppended
from eventlog.redact import redact_event, text_fields
from processors.llm import LLM, Completion, Prompt
from processors.llm.offline import OfflineExtractor
from tests.secret_corpus import CORPUS, REMEMBER_NOTE, leftovers

T0 = "2026-03-01T10:00:00.000Z"


class RecordingLLM(LLM):
    """The offline extractor, keeping every prompt it was sent (what a remote model would have read)."""

    name = "recording"

    def __init__(self) -> None:
        self.inner = OfflineExtractor()
        self.model = "recording"
        self.prompts: list[Prompt] = []

    def complete(self, prompt: Prompt) -> Completion:
        self.prompts.append(prompt)
        return self.inner.complete(prompt)


def claude_transcript(path: str, sid: str) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        parent = None
        for i, case in enumerate(CORPUS):
            uuid = f"{sid}-u{i}"
            f.write(json.dumps({"parentUuid": parent, "isSidechain": False, "type": "user", "uuid": uuid,
                                "timestamp": T0, "sessionId": sid, "cwd": "/home/u/proj", "version": "2.1.0",
                                "message": {"role": "user", "content": case.text}}) + "\n")
            parent = uuid
    return path


def workspace_bytes(home: str) -> dict[str, bytes]:
    out = {}
    for root, _, names in os.walk(home):
        for name in names:
            with open(os.path.join(root, name), "rb") as f:
                out[os.path.relpath(os.path.join(root, name), home)] = f.read()
    return out


def gateway_bytes(gw: MemoryGateway) -> bytes:
    with gw.lock:
        return repr(vars(gw)).encode("utf-8", "backslashreplace") + b"".join(
            repr(vars(gw.tables(uid))).encode("utf-8", "backslashreplace") for uid in list(gw._tables))


def watch_formats(home: str, folder: str) -> None:
    """``evlog watch``'s poll over a nanobot session and a Codex rollout whose kept context lines hold secrets."""
    from eventlog.app.agents.watch import run_once

    os.makedirs(folder, exist_ok=True)
    ts = "2026-03-01T09:00:00"
    with open(f"{folder}/nb.jsonl", "w", encoding="utf-8") as f:
        f.write(json.dumps({"_type": "metadata", "key": "qq:1", "created_at": ts, "updated_at": ts, "last_consolidated": 0,
                            "metadata": {"note": CORPUS[23].text, "cmd": CORPUS[26].text}}) + "\n")
        f.writelines(json.dumps({"role": "user", "content": c.text, "timestamp": ts}) + "\n" for c in CORPUS)
    ts += ".000Z"
    with open(f"{folder}/rollout-2026-03-01T09-00-00-cx1.jsonl", "w", encoding="utf-8") as f:
        f.write(json.dumps({"timestamp": ts, "type": "session_meta", "payload": {
            "id": "cx1", "cwd": "/home/dev/c", "timestamp": ts, "instructions": CORPUS[33].text}}) + "\n")
        f.write(json.dumps({"timestamp": ts, "type": "turn_context", "payload": {"model": "gpt-a",
                                                                               "note": CORPUS[41].text}}) + "\n")
        f.writelines(json.dumps({"timestamp": ts, "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": c.text}]}}) + "\n"
            for c in CORPUS)
    ws = Workspace.open(home, writable=True)
    try:
        results = run_once(ws, [folder])
    finally:
        ws.close()
    assert len(results) == 2 and all(r.file.error is None and r.file.events for r in results), results


def put_everything_in(home: str, tmp: str, cli_runner: Any) -> None:
    """Every way in, each carrying the whole corpus."""
    res = cli_runner.invoke(cli, ["--home", home, "ingest", claude_transcript(f"{tmp}/cc/proj/s-ingest.jsonl", "s-ingest")])
    assert res.exit_code == 0, res.stderr
    hooked = claude_transcript(f"{tmp}/cc/proj/s-hook.jsonl", "s-hook")
    out = handle_claude_code({"hook_event_name": "Stop", "transcript_path": hooked, "session_id": "s-hook",
                              "cwd": "/home/u/proj"}, home=home)
    assert not [n for n in out.notes if "error" in n.lower()], out.notes
    # a response still being written and a summary whose leaf comes later: the hook keeps them in its state
    growing = f"{tmp}/cc/proj/s-open.jsonl"
    with open(growing, "w", encoding="utf-8") as f:
        f.write(json.dumps({"type": "summary", "summary": CORPUS[20].text, "leafUuid": "later-leaf"}) + "\n")
        f.write(json.dumps({"parentUuid": None, "isSidechain": False, "type": "user", "uuid": "o-u0", "timestamp": T0,
                            "sessionId": "s-open", "cwd": "/home/u/proj", "version": "2.1.0",
                            "message": {"role": "user", "content": "go"}}) + "\n")
        f.write(json.dumps({"parentUuid": "o-u0", "isSidechain": False, "type": "assistant", "uuid": "o-a0",
                            "timestamp": T0, "sessionId": "s-open", "cwd": "/home/u/proj", "version": "2.1.0",
                            "message": {"id": "msg_open", "model": "m", "role": "assistant",
                                        "content": [{"type": "text", "text": "\n".join(c.text for c in CORPUS)}]}}) + "\n")
    out = handle_claude_code({"hook_event_name": "Stop", "transcript_path": growing, "session_id": "s-open",
                              "cwd": "/home/u/proj"}, home=home)
    assert not [n for n in out.notes if "error" in n.lower()], out.notes
    watch_formats(home, f"{tmp}/watched")
    lines = [{"type": "session.created", "session_key": "appended", "title": CORPUS[0].text,
              "metadata": {"env": CORPUS[20].text, "password": CORPUS[24].secret}}]
    lines += [{"type": "message.appended", "session_key": "appended", "message_id": f"a{i}", "role": "user",
               "content": c.text, "extra": {"note": c.text}, "tool_calls": [{"input": {"command": c.text}}]}
              for i, c in enumerate(CORPUS)]
    lines += [{"type": "history.appended", "text": c.text, "source": "note", "refs": {"why": c.text}} for c in CORPUS]
    ndjson = os.path.join(tmp, "in.ndjson")
    with open(ndjson, "w", encoding="utf-8") as f:
        f.write("".join(json.dumps(x) + "\n" for x in lines))
    res = cli_runner.invoke(cli, ["--home", home, "append", ndjson])
    assert res.exit_code == 0, res.stderr
    store = LocalSessionStore.open(home)
    try:
        store.get_or_create("store", title=CORPUS[5].text, metadata={"cmd": CORPUS[25].text})
        for i, c in enumerate(CORPUS):
            store.add_message("store", "user", c.text, message_id=f"m{i}", extra={"raw": c.text})
        store.update("store", title=CORPUS[30].text, preview=CORPUS[31].text)
    finally:
        store.ws.close()
    for text in (REMEMBER_NOTE, CORPUS[40].text):
        # A note holding a secret is refused with the reason and nothing is written
        # (issue 21: notes are kept or refused); either way no byte of it may be stored.
        res = cli_runner.invoke(cli, ["--home", home, "remember", text])
        assert res.exit_code == 0 or "note refused" in res.stderr, res.stderr
    backend = Backend(home)
    try:
        for c in CORPUS:
            try:
                backend.remember(f"remember this: {c.text}")
            except InvalidEventError as e:  # refused at the door (a secret, an order): nothing written
                assert "note" in str(e)
    finally:
        backend.close()
    source = MemoryGateway("source")
    web = source.store("u@corp.io")
    for i, c in enumerate(CORPUS):
        web.add_message("web", "user", c.text, message_id=f"w{i}")
    ws = Workspace.open(home, writable=True)
    try:
        sync.pull(ws, remote=source.remote("u@corp.io"))
    finally:
        ws.close()


def run_everything(home: str, cli_runner: Any) -> tuple[RecordingLLM, list[str], MemoryGateway]:
    from processors.consolidator import run_consolidate
    from processors.dream import run_dream

    for proc in ("snapshot", "digest", "recall"):
        res = cli_runner.invoke(cli, ["--home", home, "run", proc])
        assert res.exit_code == 0, res.stderr
    llm = RecordingLLM()
    ws = Workspace.open(home, writable=True)
    try:
        run_consolidate(ws, llm)
        run_dream(ws, llm)
        target = MemoryGateway("target")
        sync.push(ws, remote=target.remote("u@corp.io"))
    finally:
        ws.close()
    for args in (["run", "recall"], ["replay"]):
        res = cli_runner.invoke(cli, ["--home", home, *args])
        assert res.exit_code == 0, res.stderr
    outputs = []
    for payload in ({"hook_event_name": "SessionStart", "cwd": "/home/u/proj", "session_id": "x"},
                    *({"hook_event_name": "UserPromptSubmit", "prompt": c.text, "cwd": "/home/u/proj"} for c in CORPUS)):
        outputs.append(handle_claude_code(payload, home=home).stdout)
    return llm, outputs, target


@pytest.mark.slow
def test_no_secret_of_the_corpus_reaches_a_file_the_gateway_a_prompt_or_a_hook_output(tmp_path, cli_runner):
    home = str(tmp_path / "ws")
    init_workspace(home)
    put_everything_in(home, str(tmp_path), cli_runner)
    llm, outputs, target = run_everything(home, cli_runner)
    files = workspace_bytes(home)
    assert any(p.endswith("recall.sqlite") for p in files) and any(p.startswith("sessions") for p in files)
    assert llm.prompts, "Dream and consolidate sent no prompt: nothing was checked there"
    found = {path: leftovers(data) for path, data in files.items()}
    assert {p: f for p, f in found.items() if f} == {}
    assert leftovers(gateway_bytes(target)) == []
    prompts = b"".join(msgspec.json.encode(msgspec.to_builtins(p)) for p in llm.prompts)
    assert leftovers(prompts) == []
    assert leftovers("\n".join(outputs).encode()) == []
    log = b"".join(d for p, d in files.items() if p.startswith("log"))
    assert log.count(b"[REDACTED:") >= 7 * len(CORPUS)  # every path redacted (not dropped) what it carried


def test_every_message_that_lost_a_secret_at_the_door_lists_its_kinds(tmp_path):
    home = str(tmp_path / "ws")
    init_workspace(home)
    store = LocalSessionStore.open(home)
    try:
        for i, c in enumerate(CORPUS):
            store.add_message("s", "user", c.text, message_id=f"m{i}")
        events = [e for e in store.ws.log.read() if isinstance(e, MessageAppended)]
    finally:
        store.ws.close()
    assert len(events) == len(CORPUS) and all(e.redacted for e in events)
    assert all(len(e.redacted) == e.content.count("[REDACTED:") for e in events)


def test_the_door_does_not_count_what_ingest_already_redacted():
    ev = MessageAppended(session_key="s", message_id="m", role="user", content=CORPUS[0].text)
    once = redact_event(ev)
    assert once.redacted and redact_event(once) is once  # the same object: nothing new, nothing counted twice
    plain = MessageAppended(session_key="s", message_id="m", role="user", content="nothing to see here")
    assert redact_event(plain) is plain


def test_a_dedup_key_holding_a_secret_is_replaced_by_a_stable_hash(tmp_path):
    home = str(tmp_path / "ws")
    init_workspace(home)
    ws = Workspace.open(home, writable=True)
    try:
        ev = MessageAppended(session_key="s", message_id="m", role="user", content="x", dedup=f"k:{CORPUS[4].secret}")
        first = ws.append([ev])[0]
        assert ws.append([ev])[0] == first  # still idempotent
        (stored,) = [e for e in ws.log.read() if isinstance(e, MessageAppended)]
    finally:
        ws.close()
    assert stored.dedup.startswith("redacted:") and CORPUS[4].secret not in stored.dedup
    assert leftovers(b"".join(workspace_bytes(home).values()), [CORPUS[4]]) == []


def test_the_door_scans_every_free_text_field_of_every_event_type():
    from eventlog.events import EVENT_TYPES

    fields = {cls.__struct_config__.tag: text_fields(cls) for cls in EVENT_TYPES}
    assert fields["message.appended"] == ("content", "tool_calls", "extra")
    assert fields["session.updated"] == ("title", "preview", "metadata")
    assert fields["history.appended"] == ("text", "refs")
    assert fields["memory.appended"] == ("section", "text", "subject")
    assert fields["memory.edited"] == ("text",)
    assert fields["dream.completed"] == ("raw_output", "validation")
    assert "query" in fields["memory.recalled"] and "line" in fields["diary.appended"]


def test_a_prompt_is_redacted_however_it_was_built():
    p = Prompt(purpose="facts", system="s", user=CORPUS[0].text, max_tokens=10,
               inputs={"entries": [{"text": CORPUS[1].text}]})
    data = msgspec.json.encode(msgspec.to_builtins(p))
    assert leftovers(data, CORPUS[:2]) == []


def test_a_secret_written_into_memory_md_by_hand_never_reaches_the_session_start_context(tmp_path):
    home = str(tmp_path / "ws")
    init_workspace(home)
    os.makedirs(os.path.join(home, "memory"), exist_ok=True)
    with open(os.path.join(home, "memory", "MEMORY.md"), "w", encoding="utf-8") as f:
        f.write("# Memory\n\n## User Profile\n\n" + "".join(f"- {c.text}\n" for c in CORPUS[:20]))
    out = handle_claude_code({"hook_event_name": "SessionStart", "cwd": str(tmp_path)}, home=home)
    assert out.stdout and leftovers(out.stdout.encode(), CORPUS[:20]) == []


def test_mcp_tool_results_and_memory_resources_are_redacted_on_the_way_to_the_model(tmp_path):
    from eventlog.app.agents.mcp import _result

    out = _result({"hits": [{"text": c.text} for c in CORPUS]})
    assert leftovers(out.content[0].text.encode()) == []
    assert leftovers(json.dumps(out.structured_content).encode()) == []
    home = str(tmp_path / "ws")
    init_workspace(home)
    os.makedirs(os.path.join(home, "memory"), exist_ok=True)
    with open(os.path.join(home, "memory", "MEMORY.md"), "w", encoding="utf-8") as f:
        f.write("# Memory\n\n## User Profile\n\n" + "".join(f"- {c.text}\n" for c in CORPUS[:20]))
    backend = Backend(home)
    try:
        assert leftovers(backend.memory_file("").encode(), CORPUS[:20]) == []
    finally:
        backend.close()


def test_a_model_that_echoes_a_secret_leaves_it_nowhere(tmp_path):
    """A model's answer passes the door too: raw output, facts, MEMORY.md, the checkpoint."""
    from processors.dream import run_dream
    from processors.llm.fake import FakeLLM

    home = str(tmp_path / "ws")
    init_workspace(home)
    ws = Workspace.open(home, writable=True)
    try:
        ws.append([MessageAppended(session_key="cli:a", message_id="cli:a-1", role="user",
                                   content="I deploy with the staging cluster.", timestamp="2026-03-01T10:00:00Z")])
        echoed = [c for c in CORPUS if "\n" not in c.text][:12]
        ops = [{"op": "add", "text": f"The user deploys with {c.text}", "subject": "user", "scope": "global",
                "section": "Preferences", "sources": ["m1"]} for c in echoed]
        [run] = run_dream(ws, FakeLLM(json.dumps({"ops": ops}))).runs
        assert run.outcome == "valid" and run.facts
        ws.flush()
    finally:
        ws.close()
    found = {p: f for p, d in workspace_bytes(home).items() if (f := leftovers(d, echoed))}
    assert found == {}
