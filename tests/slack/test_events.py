"""Slack's events into the running app (SPEC P1-P3, T1, W7): signatures, retries, order, the
agent's turns answered in the thread through the real ``openai`` client and the outbox, the
acknowledgement that does not wait for the model, and the App Home tab."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import logging
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from reverie.errors import RefusedInput
from reverie.runtime.run import STALE_NOTICE
from reverie.slack import app as slack_app
from reverie.slack.app import SlackSurface
from reverie.slack.mapping import channel_ref
from tests.llm.fake_openai_server import Received, Scripted, ToolUse
from tests.slack.conftest import BOT_TOKEN, DM_SAM, OPS, SAM, SIGNING_SECRET, Stack
from tests.slack.fake_slack_server import sign


def held(answer: str) -> tuple[threading.Event, Any]:
    """A model answer that waits until the test lets it go."""
    release = threading.Event()

    def slow(request: Received) -> Scripted:
        release.wait(30)
        return Scripted(answer)

    return release, slow


def wait_for(condition: Any) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, "condition never held"
        time.sleep(0.01)


def test_a_bad_signature_is_refused_and_changes_nothing(stack: Stack) -> None:
    body = stack.events.message(SAM, DM_SAM, "!remember Deploys - Tuesdays")
    status, _ = stack.events.deliver(body, secret="not-the-signing-secret")
    assert status == 401
    stack.settle()
    assert stack.texts() == []
    assert stack.rv.memory_read("ada").revision == 0
    assert stack.rv.conversations_of("ada") == []


def test_an_event_older_than_five_minutes_is_refused(stack: Stack) -> None:
    old = stack.events.message(SAM, DM_SAM, "!remember Deploys - Tuesdays")
    assert stack.events.deliver(old, age=5 * 60 + 30)[0] == 401
    recent = stack.events.message(SAM, DM_SAM, "!remember Deploys - Tuesdays")
    assert stack.events.deliver(recent, age=4 * 60)[0] == 200
    stack.settle()
    assert stack.texts() == ["Saved to ada's memory: revision 1."]


def test_a_dm_is_answered_in_its_thread_through_the_model(stack: Stack) -> None:
    stack.say(SAM, DM_SAM, "!remember Deploys - We deploy on Tuesdays")
    stack.model.answer("On Tuesdays.")
    body, status = stack.say(SAM, DM_SAM, "When do we deploy?")
    assert status == 200
    stack.settle()
    answer = stack.slack.posted(DM_SAM)[-1]
    assert answer["text"] == "On Tuesdays."
    assert answer["thread_ts"] == body["event"]["ts"]
    # The prompt held memory (a DM: memory on), and the author is Sam's workspace member.
    assert "We deploy on Tuesdays" in str(stack.model.requests[-1].body["messages"][0])
    conv = stack.rv.conversation(f"slack:{DM_SAM}:{body['event']['ts']}")
    assert conv.memory_on
    turn = stack.rv.turn_log(conv.id)[0]
    assert (turn.outcome, turn.envelope["author"]) == ("delivered", f"slack:{SAM}")


def test_acknowledged_while_the_model_is_slow_and_a_retry_answers_once(stack: Stack) -> None:
    release, slow = held("On Tuesdays.")
    stack.model.script.append(slow)
    body = stack.events.message(SAM, DM_SAM, "When do we deploy?")
    # Slack hears back while the model has not answered.
    assert stack.events.deliver(body)[0] == 200
    wait_for(lambda: len(stack.model.requests) == 1)
    # Slack retries (it did not hear back in time, say): acknowledged, nothing runs twice.
    assert stack.events.deliver(body, retry=1)[0] == 200
    assert stack.texts() == []
    release.set()
    stack.settle()
    assert stack.events.deliver(body, retry=2)[0] == 200
    stack.settle()
    assert stack.texts() == ["On Tuesdays."]
    assert len(stack.model.requests) == 1


def test_out_of_order_events_each_count_once(stack: Stack) -> None:
    first = stack.events.message(SAM, DM_SAM, "!remember First - one")
    second = stack.events.message(SAM, DM_SAM, "!remember Second - two")
    root = stack.events.message(SAM, DM_SAM, "When do we deploy?")
    ts = root["event"]["ts"]
    reply = stack.events.message(SAM, DM_SAM, "And who runs it?", thread_ts=ts)
    stack.model.answer("Olga runs it.")
    stack.model.answer("On Tuesdays.")
    # The thread's reply arrives before its root; the commands arrive last-first, then again.
    for body, retry in [(reply, 0), (second, 0), (root, 0), (first, 0), (second, 1), (first, 1)]:
        assert stack.events.deliver(body, retry=retry)[0] == 200
        stack.settle()
    body = stack.rv.memory_read("ada").text
    assert body.count("## First") == 1 and body.count("## Second") == 1
    assert stack.rv.memory_read("ada").revision == 2
    conv = stack.rv.conversation(f"slack:{DM_SAM}:{ts}")
    said = [(m.role, m.text) for m in stack.rv.context_read(None, conv.id).messages]
    assert said == [
        ("user", "And who runs it?"),
        ("assistant", "Olga runs it."),
        ("user", "When do we deploy?"),
        ("assistant", "On Tuesdays."),
    ]
    threaded = [m for m in stack.slack.posted(DM_SAM) if m.get("thread_ts") == ts]
    assert [m["text"] for m in threaded] == ["Olga runs it.", "On Tuesdays."]


def test_a_mention_in_a_granted_channel_is_answered_and_channel_talk_is_ignored(
    stack: Stack,
) -> None:
    stack.rv.ensure_channel(f"slack:{OPS}", "channel")
    stack.rv.grant("ada", f"slack:{OPS}")
    stack.say(SAM, OPS, "lunch anyone?")
    stack.model.answer("Tuesdays.")
    body, _ = stack.say(SAM, OPS, "when do we deploy?", mention=True)
    # Slack also sends the message event for a mention: it is handled once.
    stack.events.deliver(
        stack.events.envelope({**body["event"], "type": "message", "channel_type": "channel"})
    )
    stack.settle()
    assert stack.texts(OPS) == ["Tuesdays."]
    assert len(stack.model.requests) == 1
    # In a shared chat the transcript names who spoke.
    assert f"[slack:{SAM}] when do we deploy?" in str(stack.model.requests[0].body["messages"])


def test_an_agent_answers_in_a_channel_only_with_an_active_grant(stack: Stack) -> None:
    stack.say(SAM, OPS, "when do we deploy?", mention=True)
    stack.settle()
    assert stack.texts(OPS) == [
        "I can't answer here: agent ada has no active grant in this channel. An admin can add "
        f"one with `reverie grant ada --slack-channel {OPS}`."
    ]
    assert stack.model.requests == []


def test_p3_the_failure_notice_replaces_a_stale_answer(stack: Stack) -> None:
    release, slow = held("Built on the old memory.")
    stack.model.script.append(slow)
    stack.say(SAM, DM_SAM, "What do you know?")
    wait_for(lambda: len(stack.model.requests) == 1)
    # Memory moves while the model is answering.
    stack.say(SAM, DM_SAM, "!remember Deploys - Tuesdays")
    release.set()
    stack.settle()
    assert stack.texts(DM_SAM) == ["Saved to ada's memory: revision 1.", STALE_NOTICE]


def test_a_model_error_is_a_notice_posted_once(stack: Stack) -> None:
    stack.model.fail(500, "upstream exploded")
    body, _ = stack.say(SAM, DM_SAM, "hello?")
    stack.settle()
    stack.events.deliver(body, retry=1)
    stack.settle()
    said = stack.texts(DM_SAM)
    assert len(said) == 1 and said[0].startswith("I could not get an answer from the model")


def test_a_model_failure_is_said_without_its_details_which_go_to_the_log(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    """Whoever DMs the agent reads that the model could not be reached and to try later; the
    endpoint, the model and what its server said are for an admin, in the server log, and are
    neither posted nor kept in the outbox."""
    caplog.set_level(logging.WARNING)
    stack.model.fail(500, "upstream exploded at the gpu farm")
    body, _ = stack.say(SAM, DM_SAM, "hello?")
    stack.settle()
    said = stack.texts(DM_SAM)
    assert said == [
        "I could not get an answer from the model: it failed just now. Please try again in a "
        "little while; an admin finds the reason in the server log."
    ]
    conv = f"slack:{DM_SAM}:{body['event']['ts']}"
    kept = [d.text for t in stack.rv.turn_log(conv) for d in stack.rv.outbox.for_task(t.id)]
    for text in said + kept:
        assert "127.0.0.1" not in text and "gpt-test" not in text and "exploded" not in text
    assert "upstream exploded" in caplog.text and "gpt-test" in caplog.text


def test_t1_notify_goes_to_the_thread_through_the_outbox(stack: Stack) -> None:
    stack.model.answer(ToolUse([("notify", {"text": "Deploy started."})]))
    stack.model.answer("Done.")
    body, _ = stack.say(SAM, DM_SAM, "deploy please")
    stack.settle()
    posted = stack.slack.posted(DM_SAM)
    assert [m["text"] for m in posted] == ["Deploy started.", "Done."]
    assert {m["thread_ts"] for m in posted} == {body["event"]["ts"]}
    assert all(
        d.state == "delivered"
        for d in stack.rv.outbox.for_task(
            stack.rv.turn_log(f"slack:{DM_SAM}:{body['event']['ts']}")[0].id
        )
    )


def test_no_model_is_said_in_the_thread(stack_factory: Any) -> None:
    stack = stack_factory(model="")
    stack.say(SAM, DM_SAM, "hello?")
    stack.settle()
    said = stack.texts(DM_SAM)
    assert len(said) == 1 and said[0].startswith("I could not answer: No model is configured")


def test_app_home_shows_each_agent_its_memory_and_the_admin_page(stack: Stack) -> None:
    stack.rv.create_agent("bo")
    stack.say(SAM, DM_SAM, "!remember Deploys - Tuesdays")  # ada answers DMs? two agents now
    stack.settle()
    opened = stack.events.envelope(
        {
            "type": "app_home_opened",
            "user": SAM,
            "channel": DM_SAM,
            "tab": "home",
            "event_ts": "1.0",
        }
    )
    assert stack.events.deliver(opened)[0] == 200
    user, view = stack.slack.views[-1]
    assert user == SAM
    text = str(view["blocks"])
    assert "*ada*: no memory yet (revision 0), 0 granted channels" in text
    assert "*bo*: no memory yet (revision 0)" in text
    assert "<http://127.0.0.1:8765/admin/agents/ada|Open in the admin page>" in text
    assert "set REVERIE_SLACK_AGENT" in text


def test_app_home_links_where_token_link_does(stack: Stack) -> None:
    """15, C1: with no REVERIE_PUBLIC_URL, the App Home's and ``!forget``'s links point where
    ``reverie token link`` does: at the running ``reverie serve`` of the home (its note in
    ``server.json``), as under ``reverie slack --socket``, which serves no page itself."""
    from reverie.cli import main
    from reverie.store.tokens import forget_server, record_server

    with socket.socket() as listener:  # a server of the home, listening in this process
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        record_server(stack.rv.home, f"http://127.0.0.1:{port}", "127.0.0.1", port)
        try:
            opened = {"type": "app_home_opened", "user": SAM, "channel": DM_SAM, "tab": "home"}
            assert stack.events.deliver(stack.events.envelope(opened | {"event_ts": "1"}))[0] == 200
            text = str(stack.slack.views[-1][1]["blocks"])
            assert f"<http://127.0.0.1:{port}/admin/agents/ada|Open in the admin page>" in text
            stack.say(SAM, DM_SAM, "!forget memory")
            stack.settle()
            assert f"http://127.0.0.1:{port}/admin/agents/ada " in stack.texts(DM_SAM)[-1]
            stack.rv.add_member("olga", "owner")
            with contextlib.redirect_stdout(io.StringIO()) as out:
                code = main(["--home", str(stack.rv.home), "token", "link", "olga", "--json"])
            assert code == 0
            assert json.loads(out.getvalue())["link"].startswith(f"http://127.0.0.1:{port}/admin/")
        finally:
            forget_server(stack.rv.home)


def test_app_home_with_a_dm_agent(stack_factory: Any) -> None:
    stack = stack_factory(slack_agent="ada")
    stack.rv.create_agent("bo")
    stack.say(SAM, DM_SAM, "!remember Deploys - Tuesdays")
    stack.settle()
    opened = stack.events.envelope(
        {
            "type": "app_home_opened",
            "user": SAM,
            "channel": DM_SAM,
            "tab": "home",
            "event_ts": "1.0",
        }
    )
    stack.events.deliver(opened)
    text = str(stack.slack.views[-1][1]["blocks"])
    assert "*ada*: memory at revision 1, 0 granted channels, answers DMs" in text


def test_app_home_lists_each_agents_granted_channels(stack: Stack) -> None:
    """The README: App Home lists each agent's granted channels (Slack shows ``<#C...>`` as
    the channel's name); a revoked grant is not one."""
    for channel in (OPS, "C0DEV", "C0OLD"):
        stack.rv.ensure_channel(channel_ref(channel), "channel")
        stack.rv.grant("ada", channel_ref(channel))
    stack.rv.revoke("ada", channel_ref("C0OLD"))
    opened = stack.events.envelope(
        {"type": "app_home_opened", "user": SAM, "channel": DM_SAM, "tab": "home", "event_ts": "1"}
    )
    assert stack.events.deliver(opened)[0] == 200
    (section,) = [b for b in stack.slack.views[-1][1]["blocks"] if "*ada*" in str(b)]
    assert section["text"]["text"].split("\n")[:2] == [
        "*ada*: no memory yet (revision 0), 2 granted channels, answers DMs",
        f"Granted in <#C0DEV>, <#{OPS}>",
    ]


