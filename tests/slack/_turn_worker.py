"""Another Slack worker process, for the tests of turns across processes.

``_turn_worker.py HOME`` opens ``Reverie(HOME)`` (the backend, Slack's and the model's
settings from the environment, as a worker of ``reverie serve --workers N`` has them), builds
a :class:`SlackSurface`, prints ``ready``, then reads one request of Slack's Events API from
stdin (a JSON line: ``{"body": ..., "headers": {...}}``), hands it to the surface as
``POST /slack/events`` would, and prints the HTTP status. The event's turn runs on the
surface's turn workers; when it has ended the process prints ``idle`` and waits for stdin to
close (or to be killed).
"""

from __future__ import annotations

import json
import sys


def main(home: str) -> None:
    from reverie import Reverie
    from reverie.slack.app import SlackSurface

    rv = Reverie(home)
    surface = SlackSurface(rv)
    print("ready", flush=True)
    request = json.loads(sys.stdin.readline())
    answer = surface.dispatch(request["body"].encode(), "", request["headers"])
    print(answer.status, flush=True)
    surface.wait_idle()
    print("idle", flush=True)
    sys.stdin.read()
    rv.close()


if __name__ == "__main__":
    main(sys.argv[1])
