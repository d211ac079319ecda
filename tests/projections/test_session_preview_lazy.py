"""The lazy preview (``SessionState.preview`` folds the candidate message when read) equals the eager one.

The reference below is the fold as it was before the preview became lazy: every candidate message's
preview computed when it arrives (``_preview``), an update of the preview's message refolded at once,
an explicit preview kept over new messages. Reads are interleaved at random, so a preview cached by an
early read must still follow later events. (Deletes and restarts are left to the golden replays and
the stateful projection tests: this reference does not model them.)
"""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from eventlog.events import MessageAppended, MessageUpdated, SessionUpdated
from eventlog.fsio import MemoryFS
from projections.sessions import _PREVIEW_HEAD, SessionsProjection, _has_preview, _preview, info_of

_TEXT = st.one_of(st.text(alphabet=st.sampled_from("ab é \n\t\u3000"), max_size=200),
                  st.sampled_from(["", " ", "\n\n", " " * 500 + "late", "x" * 130 + " y"]))
_STEP = st.one_of(
    st.tuples(st.just("append"), st.sampled_from(["user", "assistant", "tool", "system"]), _TEXT),
    st.tuples(st.just("edit"), st.integers(0, 8), _TEXT),
    st.tuples(st.just("set"), _TEXT),
    st.tuples(st.just("read")),
)


class _Eager:
    """The preview of one session as the eager fold kept it."""

    def __init__(self) -> None:
        self.preview, self.preview_id, self.preview_set = "", "", False

    def appended(self, mid: str, role: str, content: str) -> None:
        if not self.preview_set and role in ("user", "assistant"):
            head = _preview(content)
            if head:
                self.preview, self.preview_id = head, mid

    def edited(self, mid: str, content: str) -> None:
        if not self.preview_set and mid == self.preview_id:
            self.preview = _preview(content) or self.preview

    def set(self, preview: str) -> None:
        self.preview, self.preview_set = preview, True


@settings(max_examples=300, deadline=None)
@given(st.lists(_STEP, max_size=40))
def test_lazy_preview_is_the_eager_one(steps: list[tuple]) -> None:
    p = SessionsProjection("/nowhere", MemoryFS())
    eager: _Eager | None = None
    for n, step in enumerate(steps, start=1):
        if step[0] == "append":
            p.apply(MessageAppended(session_key="s", message_id=f"m{n}", role=step[1], content=step[2], seq=n))
            if eager is None:
                eager = _Eager()
            eager.appended(f"m{n}", step[1], step[2])
        elif step[0] == "edit":
            mid = f"m{step[1]}"
            p.apply(MessageUpdated(session_key="s", message_id=mid, content=step[2], seq=n))
            if eager is not None:
                eager.edited(mid, step[2])
        elif step[0] == "set":
            p.apply(SessionUpdated(session_key="s", preview=step[1], seq=n))
            if eager is not None:
                eager.set(step[1])
        s = p.index.get("s")
        assert (s is None) == (eager is None)
        if s is not None and step[0] == "read":
            assert s.preview == eager.preview
            assert info_of(s).preview == eager.preview
    s = p.index.get("s")
    if s is not None:
        assert s.preview == eager.preview
        # the state (what a checkpoint holds) carries the folded preview under its old name
        d = msgspec.to_builtins(p.state())["index"][0]
        assert d["preview"] == eager.preview and d["preview_raw"] is None
        q = SessionsProjection("/nowhere", MemoryFS())
        q.load(msgspec.json.decode(msgspec.json.encode(p.state())))
        assert q.index["s"].preview == eager.preview


@given(st.text(max_size=600))
def test_has_preview_is_a_non_empty_preview(content: str) -> None:
    assert _has_preview(content) == (_preview(content) != "")


def test_has_preview_edges() -> None:
    for content in ["", " ", "\n" * 479 + "a", "\n" * 480 + "a", "a", " a", "\u3000" * 10]:
        assert _has_preview(content) == (_preview(content) != ""), repr(content)


_HEADS = st.builds(lambda pad, n, body: pad * n + body, st.sampled_from([" ", "\n", " \t", "\u3000", "ab  "]),
                   st.integers(0, 600), st.text(alphabet=st.sampled_from("ab \n"), max_size=60))


@given(_HEADS | st.text(max_size=1200))
def test_a_session_holds_only_the_head_the_preview_reads(content: str) -> None:
    """The fold keeps ``content[:_PREVIEW_HEAD]`` of a long message, never all of it: the preview is the same."""
    assert _preview(content[:_PREVIEW_HEAD]) == _preview(content)
    assert _has_preview(content[:_PREVIEW_HEAD]) == _has_preview(content)
