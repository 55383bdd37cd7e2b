"""The outbox posted to Slack exactly once (SPEC T1, P3): two workers at once, a worker killed
between Slack's post and the mark, and Slack's refusals."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

from slack_sdk import WebClient

from reverie.slack.delivery import METADATA_TYPE, DeliveryWorker, WakeSender
from tests.slack.conftest import BOT_TOKEN, DM_SAM, OPS, SAM, Stack

CHILD = """
import sys
from reverie import Reverie
from reverie.config import Settings
from reverie.slack.client import web_client
from slack_sdk import WebClient

from reverie.slack.delivery import DeliveryWorker

home, api = sys.argv[1], sys.argv[2]
rv = Reverie(home, settings=Settings.load(home, slack_api_url=api))
DeliveryWorker(rv, web_client(rv.settings), lease_seconds=1).deliver_pending()
raise SystemExit("the post was answered: the test meant to kill this worker before that")
"""


def wait_for(condition: object) -> None:
    deadline = time.monotonic() + 30
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition never held"
        time.sleep(0.01)


def queued(stack: Stack, n: int) -> list[str]:
    """``n`` command answers waiting in the outbox (the surface's worker is not running)."""
    for i in range(n):
        stack.say(SAM, DM_SAM, f"!remember Note {i} - text {i}")
    pending = stack.rv.pending_deliveries()
    assert len(pending) == n
    return [d.id for d in pending]


def test_each_post_carries_its_delivery_id_and_its_receipt_is_the_ts(stack: Stack) -> None:
    [delivery] = queued(stack, 1)
    assert stack.surface.worker.deliver_pending() == 1
    [posted] = stack.slack.posted()
    assert posted["metadata"] == {
        "event_type": METADATA_TYPE,
        "event_payload": {"delivery": delivery},
    }
    done = stack.rv.outbox.get(delivery)
    assert (done.state, done.receipt, done.attempts) == ("delivered", posted["ts"], 1)


def test_two_workers_at_once_post_each_delivery_once(stack: Stack) -> None:
    ids = queued(stack, 12)
    workers = [DeliveryWorker(stack.rv, stack.surface.client) for _ in range(3)]
    threads = [threading.Thread(target=w.deliver_pending) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    delivered = [m["metadata"]["event_payload"]["delivery"] for m in stack.slack.posted()]
    assert sorted(delivered) == sorted(ids)
    # (Several workers keep no order between them; one worker posts in order.)
    assert sorted(stack.texts()) == sorted(
        f"Saved to ada's memory: revision {i + 1}." for i in range(12)
    )


def test_a_worker_killed_between_the_post_and_the_mark_posts_nothing_twice(
    stack: Stack,
) -> None:
    [delivery] = queued(stack, 1)
    # Slack takes the post, then the answer is held: the worker is killed waiting for it.
    hold = threading.Event()
    stack.slack.hold["chat.postMessage"] = hold
    env = {**os.environ, "SLACK_BOT_TOKEN": BOT_TOKEN}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(stack.rv.home), stack.slack.api_url], env=env
    )
    try:
        wait_for(lambda: len(stack.slack.posted()) == 1 or child.poll() is not None)
        assert child.poll() is None, "the worker ended before it was killed"
        child.kill()
        child.wait()
    finally:
        del stack.slack.hold["chat.postMessage"]
        hold.set()
    claimed = stack.rv.outbox.get(delivery)
    assert (claimed.state, claimed.attempts) == ("sending", 1)
    # After a restart, once the dead worker's lease ran out, the delivery is taken again: the
    # message is found in the thread by its delivery id and not posted again.
    time.sleep(1.2)
    assert stack.surface.worker.deliver_pending() == 1
    [posted] = stack.slack.posted()
    done = stack.rv.outbox.get(delivery)
    assert (done.state, done.receipt, done.attempts) == ("delivered", posted["ts"], 2)
    assert stack.slack.calls["conversations.replies"] == 1
    assert stack.slack.calls["chat.postMessage"] == 1


def test_a_rate_limited_post_waits_for_its_lease_then_goes_once(stack: Stack) -> None:
    [delivery] = queued(stack, 1)
    stack.slack.refuse["chat.postMessage"] = ["ratelimited"]
    # A client without the SDK's own retries: the 429 reaches the worker.
    client = WebClient(token=BOT_TOKEN, base_url=stack.slack.api_url)
    worker = DeliveryWorker(stack.rv, client, lease_seconds=2)
    assert worker.deliver_pending() == 0
    assert stack.rv.outbox.get(delivery).state == "sending"
    assert worker.deliver_pending() == 0  # still leased: not tried again yet
    time.sleep(2.1)
    assert worker.deliver_pending() == 1
    assert len(stack.slack.posted()) == 1
    assert stack.rv.outbox.get(delivery).attempts == 2


def test_a_rate_limited_answer_holds_back_the_later_ones_of_its_thread(stack: Stack) -> None:
    root, _ = stack.say(SAM, DM_SAM, "!remember Note 0 - text 0")
    ts = root["event"]["ts"]
    for i in (1, 2):
        stack.say(SAM, DM_SAM, f"!remember Note {i} - text {i}", thread_ts=ts)
    stack.say(SAM, DM_SAM, "!remember Other - another thread")
    stack.slack.refuse["chat.postMessage"] = ["ratelimited"]  # the first post only
    client = WebClient(token=BOT_TOKEN, base_url=stack.slack.api_url)
    worker = DeliveryWorker(stack.rv, client, lease_seconds=1)
    assert worker.deliver_pending() == 1  # only the other thread's answer
    assert stack.texts() == ["Saved to ada's memory: revision 4."]
    time.sleep(1.1)
    assert worker.deliver_pending() == 3
    assert stack.texts()[1:] == [f"Saved to ada's memory: revision {i}." for i in (1, 2, 3)]


def test_a_final_refusal_is_recorded_and_not_tried_again(stack: Stack) -> None:
    stack.rv.ensure_channel(f"slack:{OPS}", "channel")
    stack.rv.grant("ada", f"slack:{OPS}")
    stack.slack.channels[OPS].members.discard(stack.slack.bot_user)  # the bot was removed
    stack.say(SAM, OPS, "!remember Deploys - Tuesdays")
    [pending] = stack.rv.pending_deliveries()
    assert stack.surface.worker.deliver_pending() == 1
    assert stack.rv.outbox.get(pending.id).receipt == "error:not_in_channel"
    assert stack.rv.pending_deliveries() == []


def test_a_worker_process_wakes_the_poster_of_another(stack: Stack) -> None:
    """Under ``serve --workers N`` the answers are queued by the workers and posted by the
    parent: a datagram to the poster's port has it post now, not at its next poll."""
    poster = DeliveryWorker(stack.rv, stack.surface.client, poll_seconds=600)
    passes: list[int] = []
    deliver = poster.deliver_pending

    def counted() -> int:
        passes.append(deliver())
        return passes[-1]

    poster.deliver_pending = counted  # type: ignore[method-assign]
    port = poster.listen()
    poster.start()
    try:
        wait_for(lambda: passes == [0])  # its first pass found nothing; the next is 600 s away
        [delivery] = queued(stack, 1)
        WakeSender(port).wake()
        wait_for(lambda: stack.rv.outbox.get(delivery).state == "delivered")
        assert len(passes) == 2 and len(stack.slack.posted()) == 1
    finally:
        poster.stop()