def test_secrets_stay_out_of_logs_and_reprs(stack: Stack, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    stack.model.answer("Hi.")
    stack.say(SAM, DM_SAM, "hello")
    stack.say(SAM, DM_SAM, "!remember Deploys - Tuesdays")
    stack.events.deliver(stack.events.message(SAM, DM_SAM, "x"), secret="wrong")
    stack.settle()
    assert BOT_TOKEN not in caplog.text and SIGNING_SECRET not in caplog.text
    assert BOT_TOKEN not in repr(stack.rv.settings)
    assert SIGNING_SECRET not in repr(stack.rv.settings)


def test_a_turn_cut_short_by_a_stop_is_answered_once_when_the_app_starts_again(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The stop falls after the message is recorded and Slack acknowledged, before the model ran
    # (Slack will not deliver the event again: it was acknowledged).
    monkeypatch.setattr(stack.surface, "_run_turn", lambda *args: None)
    body, status = stack.say(SAM, DM_SAM, "When do we deploy?")
    assert status == 200
    stack.settle()
    assert stack.texts() == []
    conv = f"slack:{DM_SAM}:{body['event']['ts']}"
    assert stack.rv.turn_log(conv) == []
    # Started again (a new surface on the same home, as a new process would be).
    stack.model.answer("On Tuesdays.")
    again = SlackSurface(stack.rv)
    try:
        assert again.resume() == 1
        assert again.wait_idle(timeout=60)
        again.worker.deliver_pending()
        answer = stack.slack.posted(DM_SAM)[-1]
        assert (answer["text"], answer["thread_ts"]) == ("On Tuesdays.", body["event"]["ts"])
        assert [t.outcome for t in stack.rv.turn_log(conv)] == ["delivered"]
        # Answered now: neither this start nor the next runs it again.
        assert again.resume() == 0
        assert SlackSurface(stack.rv).resume() == 0
    finally:
        again.stop()
    assert stack.texts() == ["On Tuesdays."]
    assert len(stack.model.requests) == 1


def test_a_turn_whose_worker_died_is_answered_by_the_poster_without_a_restart(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The posting process (the parent of `serve --workers N`) is up before the event comes, so
    # its look at start finds nothing: the answer can only come from its later looks.
    poster = SlackSurface(stack.rv, resume_every=0.2)
    poster.start()
    try:
        # The worker that took the event records it, then dies: its turn never runs, and the
        # kernel drops its turn lock (here: the lock let go, as a death would).
        monkeypatch.setattr(stack.surface, "_run_turn", lambda *args: args[-1].close())
        stack.model.answer("On Tuesdays.")
        body, status = stack.say(SAM, DM_SAM, "When do we deploy?")
        assert status == 200
        deadline = time.monotonic() + 30
        while not stack.slack.posted(DM_SAM) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert poster.wait_idle(timeout=60)
        time.sleep(0.6)  # three more looks: none runs it again
    finally:
        poster.stop()
    assert stack.texts(DM_SAM) == ["On Tuesdays."]
    assert len(stack.model.requests) == 1
    conv = f"slack:{DM_SAM}:{body['event']['ts']}"
    assert [t.outcome for t in stack.rv.turn_log(conv)] == ["delivered"]


def test_only_recent_turns_are_resumed_and_a_lost_grant_is_said(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack.rv.ensure_channel(channel_ref(OPS), "channel")
    stack.rv.grant("ada", channel_ref(OPS))
    monkeypatch.setattr(stack.surface, "_run_turn", lambda *args: None)
    stack.say(SAM, DM_SAM, "When do we deploy?")
    stack.say(SAM, OPS, "who is on call?", mention=True)
    stack.settle()
    # Older than the window: left unanswered rather than answered late.
    monkeypatch.setattr(slack_app, "RESUME_SECONDS", -60)
    assert SlackSurface(stack.rv).resume() == 0
    monkeypatch.undo()
    # The channel's grant was revoked while the app was down: the refusal, not an answer.
    stack.rv.revoke("ada", channel_ref(OPS))
    stack.model.answer("On Tuesdays.")
    again = SlackSurface(stack.rv)
    try:
        assert again.resume() == 1  # the DM
        assert again.wait_idle(timeout=60)
        again.worker.deliver_pending()
    finally:
        again.stop()
    assert stack.texts(DM_SAM) == ["On Tuesdays."]
    (refusal,) = stack.texts(OPS)
    assert refusal.startswith("I can't answer here: agent ada has no active grant")


def _signed(body: dict[str, Any], retry: int) -> tuple[bytes, dict[str, str]]:
    raw = json.dumps(body)
    now = int(time.time())
    return raw.encode(), {
        "content-type": "application/json",
        "x-slack-request-timestamp": str(now),
        "x-slack-signature": sign(SIGNING_SECRET, now, raw),
        "x-slack-retry-num": str(retry),
    }


def test_W7_a_retry_reaching_another_process_runs_the_turn_once(stack: Stack) -> None:
    """Under ``serve --workers N`` a retry can reach another process: it starts nothing while
    the first delivery's process holds the event's turn, and runs it once that process died
    (the kernel dropped its lock) without starting it."""
    other = SlackSurface(stack.rv, client=stack.surface.client)  # another worker's surface
    body = stack.events.message(SAM, DM_SAM, "When do we deploy?")
    try:
        with stack.surface._turn_lock(f"slack:{body['event_id']}") as held:
            assert held  # the first delivery's process: recorded, its turn not started yet
            raw, headers = _signed(body, 1)
            assert other.dispatch(raw, "", headers).status == 200
            assert other.wait_idle(timeout=30)
        assert stack.model.requests == [] and stack.rv.unanswered("slack:", 0) == []
        stack.model.answer("On Tuesdays.")
        raw, headers = _signed(body, 2)
        assert other.dispatch(raw, "", headers).status == 200
        assert other.wait_idle(timeout=30)
        raw, headers = _signed(body, 3)  # and once more, after the turn: nothing runs
        assert other.dispatch(raw, "", headers).status == 200
        assert other.wait_idle(timeout=30)
        other.worker.deliver_pending()
    finally:
        other.stop()
    assert stack.texts() == ["On Tuesdays."]
    assert len(stack.model.requests) == 1


def test_a_dm_agent_named_by_its_id_is_answered_for_by_name(stack_factory: Any) -> None:
    stack = stack_factory()
    ada = stack.rv.agent("ada")
    stack.rv.create_agent("bo")  # two agents: only the setting says who answers DMs
    stack.surface.settings = dataclasses.replace(stack.surface.settings, slack_agent=ada.id)
    stack.say(SAM, DM_SAM, "!remember Deploys - Tuesdays")
    stack.settle()
    assert stack.texts(DM_SAM) == ["Saved to ada's memory: revision 1."]
    assert "Deploys" in stack.rv.memory_read("ada").text


def test_starting_with_the_token_in_the_environment_logs_no_bolt_warning(
    stack_factory: Callable[..., Stack],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Set up as the README says (SLACK_BOT_TOKEN in the environment), bolt read the token too
    and warned on every start that it "will be unused": nothing a reader could act on."""
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-from-the-environment")
    with caplog.at_level(logging.WARNING):
        stack = stack_factory()
    assert stack.surface.app.client is stack.surface.client  # the client of the settings
    assert not [r for r in caplog.records if "will be unused" in r.getMessage()]


def test_w4_a_message_with_a_control_character_is_refused_in_its_thread(stack: Stack) -> None:
    """A message the conversation store refuses (a control character, W4) is acknowledged,
    never an error that Slack retries, and the refusal is posted in its thread once (W7):
    which character, and that nothing was kept."""
    body = stack.events.message(SAM, DM_SAM, "hi\x07 there")
    assert stack.events.deliver(body)[0] == 200
    assert stack.events.deliver(body, retry=1)[0] == 200
    stack.settle()
    posted = stack.slack.posted(DM_SAM)
    assert [m["text"] for m in posted] == [
        "Your message holds the control character U+0007, which is never kept (newline and "
        "tab are fine): remove it and send the message again. Nothing was kept."
    ]
    assert posted[0]["thread_ts"] == body["event"]["ts"]
    assert stack.model.requests == []
    conv = f"slack:{DM_SAM}:{body['event']['ts']}"
    assert stack.rv.context_read(None, conv).messages == []


def test_a_dm_agent_setting_that_names_no_agent_stops_the_app(
    stack_factory: Callable[..., Stack],
) -> None:
    """``REVERIE_SLACK_AGENT=nobody``: the app does not start (every DM would fail), and the
    refusal says what to set."""
    with pytest.raises(RefusedInput) as refused:
        stack_factory(slack_agent="nobody")
    assert refused.value.code == "invalid_setting"
    assert "REVERIE_SLACK_AGENT is 'nobody', and no agent has that name" in refused.value.message
    assert "(ada;" in refused.value.message


def test_w7_a_dm_that_no_agent_answers_is_told_so_once(stack: Stack) -> None:
    """Several agents and none set to answer DMs (or the one set deleted since the start): the
    DM is acknowledged and told who can change that, once however often Slack retries the
    event (W7)."""
    stack.rv.create_agent("bo")
    body = stack.events.message(SAM, DM_SAM, "!memory")
    assert stack.events.deliver(body)[0] == 200
    assert stack.events.deliver(body, retry=1)[0] == 200
    stack.surface.settings = dataclasses.replace(stack.surface.settings, slack_agent="gone")
    later, status = stack.say(SAM, DM_SAM, "hello?")
    assert status == 200
    stack.settle()
    posted = stack.slack.posted(DM_SAM)
    assert [m["text"] for m in posted] == [
        "No agent answers DMs here: there are several agents and none is set to answer "
        "DMs. An admin sets REVERIE_SLACK_AGENT to the agent that should answer. Nothing was "
        "kept.",
        "No agent answers DMs here: REVERIE_SLACK_AGENT names an agent that no longer "
        "exists. An admin sets REVERIE_SLACK_AGENT to the agent that should answer. Nothing "
        "was kept.",
    ]
    assert [m["thread_ts"] for m in posted] == [body["event"]["ts"], later["event"]["ts"]]
    assert stack.model.requests == []
