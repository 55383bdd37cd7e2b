"""What the lock of a Slack turn costs (issue 13, SPEC P3, W7), against a baseline tree.

On PostgreSQL a turn's event is held by a session advisory lock, on a connection each process
keeps for its turn locks (before: a file lock in the machine's temporary directory). Two
figures, for this tree and for ``--baseline SRC`` (another tree's ``src``: ``git archive
<commit> src | tar -x -C /tmp/base``), each arm in a child process of its own on a fresh
database, the arms alternated ``--rounds`` times:

1. **The lock alone**: ``SlackSurface._turn_lock(key)`` taken and released, for ``--locks``
   keys one after the other (what every turn event pays twice: once when it arrives, and the
   release when its turn ends).
2. **A DM turn**: a signed event handed to ``SlackSurface.dispatch`` (what ``POST
   /slack/events`` runs) until Slack's acknowledgement, then until its turn has ended (the local
   model server answers at once; the answer is queued, not posted): ``--turns`` turns, one after
   the other. The lock is held from before the message is recorded until the turn ends.

``--sqlite`` runs both arms on the embedded default instead. Databases are named
``reverie_turnlock_<pid>_<n>`` and dropped after each arm.

Run::

    python bench/turn_lock_bench.py --baseline /tmp/base/src [--rounds 3] [--locks 2000]
        [--turns 200] [--sqlite] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def child(locks: int, turns: int) -> dict[str, Any]:
    """One arm, in this process: the ``reverie`` on ``sys.path`` first is the tree measured."""
    import _common

    sys.path.insert(1, str(ROOT))  # tests.*: the local Slack and model servers
    import slack_bench
    from reverie.slack.app import SlackSurface
    from tests.slack.conftest import DM_SAM, SAM, SIGNING_SECRET
    from tests.slack.fake_slack_server import EventSender

    with slack_bench.stack() as (rv, slack, model, _):
        surface = SlackSurface(rv)
        sender = EventSender(slack, "http://unused", SIGNING_SECRET)

        def dispatch(body: dict[str, Any]) -> None:
            raw, headers = slack_bench.signed(body)
            assert surface.dispatch(raw, "", headers).status == 200

        # Warm up: the member lookups cached, the model client built, the connections open.
        for i in range(5):
            model.answer("Warm.")
            dispatch(sender.message(SAM, DM_SAM, f"Warm-up {i}?"))
            assert surface.wait_idle(timeout=60)
        lock_ns = []
        for i in range(locks):
            start = time.perf_counter_ns()
            with surface._turn_lock(f"slack:Lock{i:08d}") as held:
                assert held
            lock_ns.append(time.perf_counter_ns() - start)
        ack_ns, turn_ns = [], []
        conversations = []
        for i in range(turns):
            model.answer(f"Answer {i}.")
            body = sender.message(SAM, DM_SAM, f"Question {i}?")
            conversations.append(f"slack:{DM_SAM}:{body['event']['ts']}")
            start = time.perf_counter_ns()
            dispatch(body)
            ack_ns.append(time.perf_counter_ns() - start)
            assert surface.wait_idle(timeout=60)
            turn_ns.append(time.perf_counter_ns() - start)
        outcomes = [t.outcome for c in conversations for t in rv.turn_log(c)]
        surface.stop()
    assert outcomes == ["delivered"] * turns, outcomes
    return {
        "lock": _common.Stats.of_ns(lock_ns).to_dict(),
        "ack": _common.Stats.of_ns(ack_ns).to_dict(),
        "turn": _common.Stats.of_ns(turn_ns).to_dict(),
    }


def run_arm(src: Path, args: argparse.Namespace, n: int) -> dict[str, Any]:
    import _common

    env = {k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")}
    env["PYTHONPATH"] = str(src)
    command = [
        sys.executable,
        __file__,
        "--child",
        "--locks",
        str(args.locks),
        "--turns",
        str(args.turns),
    ]

    def launch() -> dict[str, Any]:
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=1800, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"the arm on {src} failed:\n{done.stderr}")
        return dict(json.loads(done.stdout))

    if args.sqlite:
        return launch()
    with _common.pg_scratch_database(f"reverie_turnlock_{os.getpid()}_{n}") as url:
        env["REVERIE_DATABASE_URL"] = url
        return launch()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", type=Path, help="another tree's src, measured beside")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--locks", type=int, default=2000)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--sqlite", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    if args.child:
        print(json.dumps(child(args.locks, args.turns)))
        return 0

    import _common

    arms = {"reverie": ROOT / "src"}
    if args.baseline is not None:
        arms["baseline"] = args.baseline.resolve()
    runs: list[dict[str, Any]] = []
    n = 0
    for round_ in range(args.rounds):
        for arm, src in arms.items():
            n += 1
            load = os.getloadavg()[0]
            at = time.strftime("%H:%M:%S", time.gmtime())
            _common.progress(f"round {round_ + 1}, {arm}: {at} UTC, load {load:.2f}")
            runs.append({"round": round_ + 1, "arm": arm, "at": at, "load": load})
            runs[-1] |= run_arm(src, args, n)
    rows = [
        [
            r["at"],
            r["arm"],
            f"{r['load']:.2f}",
            f"{r['lock']['p50'] * 1000:.0f}",
            f"{r['lock']['p95'] * 1000:.0f}",
            _common.ms(r["ack"]["p50"]),
            _common.ms(r["turn"]["p50"]),
            _common.ms(r["turn"]["p95"]),
        ]
        for r in runs
    ]
    table = _common.markdown_table(
        [
            "run (UTC)",
            "tree",
            "load",
            "lock p50 µs",
            "lock p95 µs",
            "ack p50 ms",
            "turn p50 ms",
            "turn p95 ms",
        ],
        rows,
    )
    ratios = ""
    if "baseline" in arms:
        lines = []
        for round_ in range(1, args.rounds + 1):
            ours, theirs = (
                next(r for r in runs if r["round"] == round_ and r["arm"] == a)
                for a in ("reverie", "baseline")
            )
            parts = [
                f"{what} p50 {_common.fmt_ratio(ours[what]['p50'], theirs[what]['p50'])}"
                for what in ("turn", "ack", "lock")
            ]
            lines.append(f"- round {round_}: " + ", ".join(parts))
        ratios = "\n\nreverie / baseline:\n" + "\n".join(lines)
    backend = "SQLite" if args.sqlite else _common.pg_version()
    payload = {"machine": _common.machine(), "backend": backend, "runs": runs}
    _common.emit(args.json, payload, f"Backend: {backend}\n\n{table}{ratios}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
