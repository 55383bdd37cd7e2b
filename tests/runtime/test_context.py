"""The session-history tools H1-H3: listing, reading with ranges and cursors, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reverie import Reverie
from reverie.errors import NotFound, PermissionDenied, RefusedInput
from reverie.review.types import format_source, parse_sources
from reverie.runtime.context import ReadPage

T0 = 1_700_000_000.0
LATER = T0 + 10_000


@pytest.fixture
def rv3(rv: Reverie) -> Reverie:
    """ada with three DM conversations (one with tool logs), a group one, and bob's."""
    rv.ensure_channel("D1", "dm")
    rv.ensure_channel("G1", "group")
    rv.create_agent("bob")
    rv.create_conversation("ada", "D1", conversation_id="old", title="Old chat", now=T0)
    rv.append_message("old", "user", "first question", author="sam", time=T0 + 1)
    rv.append_message("old", "assistant", "first answer", time=T0 + 2)
    rv.create_conversation("ada", "D1", conversation_id="mid", now=T0 + 100)
    for i, (role, text) in enumerate(
        [
            ("user", "please check the build"),
            ("tool", "build.log: 200 lines of output"),
            ("assistant", "the build is green"),
            ("tool", "ci.status: ok"),
            ("user", "thanks"),
        ]
    ):
        rv.append_message(
            "mid", role, text, author="sam" if role == "user" else None, time=T0 + 101 + i
        )
    rv.create_conversation("ada", "D1", conversation_id="new", now=T0 + 200)
    rv.append_message("new", "user", "latest talk", author="sam", time=T0 + 201)
    rv.create_conversation("ada", "G1", conversation_id="grp", now=T0 + 300)
    rv.append_message("grp", "user", "group talk", time=T0 + 301)
    rv.create_conversation("bob", "D1", conversation_id="bobs", now=T0 + 400)
    rv.append_message("bobs", "user", "bob talk", time=T0 + 401)
    return rv


def texts(page: ReadPage) -> list[str]:
    return [m.text for m in page.messages]


# H1


def test_h1_sessions_are_the_agents_memory_on_conversations_newest_first(rv3: Reverie) -> None:
    sessions = rv3.context_sessions("ada")
    assert [s.id for s in sessions] == ["new", "mid", "old"]
    old = sessions[-1]
    assert (old.title, old.created_at, old.updated_at) == ("Old chat", T0, T0 + 2)
    assert (old.messages, old.chars) == (2, len("first question") + len("first answer"))
    mid = sessions[1]
    assert mid.title == "please check the build"  # from the first user message
    assert mid.messages == 5  # positions 0..5, tool logs included
    assert mid.chars == len("please check the build") + len("the build is green") + len("thanks")


def test_h1_sessions_leave_out_the_asking_deleted_off_and_foreign_ones(rv3: Reverie) -> None:
    assert [s.id for s in rv3.context_sessions("ada", from_conversation="new")] == ["mid", "old"]
    rv3.delete_conversation("old")
    assert [s.id for s in rv3.context_sessions("ada")] == ["new", "mid"]
    assert [s.id for s in rv3.context_sessions("bob")] == ["bobs"]
    assert [s.id for s in rv3.context_sessions("ada", limit=1)] == ["new"]
    with pytest.raises(RefusedInput) as e:
        rv3.context_sessions("ada", limit=0)
    assert e.value.code == "invalid_limit"


def test_h1_sessions_from_a_memory_off_conversation_are_refused(rv3: Reverie) -> None:
    with pytest.raises(PermissionDenied) as e:
        rv3.context_sessions("ada", from_conversation="grp")
    assert e.value.code == "memory_off"
    assert "Nothing was loaded" in e.value.message
    assert e.value.details == {"conversation": "grp"}


# H2


