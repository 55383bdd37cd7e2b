"""The Slack app's throughput and latency (SPEC C1-C3, W7, P3), against local servers.

Three questions, on one data directory, with the app built as ``reverie serve`` builds it
(:class:`reverie.slack.app.SlackSurface`) and Slack's Web API played by the local server of the
tests (``tests/slack/fake_slack_server.py``, reached by the real ``slack_sdk`` client):

1. **Command events per second** through the whole handling of a ``!remember`` event: bolt's
   signature check, the event's mapping to a channel and a thread's conversation, the member
   lookups (cached, as in a live workspace after the first event), the C2 checks, the
   idempotent write (one git commit each) and its answer queued in the outbox. Measured in
   process (``SlackSurface.dispatch``, what ``POST /slack/events`` runs), one event after the
   other, and again over HTTP with 4 senders at once (uvicorn, as under ``reverie serve``):
   first with the senders as threads of this process (sharing its interpreter lock with the
   server), then from a process of their own, as Slack's deliveries come from elsewhere. Both
   HTTP runs start from the same memory, and count the events that saved a revision. Then two
   more runs from another process, from a one-line ``MEMORY.md`` and from one of 400 sections:
   ``!remember`` reads all of it, so its cost grows with it.
   Then every event is delivered again as Slack's retry: the key answers, nothing is written.
2. **Event to posted reply**: a DM answered by the local model server (the real ``openai``
   client), from the moment the signed event is sent until the answer is in Slack (the
   delivery worker running, woken when the turn ends).
3. **Acknowledgement while the model is slow**: the model takes ``--slow`` seconds (5) per
   answer; how long Slack waits for its HTTP answer, and when the reply lands.

Target: at least 200 command events/s; the acknowledgement within Slack's 3 s whatever the
model does.

Run::

    python bench/slack_bench.py [--events 600] [--turns 50] [--slow 5] [--json]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import _common

sys.path.insert(0, str(_common.ROOT))  # tests.*: the local Slack and model servers

from reverie import Reverie
from reverie.slack.app import SlackSurface
from reverie.slack.http import EventsEndpoint
from tests.llm.fake_openai_server import FakeOpenAI, Received, Scripted
from tests.slack.conftest import (
    BOT_TOKEN,
    DM_SAM,
    SAM,
    SIGNING_SECRET,
    serve,
    settings_for,
    workspace,
)
from tests.slack.fake_slack_server import EventSender, FakeSlack, signed_headers


@contextmanager
def stack() -> Iterator[tuple[Reverie, FakeSlack, FakeOpenAI, Path]]:
    """A home with the agent ``ada``, the local Slack (its workspace: Sam, the DM) and the
    local model server, as every Slack bench starts; the home is closed and removed after."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeSlack(bot_token=BOT_TOKEN) as slack,
        FakeOpenAI(api_key="sk-local") as model,
    ):
        workspace(slack)
        home = Path(tmp) / "home"
        rv = Reverie(home, create=True, settings=settings_for(home, slack, model))
        rv.create_agent("ada")
        try:
            yield rv, slack, model, home
        finally:
            rv.close()


def signed(body: dict[str, Any], retry: int = 0) -> tuple[bytes, dict[str, str]]:
    raw = json.dumps(body)
    return raw.encode(), signed_headers(SIGNING_SECRET, raw, retry=retry)


def timed(surface: SlackSurface, bodies: list[dict[str, Any]], retry: int = 0) -> _common.Stats:
    samples: list[int] = []
    for body in bodies:
        raw, headers = signed(body, retry)
        start = time.perf_counter_ns()
        answer = surface.dispatch(raw, "", headers)
        samples.append(time.perf_counter_ns() - start)
        assert answer.status == 200, answer
    return _common.Stats.of_ns(samples)


