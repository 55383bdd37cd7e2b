"""Memory on and off through Slack (SPEC O1-O3): group DMs and shared channels are group chats,
a thread that ever hears from a group is off for good, and nothing said in a group chat reaches
memory, history search or review, checked on the files, the git history and the index."""

from __future__ import annotations

from reverie import Reverie
from reverie.config import Settings
from tests.slack.conftest import DM_SAM, MPIM, OLGA, OPS, SAM, SHARED, Stack


def grant(stack: Stack, *channels: str) -> None:
    for channel in channels:
        stack.rv.ensure_channel(f"slack:{channel}", "channel")
        stack.rv.grant("ada", f"slack:{channel}")


def test_o1_memory_is_on_in_a_dm_and_a_workspace_channel(stack: Stack) -> None:
    grant(stack, OPS)
    stack.say(SAM, DM_SAM, "!remember Deploys - Tuesdays")
    stack.model.answer("Hi.")
    stack.model.answer("Hello.")
    dm, _ = stack.say(SAM, DM_SAM, "hi")
    ch, _ = stack.say(SAM, OPS, "hello", mention=True)
    stack.settle()
    for channel, body in ((DM_SAM, dm), (OPS, ch)):
        assert stack.rv.conversation(f"slack:{channel}:{body['event']['ts']}").memory_on
    assert all("### Memory index" in str(r.body["messages"][0]) for r in stack.model.requests)


def test_o1_a_group_dm_and_a_shared_channel_are_group_chats(stack: Stack) -> None:
    grant(stack, MPIM, SHARED)
    stack.say(SAM, DM_SAM, "!remember Deploys - Tuesdays")
    stack.model.answer("Hi all.")
    stack.model.answer("Hello all.")
    group, _ = stack.say(SAM, MPIM, "hi", mention=True)
    shared, _ = stack.say(SAM, SHARED, "hello", mention=True)
    stack.say(SAM, MPIM, "!remember Secret plan - from the group")
    stack.say(OLGA, SHARED, "!memory show memory")
    stack.settle()
    for channel, body in ((MPIM, group), (SHARED, shared)):
        conv = stack.rv.conversation(f"slack:{channel}:{body['event']['ts']}")
        assert (conv.memory_mode, conv.channel_kind) == ("off", "group")
    # No memory in the prompt and no memory tools offered in a group chat.
    for request in stack.model.requests:
        assert "We deploy" not in str(request.body) and "Tuesdays" not in str(request.body)
        tools = [t["function"]["name"] for t in request.body.get("tools", [])]
        assert "search_channel_memory" not in tools
    refused = [t for t in stack.texts(MPIM) if t.startswith("Memory is off in this conversation")]
    assert len(refused) == 1 and refused[0].endswith("Nothing changed.")
    shown = [t for t in stack.texts(SHARED) if t.startswith("Memory is off in this conversation")]
    assert len(shown) == 1 and shown[0].endswith("Nothing was shown.")
    assert stack.rv.memory_read("ada").revision == 1


def test_o2_a_group_message_in_a_thread_that_was_a_dm_turns_it_off_for_good(
    stack: Stack,
) -> None:
    stack.model.answer("Noted.")
    root, _ = stack.say(SAM, DM_SAM, "The staging password rotates on Mondays.")
    stack.settle()
    ts = root["event"]["ts"]
    conv = f"slack:{DM_SAM}:{ts}"
    assert stack.rv.conversation(conv).memory_on
    assert {h.conversation for h in stack.rv.context_search("ada", "staging rotates")} == {conv}
    # The thread now reaches a group (the DM became a group DM): a group message arrives in
    # it, not even addressed to the agent.
    stack.slack.channels[DM_SAM].kind = "mpim"
    stack.slack.channels[DM_SAM].members.add(OLGA)
    stack.say(OLGA, DM_SAM, "hi all", thread_ts=ts)
    stack.settle()
    after = stack.rv.conversation(conv)
    assert (after.memory_mode, after.mode_reason) == ("off", "linked_group")
    assert f"slack:{DM_SAM}:group" in after.linked_chats
    # The group asks the agent something there: it answers, without memory.
    stack.model.answer("Hello everyone.")
    stack.say(OLGA, DM_SAM, "who are you?", thread_ts=ts, mention=True)
    stack.settle()
    assert stack.texts(DM_SAM)[-1] == "Hello everyone."
    # Later messages from the DM do not turn it back on, and history search forgets it (O3).
    stack.model.answer("Sure.")
    stack.say(SAM, DM_SAM, "one more thing", thread_ts=ts, mention=True)
    stack.say(SAM, DM_SAM, "!remember Anything - from this thread", thread_ts=ts)
    stack.settle()
    assert stack.rv.conversation(conv).memory_mode == "off"
    assert stack.rv.context_search("ada", "staging rotates") == []
    assert conv not in [s.id for s in stack.rv.context_sessions("ada")]
    assert any(t.startswith("Memory is off in this conversation") for t in stack.texts(DM_SAM))
    assert stack.rv.memory_read("ada").revision == 0
    # The last turn's prompt held no memory.
    assert "### Memory index" not in str(stack.model.requests[-1].body["messages"][0])