def test_h2_a_range_includes_start_and_excludes_end(rv3: Reverie) -> None:
    page = rv3.context_read("ada", "mid", 2, 5, include_tools=True)
    assert [m.position for m in page.messages] == [2, 3, 4]
    assert (page.start, page.end, page.next_cursor) == (2, 5, None)
    whole = rv3.context_read("ada", "mid", include_tools=True)
    assert [m.position for m in whole.messages] == [0, 1, 2, 3, 4]
    assert rv3.context_read("ada", "mid", 3, 3).messages == []
    m = rv3.context_read("ada", "old", 0, 1).messages[0]
    assert (m.role, m.author, m.text, m.time, m.channel) == (
        "user",
        "sam",
        "first question",
        T0 + 1,
        "D1",
    )


def test_h2_tool_logs_only_when_asked(rv3: Reverie) -> None:
    page = rv3.context_read("ada", "mid")
    assert texts(page) == ["please check the build", "the build is green", "thanks"]
    assert [m.position for m in page.messages] == [0, 2, 4]
    assert page.tools_omitted == 2
    with_tools = rv3.context_read("ada", "mid", include_tools=True)
    assert "ci.status: ok" in texts(with_tools) and with_tools.tools_omitted == 0


def test_h2_a_cursor_continues_exactly_where_the_page_stopped(rv: Reverie) -> None:
    rv.ensure_channel("D1", "dm")
    rv.create_conversation("ada", "D1", conversation_id="long")
    long_text = "".join(f"{i:05d}|" for i in range(1000))  # 6,000 characters
    bodies = ["short opener", long_text, "x" * 150, "y" * 150, "closing words"]
    for i, body in enumerate(bodies):
        rv.append_message("long", "user" if i % 2 == 0 else "assistant", body, time=T0 + i)
    rv.append_message("long", "tool", "z" * 5000, time=T0 + 9)
    pages = [rv.context_read("ada", "long", max_chars=1000)]
    while pages[-1].next_cursor:
        pages.append(rv.context_read("ada", "long", cursor=pages[-1].next_cursor, max_chars=1000))
    assert all(sum(len(m.text) for m in p.messages) <= 1000 for p in pages)
    # put the pieces back together: every message whole, in order, nothing twice
    rebuilt: dict[int, str] = {}
    for p in pages:
        for m in p.messages:
            assert m.offset == len(rebuilt.get(m.position, ""))
            rebuilt[m.position] = rebuilt.get(m.position, "") + m.text
    assert rebuilt == dict(enumerate(bodies))
    # the long message is split across pages, marked as continuing
    assert any(m.continues for m in pages[0].messages)
    # a message that fits a page is not split just because this page is nearly full
    for p in pages:
        for m in p.messages:
            if len(bodies[m.position]) <= 1000:
                assert m.offset == 0 and not m.continues
    assert sum(p.tools_omitted for p in pages) == 1


def test_h2_a_cursor_keeps_its_range_and_tool_setting(rv3: Reverie) -> None:
    first = rv3.context_read("ada", "mid", 1, 4, include_tools=True, max_chars=100)
    assert texts(first) == [
        "build.log: 200 lines of output",
        "the build is green",
        "ci.status: ok",
    ]
    assert first.next_cursor is None
    rv3.append_message("mid", "assistant", "a" * 150, time=T0 + 500)
    rv3.append_message("mid", "assistant", "b" * 150, time=T0 + 501)
    p1 = rv3.context_read("ada", "mid", 5, 7, max_chars=100)
    assert (texts(p1), p1.next_cursor is not None) == (["a" * 100], True)
    p2 = rv3.context_read("ada", "mid", cursor=p1.next_cursor, max_chars=100)
    # a message longer than a page is split wherever the page ends
    assert (p2.start, p2.end, texts(p2)) == (5, 7, ["a" * 50, "b" * 50])
    assert [(m.offset, m.continues) for m in p2.messages] == [(100, False), (0, True)]
    p3 = rv3.context_read("ada", "mid", cursor=p2.next_cursor, max_chars=100)
    assert (p3.start, texts(p3), p3.next_cursor) == (6, ["b" * 100], None)
    # the cursor carries include_tools: the tool log at position 3 stays in
    rv3.create_conversation("ada", "D1", conversation_id="tools")
    for i, (role, text) in enumerate([("user", "u" * 60), ("tool", "t" * 60), ("user", "v" * 30)]):
        rv3.append_message("tools", role, text, time=T0 + 600 + i)
    t1 = rv3.context_read("ada", "tools", include_tools=True, max_chars=100)
    assert [m.position for m in t1.messages] == [0]
    t2 = rv3.context_read("ada", "tools", cursor=t1.next_cursor, max_chars=100)
    assert [m.position for m in t2.messages] == [1, 2]