def command_events(surface: SlackSurface, sender: EventSender, n: int) -> dict[str, Any]:
    raw, headers = signed(sender.message(SAM, DM_SAM, "!memory"))
    surface.dispatch(raw, "", headers)  # the member and channel lookups, cached from here on
    # A write of the same size each time (one commit each), then Slack's retry of each.
    updates = [
        sender.message(SAM, DM_SAM, f"!memory update memory - # Memory {i}\n- fact {i}")
        for i in range(n)
    ]
    fresh = timed(surface, updates)
    retried = timed(surface, updates, retry=1)
    # !remember appends a section each time: the memory grows (n / 3 of them).
    remember = timed(
        surface,
        [sender.message(SAM, DM_SAM, f"!remember Note {i} - fact {i}") for i in range(n // 3)],
    )
    status = timed(surface, [sender.message(SAM, DM_SAM, "!memory") for _ in range(n)])
    return {"fresh": fresh, "retried": retried, "remember": remember, "status": status}


def over_http(
    rv: Reverie, sender: EventSender, n: int, senders: int = 4, *, elsewhere: bool = False
) -> dict[str, Any]:
    """``n`` new ``!remember`` events posted by ``senders`` at once; ``elsewhere`` sends them
    from a child process. Counts the revisions saved (one per event unless some answered
    that memory kept changing) and this process's CPU time per event."""
    label = "Away" if elsewhere else "Http"
    bodies = [sender.message(SAM, DM_SAM, f"!remember {label} {i} - fact {i}") for i in range(n)]
    before = rv.memory_read("ada").revision
    cpu = time.process_time()
    if elsewhere:
        elapsed, statuses = send_from_child(sender.url, bodies, senders)
    else:
        start = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(senders) as pool:
            statuses = list(pool.map(lambda b: sender.deliver(b)[0], bodies))
        elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    assert statuses == [200] * n, statuses
    return {
        "events": n,
        "senders": senders,
        "senders_elsewhere": elsewhere,
        "saved": rv.memory_read("ada").revision - before,
        "seconds": elapsed,
        "per_second": n / elapsed,
        "process_cpu_ms_per_event": cpu * 1000 / n,
    }


#: The memories of the two runs by size: a one-line MEMORY.md and one of 400 sections.
SIZES = {
    "a one-line MEMORY.md": "# Memory\n\n- one fact\n",
    "400 sections": "# Memory\n\n" + "".join(f"## Note {i}\n\nfact {i}\n\n" for i in range(400)),
}


def send_from_child(
    url: str, bodies: list[dict[str, Any]], senders: int
) -> tuple[float, list[int]]:
    """Post ``bodies`` from a child process (``--send``); its clock starts once it has them."""
    done = subprocess.run(
        [sys.executable, __file__, "--send", url, str(senders)],
        input=json.dumps(bodies),
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    answer = json.loads(done.stdout)
    return float(answer["seconds"]), [int(s) for s in answer["statuses"]]


def send(url: str, senders: int) -> int:
    """The child of :func:`send_from_child`: the events from standard input, each signed as it
    is sent and posted on a new connection (as ``EventSender.deliver`` does), ``senders`` at
    once; prints the seconds taken and the statuses."""
    bodies = json.load(sys.stdin)

    def post(body: dict[str, Any]) -> int:
        raw, headers = signed(body)
        request = urllib.request.Request(url, raw, headers, method="POST")
        with urllib.request.urlopen(request, timeout=60) as answer:
            answer.read()
            return int(answer.status)

    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(senders) as pool:
        statuses = list(pool.map(post, bodies))
    print(json.dumps({"seconds": time.perf_counter() - start, "statuses": statuses}))
    return 0


def wait_posted(slack: FakeSlack, count: int, timeout: float = 120) -> float:
    deadline = time.perf_counter() + timeout
    while len(slack.posted(DM_SAM)) < count:
        if time.perf_counter() > deadline:
            raise RuntimeError("the reply never came")
        time.sleep(0.0005)
    return time.perf_counter()


def replies(slack: FakeSlack, model: FakeOpenAI, sender: EventSender, turns: int) -> _common.Stats:
    samples: list[int] = []
    for i in range(turns):
        model.answer(f"Answer {i}.")
        body = sender.message(SAM, DM_SAM, f"Question {i}?")
        before = len(slack.posted(DM_SAM))
        start = time.perf_counter()
        status, _ = sender.deliver(body)
        assert status == 200
        end = wait_posted(slack, before + 1)
        samples.append(int((end - start) * 1e9))
    return _common.Stats.of_ns(samples)


def slow_model(
    slack: FakeSlack, model: FakeOpenAI, sender: EventSender, seconds: float, turns: int
) -> dict[str, Any]:
    def slow(request: Received) -> Scripted:
        time.sleep(seconds)
        return Scripted("Slowly.")

    acks: list[int] = []
    done: list[int] = []
    before = len(slack.posted(DM_SAM))
    starts = []
    for i in range(turns):
        model.script.append(slow)
        body = sender.message(SAM, DM_SAM, f"Slow question {i}?")
        start = time.perf_counter()
        starts.append(start)
        status, _ = sender.deliver(body)
        acks.append(int((time.perf_counter() - start) * 1e9))
        assert status == 200
    for i, start in enumerate(starts):
        end = wait_posted(slack, before + i + 1)
        done.append(int((end - start) * 1e9))
    return {"ack": _common.Stats.of_ns(acks), "reply": _common.Stats.of_ns(done)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=600)
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--slow", type=float, default=5.0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--send", nargs=2, metavar=("URL", "SENDERS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.send:
        return send(args.send[0], int(args.send[1]))

    with stack() as (rv, slack, model, _):
        surface = SlackSurface(rv)
        gen = serve(EventsEndpoint(surface))
        url = next(gen)
        sender = EventSender(slack, url, SIGNING_SECRET)
        _common.progress(f"command events: {args.events} in process, then retried")
        commands = command_events(surface, sender, args.events)
        revision = rv.memory_read("ada").revision
        queued = len(rv.outbox.pending(limit=10 * args.events))
        _common.progress(f"command events over HTTP: {args.events // 2}, senders in process")
        start_text = rv.memory_read("ada").text
        http = over_http(rv, sender, args.events // 2)
        # The same memory again for the second run (an untimed write).
        rv.memory_apply("ada", {"action": "set_body", "text": start_text})
        _common.progress(f"command events over HTTP: {args.events // 2}, senders elsewhere")
        away = over_http(rv, sender, args.events // 2, elsewhere=True)
        by_size: dict[str, dict[str, Any]] = {}
        for label, body in SIZES.items():
            _common.progress(f"command events over HTTP: {args.events // 3}, from {label}")
            rv.memory_apply("ada", {"action": "set_body", "text": body})
            by_size[label] = over_http(rv, sender, args.events // 3, elsewhere=True)
        surface.worker.deliver_pending()  # every answer so far, before the clock starts
        surface.start()
        _common.progress(f"event to posted reply: {args.turns} turns")
        latency = replies(slack, model, sender, args.turns)
        _common.progress(f"slow model ({args.slow} s): 3 turns at once")
        slow = slow_model(slack, model, sender, args.slow, 3)
        surface.stop()
        next(gen, None)
    # The retries wrote nothing and queued no second answer.
    expected = 1 + args.events + args.events // 3 + args.events
    assert revision == args.events + args.events // 3 and queued == expected, (revision, queued)

    machine = _common.machine(Path(tempfile.gettempdir()))
    payload = {
        "machine": machine,
        "commands_in_process": {k: v.to_dict() for k, v in commands.items()},
        "commands_over_http": http,
        "commands_over_http_senders_elsewhere": away,
        "commands_over_http_by_memory_size": by_size,
        "reply_latency": latency.to_dict(),
        "slow_model": {k: v.to_dict() for k, v in slow.items()},
        "slow_seconds": args.slow,
    }
    fresh, retried, status = commands["fresh"], commands["retried"], commands["status"]
    remember = commands["remember"]
    table = _common.markdown_table(
        ["what", "n", "p50 ms", "p95 ms", "max ms", "per second"],
        [
            [
                "`!memory update memory`, new (one commit each)",
                fresh.n,
                _common.ms(fresh.p50),
                _common.ms(fresh.p95),
                _common.ms(fresh.max),
                f"{fresh.per_second:.0f}",
            ],
            [
                "the same events again as Slack's retries",
                retried.n,
                _common.ms(retried.p50),
                _common.ms(retried.p95),
                _common.ms(retried.max),
                f"{retried.per_second:.0f}",
            ],
            [
                "`!remember`, memory growing a section each",
                remember.n,
                _common.ms(remember.p50),
                _common.ms(remember.p95),
                _common.ms(remember.max),
                f"{remember.per_second:.0f}",
            ],
            [
                "`!memory` (a read: no write)",
                status.n,
                _common.ms(status.p50),
                _common.ms(status.p95),
                _common.ms(status.max),
                f"{status.per_second:.0f}",
            ],
            [
                f"`!remember` over HTTP, {http['senders']} senders in this process "
                f"({http['saved']} saved)",
                http["events"],
                "",
                "",
                "",
                f"{http['per_second']:.0f}",
            ],
            [
                f"`!remember` over HTTP, {away['senders']} senders in another process "
                f"({away['saved']} saved; server CPU {away['process_cpu_ms_per_event']:.2f} "
                "ms/event)",
                away["events"],
                "",
                "",
                "",
                f"{away['per_second']:.0f}",
            ],
            *(
                [
                    f"`!remember` over HTTP from another process, from {label} "
                    f"({r['saved']} saved; server CPU "
                    f"{r['process_cpu_ms_per_event']:.2f} ms/event)",
                    r["events"],
                    "",
                    "",
                    "",
                    f"{r['per_second']:.0f}",
                ]
                for label, r in by_size.items()
            ),
            [
                "event to posted reply (local model)",
                latency.n,
                _common.ms(latency.p50),
                _common.ms(latency.p95),
                _common.ms(latency.max),
                "",
            ],
            [
                f"acknowledgement, model takes {args.slow:g} s",
                slow["ack"].n,
                _common.ms(slow["ack"].p50),
                _common.ms(slow["ack"].p95),
                _common.ms(slow["ack"].max),
                "",
            ],
            [
                f"reply, model takes {args.slow:g} s",
                slow["reply"].n,
                _common.ms(slow["reply"].p50),
                _common.ms(slow["reply"].p95),
                _common.ms(slow["reply"].max),
                "",
            ],
        ],
    )
    _common.emit(args.json, payload, _common.machine_markdown(machine) + "\n\n" + table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
