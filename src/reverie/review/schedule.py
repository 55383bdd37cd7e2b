"""When review runs (R1, R9, R10), and with which reviewer (R8).

Each agent is reviewed hourly at a minute derived from its id, so that agents spread over the
hour instead of all waking at once. An agent is *due* when it has not been reviewed since its
latest slot. ``reverie review run`` runs the due agents (or, with ``--now``, every agent it is
asked for); ``reverie serve`` checks every half minute.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import threading
import time
from typing import TYPE_CHECKING

from croniter import croniter

from reverie.errors import ReverieError, StorageFault
from reverie.store.reviews import ReviewLog

from .runner import AgentReport, Progress, ReviewLimits, review_agent, unstarted_report
from .types import Reviewer

if TYPE_CHECKING:
    from reverie.api import Reverie
    from reverie.store.state import Agent

__all__ = ["due", "reviewer_for", "run_review", "serve_forever", "slot_minute"]

_log = logging.getLogger(__name__)


def slot_minute(agent_id: str) -> int:
    """The minute of the hour at which this agent is reviewed (stable, from its id)."""
    return int(hashlib.sha256(agent_id.encode()).hexdigest(), 16) % 60


def due(agent_id: str, last_run: float | None, now: float) -> bool:
    """Whether the agent's latest hourly slot has passed since its last run."""
    if last_run is None:
        return True
    slot = croniter(f"{slot_minute(agent_id)} * * * *", now).get_prev(float)
    return last_run < slot


def reviewer_for(rv: Reverie, agent: Agent) -> Reviewer:
    """The agent's model if it has one, else the deployment's, else the offline reviewer."""
    model = agent.default_model or rv.settings.model
    if model:
        from .model import model_reviewer_from_settings

        reviewer = model_reviewer_from_settings(dataclasses.replace(rv.settings, model=model))
        if reviewer is not None:
            return reviewer
    from . import embeddings
    from .offline import OfflineReviewer

    return OfflineReviewer(embeddings.load(rv.settings.review_embeddings))


def run_review(
    rv: Reverie,
    agent: str | None = None,
    *,
    force: bool = False,
    now: float | None = None,
    limits: ReviewLimits | None = None,
    trigger: str = "manual",
    progress: Progress | None = None,
) -> list[AgentReport]:
    """Review one agent or all: the due ones, or every one with ``force`` (R9).

    Archived agents are not reviewed on schedule; naming one runs it.

    Raises:
        NotFound: ``agent`` does not exist.
    """
    clock = time.time() if now is None else now
    log = ReviewLog(rv.state)
    targets = [rv.agent(agent)] if agent else [a for a in rv.agents() if not a.archived]
    reports = []
    for a in targets:
        if not force and not due(a.id, log.last_run(a.id), clock):
            continue
        try:
            reviewer = reviewer_for(rv, a)
        except ReverieError as exc:
            if agent or isinstance(exc, StorageFault):
                raise
            # No reviewer (a model not installed, a bad setting): said where there is
            # something to review, with what stays pending; the other agents go on.
            error = {"code": exc.code, "message": exc.message}
            report = unstarted_report(rv, a, error, limits=limits, now=now)
            if report.error:
                _log.warning("review of %s failed: %s (%s)", a.name, exc.message, exc.code)
            reports.append(report)
            continue
        try:
            report = review_agent(
                rv, a.name, reviewer, limits=limits, now=now, trigger=trigger, progress=progress
            )
        except ReverieError as exc:
            if agent or isinstance(exc, StorageFault):  # asked for by name, or the home failed
                raise
            # One agent's refusal (an unwritable commit) stops its own run and is reported;
            # the other agents are still reviewed.
            _log.warning("review of %s failed: %s (%s)", a.name, exc.message, exc.code)
            error = {"code": exc.code, "message": exc.message}
            report = unstarted_report(rv, a, error, limits=limits, now=now)
            report.error = error
        reports.append(report)
    return reports


def serve_forever(rv: Reverie, stop: threading.Event, tick: float = 30.0) -> None:
    """Run due reviews until ``stop`` is set (the scheduler of ``reverie serve``)."""
    while not stop.is_set():
        try:
            run_review(rv, trigger="schedule")
        except Exception:  # the scheduler outlives any one tick: the next one tries again
            _log.exception("a scheduled review failed; trying again in %g s", tick)
        stop.wait(tick)