@pytest.mark.parametrize(
    ("agent", "session", "kwargs", "error", "code"),
    [
        ("ada", "gone", {}, NotFound, "conversation_deleted"),
        ("ada", "bobs", {}, NotFound, "not_found"),
        ("ada", "nope", {}, NotFound, "not_found"),
        ("ada", "grp", {}, PermissionDenied, "memory_off"),
        ("ada", "old", {"from_conversation": "grp"}, PermissionDenied, "memory_off"),
        ("ada", "old", {"from_conversation": "bobs"}, NotFound, "not_found"),
        ("ada", "old", {"start": -1}, RefusedInput, "invalid_range"),
        ("ada", "old", {"start": 2, "end": 1}, RefusedInput, "invalid_range"),
        ("ada", "old", {"end": 3}, RefusedInput, "invalid_range"),
        ("ada", "old", {"cursor": "garbage!"}, RefusedInput, "invalid_cursor"),
        ("ada", "old", {"max_chars": 10}, RefusedInput, "invalid_limit"),
        ("nobody", "old", {}, NotFound, "not_found"),
    ],
)
def test_h2_refusals_have_stable_codes_and_say_what_to_do(
    rv3: Reverie,
    agent: str,
    session: str,
    kwargs: dict[str, object],
    error: type[Exception],
    code: str,
) -> None:
    rv3.create_conversation("ada", "D1", conversation_id="gone")
    rv3.delete_conversation("gone")
    with pytest.raises(error) as e:
        rv3.context_read(agent, session, **kwargs)  # type: ignore[arg-type]
    assert getattr(e.value, "code", None) == code
    assert len(getattr(e.value, "message", "")) > 20


def test_h2_a_cursor_belongs_to_its_conversation(rv3: Reverie) -> None:
    rv3.append_message("old", "assistant", "q" * 500, time=T0 + 50)
    page = rv3.context_read("ada", "old", max_chars=100)
    assert page.next_cursor
    with pytest.raises(RefusedInput) as e:
        rv3.context_read("ada", "new", cursor=page.next_cursor)
    assert e.value.code == "invalid_cursor"
    with pytest.raises(RefusedInput) as e:
        rv3.context_read("ada", "old", 0, 1, cursor=page.next_cursor)
    assert e.value.code == "invalid_cursor"


def test_h2_every_source_review_writes_resolves_through_context_read(rv3: Reverie) -> None:
    ranges = rv3.pending_ranges("ada", now=LATER)
    assert {c for c, _, _ in ranges} == {"old", "mid", "new"}  # never grp, never bob's
    entry = "- Builds are checked on request " + " ".join(format_source(*r) for r in ranges)
    for conversation, start, end in parse_sources(entry):
        page = rv3.context_read("ada", conversation, start, end, include_tools=True)
        assert [m.position for m in page.messages] == list(range(start, end))
        without_tools = rv3.context_read("ada", conversation, start, end)
        assert len(without_tools.messages) + without_tools.tools_omitted == end - start


# H3