GROUP_WORDS = ("PINEAPPLE", "Oracle", "Zurich")


def test_o3_nothing_from_a_group_chat_reaches_memory_search_or_review(stack: Stack) -> None:
    """A run of mixed traffic (DMs, a workspace channel, a group DM, a shared channel, a DM
    thread that turns group), then review: the group chats' words are nowhere."""
    grant(stack, OPS, MPIM, SHARED)
    dm_facts = [
        (SAM, DM_SAM, "I prefer tea over coffee."),
        (SAM, DM_SAM, "We decided to use Postgres 16 for the billing service."),
    ]
    group_facts = [
        (SAM, MPIM, "We decided to move billing to Oracle."),
        (OLGA, SHARED, "The office moves to Zurich next year, we decided."),
    ]
    for n, (user, channel, text) in enumerate(dm_facts + group_facts):
        stack.model.answer(f"Noted {n}.")
        stack.say(user, channel, text, mention=channel != DM_SAM)
    stack.model.answer("Noted.")
    root, _ = stack.say(SAM, DM_SAM, "I prefer short answers.")
    stack.settle()
    stack.model.answer("Noted, all.")
    stack.say(
        OLGA,
        DM_SAM,
        "The code word is PINEAPPLE, we decided.",
        thread_ts=root["event"]["ts"],
        channel_type="mpim",
    )
    # Commands from the group chats are refused; from the DM, saved.
    stack.say(SAM, MPIM, "!remember Code - PINEAPPLE")
    stack.say(OLGA, SHARED, "!memory update memory - Zurich")
    stack.say(SAM, DM_SAM, "!remember Team - Sam and Olga run ops")
    stack.settle()
    for conv in stack.rv.conversations_of("ada"):
        stack.rv.close_conversation(conv.id)
    # Review with the built-in offline reviewer (no model): the same home, no REVERIE_MODEL.
    offline = Reverie(stack.rv.home, settings=Settings.load(stack.rv.home, model=""))
    reports = offline.review_run("ada", force=True)
    offline.close()
    assert reports[0].commits >= 1 and reports[0].model_calls == 0

    memory = stack.rv.memory_read("ada").text
    assert "tea" in memory and "Postgres 16" in memory and "Sam and Olga run ops" in memory
    # The files and every revision of them (git history).
    for record in stack.rv.memory_history("ada", limit=1000):
        for source in stack.rv.memory_files("ada", record.revision):
            text = stack.rv.memory_read("ada", source, record.revision).text
            assert not any(word in text for word in GROUP_WORDS), (record.revision, source)
        assert not any(word in record.message for word in GROUP_WORDS)
    # The memory index and history search.
    for word in GROUP_WORDS:
        assert stack.rv.memory_search("ada", word) == []
        assert stack.rv.context_search("ada", word) == []
    # Review never had a group range to read.
    # Off: the group DM's and the shared channel's threads (two each: a talk, a command) and
    # the DM thread that heard from a group.
    off = [c.id for c in stack.rv.conversations_of("ada") if not c.memory_on]
    assert len(off) == 5
    assert not any(c in {r[0] for r in stack.rv.pending_ranges("ada")} for c in off)
    assert {s.id for s in stack.rv.context_sessions("ada")}.isdisjoint(off)
