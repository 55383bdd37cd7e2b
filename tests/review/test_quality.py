"""The review quality suite (R6, R7, R8): scenarios reviewed end to end with the real store.

Each scenario is asserted on behaviour: its required facts are there once and under the right
section; outdated facts were replaced or removed; nothing transient, no question, no secret (in
the files or anywhere in git history), no rule of behaviour, no tool output; every entry review
wrote cites a range of the turns it was given, and that message says what the entry says;
``MEMORY.md`` stays within its cap with detail in linked topic files; and reviewing again with
nothing new proposes no operation and calls no model. ``bench/review_quality.py`` prints the
suite's precision and recall.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reverie.review.types import ReviewInput, ReviewOutput
from tests.review.scenarios import SCENARIOS, Outcome, Scenario, run_scenario, totals


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_scenario(scenario: Scenario, tmp_path: Path) -> None:
    outcome = run_scenario(scenario, tmp_path / "home")
    assert outcome.violations == [], "\n".join(outcome.violations)
    assert outcome.model_calls == 0


def test_suite_has_the_scenarios_the_brief_asks_for() -> None:
    names = {s.name for s in SCENARIOS}
    assert len(SCENARIOS) >= 12
    assert {
        "preferences",
        "update-replaces",
        "removal",
        "decisions",
        "environment",
        "project-state",
        "assistant-lesson",
        "transient-chatter",
        "questions",
        "pasted-secret",
        "behavioural-rules",
        "overflow",
        "duplicates",
    } <= names


class _Forgetful:
    """A reviewer that writes every user message verbatim: the suite must catch it."""

    def review(self, batch: ReviewInput) -> ReviewOutput:
        ops = [
            {
                "action": "add",
                "text": f"{t.text.splitlines()[0][:200]} (source: {t.conversation_id}#"
                f"{t.position}-{t.position + 1})",
            }
            for t in batch.turns
            if t.role == "user" and t.text.strip()
        ]
        return ReviewOutput(operations=ops, message="verbatim")


@pytest.mark.parametrize(
    "name", ["transient-chatter", "questions", "behavioural-rules", "duplicates"]
)
def test_the_suite_can_fail(name: str, tmp_path: Path) -> None:
    # The same checks on a careless reviewer find what it did wrong.
    scenario = next(s for s in SCENARIOS if s.name == name)
    outcome = run_scenario(scenario, tmp_path / "home", reviewer=_Forgetful())
    assert outcome.violations


def test_totals_count_precision_and_recall(tmp_path: Path) -> None:
    outcomes: list[Outcome] = [
        run_scenario(s, tmp_path / s.name) for s in SCENARIOS if s.name in {"decisions", "removal"}
    ]
    figures = totals(outcomes)
    assert figures["facts"] == sum(len(o.scenario.keep) for o in outcomes)
    assert 0.0 <= figures["precision"] <= 1.0
    assert 0.0 <= figures["recall"] <= 1.0
    assert figures["required_recall"] == 1.0