def test_h3_session_get_gives_the_details_and_what_started_the_task(rv3: Reverie) -> None:
    rv3.ensure_channel("W1", "web")
    rv3.create_conversation(
        "ada", "W1", conversation_id="task", title="Deploy help", now=T0, thinking="high"
    )
    rv3.link_chat("task", "D1")
    sub = rv3.create_conversation(
        "ada",
        "W1",
        parent="task",
        started_by={"kind": "sub_session", "by": "task", "task": "check logs"},
    )
    d = rv3.session_get("task")
    assert (d.id, d.title, d.agent, d.channel, d.channel_kind) == (
        "task",
        "Deploy help",
        "ada",
        "W1",
        "web",
    )
    assert (d.linked_chats, d.parent, d.memory_mode, d.mode_reason) == (["D1"], None, "on", "web")
    assert (d.model, d.model_source, d.thinking) == (None, "agent_default", "high")
    assert (d.closed, d.deleted, d.messages, d.started_by) == (False, False, 0, None)
    rv3.append_message("task", "user", "deploy please", author="sam", time=T0 + 1)
    assert rv3.session_get("task").started_by == {
        "kind": "user_message",
        "by": "sam",
        "position": 0,
    }
    rv3.set_task("task", {"kind": "automation", "by": "nightly"}, model="openai:gpt-x")
    d = rv3.session_get("task", agent="ada")
    assert (d.model, d.model_source) == ("openai:gpt-x", "conversation")
    assert d.started_by == {"kind": "automation", "by": "nightly"}
    s = rv3.session_get(sub.id)
    assert (s.parent, s.started_by) == (
        "task",
        {"kind": "sub_session", "by": "task", "task": "check logs"},
    )
    assert set(d.to_dict()) >= {"id", "model_source", "started_by", "memory_mode"}


def test_h3_session_get_answers_in_memory_off_conversations(rv3: Reverie) -> None:
    d = rv3.session_get("grp", agent="ada")
    assert (d.memory_mode, d.mode_reason, d.channel_kind) == ("off", "started_in_group", "group")
    assert d.to_dict()["withheld"] == d.withheld and "title" in d.withheld
    with pytest.raises(NotFound):
        rv3.session_get("grp", agent="bob")
    with pytest.raises(NotFound):
        rv3.session_get("nope")


def test_o3_session_get_gives_nothing_said_in_a_memory_off_conversation(rv3: Reverie) -> None:
    """Issue 10: the title of a group conversation, built from group text, came back."""
    assert rv3.conversation("grp").title == "group talk"  # stored, not shown
    sub = rv3.create_conversation(
        "ada", "G1", parent="grp", started_by={"kind": "sub_session", "by": "grp", "task": "merge"}
    )
    for conv in ("grp", sub.id):
        d = rv3.session_get(conv, agent="ada")
        assert d.title == "" and "started_by" in d.withheld
        assert "group talk" not in json.dumps(d.to_dict()) and "merge" not in str(d.started_by)
    assert rv3.session_get("grp").withheld == ["title", "started_by"]
    assert rv3.session_get(sub.id).started_by == {"kind": "sub_session", "by": "grp"}
    # a conversation that turns off loses its title from then on
    assert rv3.session_get("new").title == "latest talk"
    rv3.append_message("new", "user", "said in the group", channel_id="G1", time=T0 + 205)
    assert rv3.session_get("new").title == "" and rv3.session_get("new").withheld[0] == "title"


def test_m4_memory_tools_refuse_in_a_memory_off_conversation(tmp_path: Path) -> None:
    rv = Reverie(tmp_path / "m4", create=True)
    rv.create_agent("ada", memory_writers="conversations")
    rv.ensure_channel("G1", "group")
    rv.ensure_channel("D1", "dm")
    rv.create_conversation("ada", "G1", conversation_id="grp")
    rv.create_conversation("ada", "D1", conversation_id="dm")
    calls = [
        lambda c: rv.memory_read("ada", from_conversation=c),
        lambda c: rv.memory_search("ada", "anything", from_conversation=c),
        lambda c: rv.memory_apply(
            "ada", {"action": "add", "text": "x"}, writer="agent", from_conversation=c
        ),
    ]
    for call in calls:
        with pytest.raises(PermissionDenied) as e:
            call("grp")
        assert e.value.code == "memory_off"
        call("dm")  # the same tool in a DM works
    assert rv.memory_read("ada").revision == 1  # only the DM's write landed
