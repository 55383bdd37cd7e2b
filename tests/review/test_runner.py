"""Review runs (R1-R10) end to end: real SQLite, real git, the real store pipeline."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from reverie import Reverie
from reverie.core.markdown import STANDARD_SECTIONS
from reverie.errors import NotFound, ReverieError
from reverie.review.offline import topic_slug
from reverie.review.runner import ReviewLimits, review_agent
from reverie.review.schedule import due, reviewer_for, run_review, slot_minute
from reverie.review.types import ReviewInput, ReviewOutput, format_source, parse_sources
from reverie.store.reviews import ReviewLog
from tests.conftest import fake

HOUR = 3600.0
NOW = 1_800_000_000.0  # a fixed clock: 2027-01-15


class Recorder:
    """A reviewer that records what it was given and answers with scripted operations."""

    def __init__(self, answer: Any = None) -> None:
        self.inputs: list[ReviewInput] = []
        self.answer = answer

    def review(self, batch: ReviewInput) -> ReviewOutput:
        self.inputs.append(batch)
        ops = self.answer(batch) if callable(self.answer) else []
        return ReviewOutput(
            operations=ops, message="Scripted review", model_calls=1, tokens_in=100, tokens_out=10
        )


def first_turn_fact(batch: ReviewInput) -> list[dict[str, Any]]:
    """One entry per conversation of the batch: its first turn, with its source."""
    firsts = {t.conversation_id: t for t in reversed(batch.turns)}
    return [
        {
            "action": "add",
            "section": "Decisions",
            "text": f"{t.text} {format_source(t.conversation_id, t.position, t.position + 1)}",
        }
        for t in sorted(firsts.values(), key=lambda t: t.conversation_id)
    ]


def talk(
    rv: Reverie,
    conv: str,
    lines: list[tuple[str, str]],
    *,
    agent: str = "ada",
    kind: str = "dm",
    at: float = NOW - 2 * HOUR,
    close: bool = False,
) -> None:
    rv.ensure_channel(f"ch-{conv}", kind)
    rv.create_conversation(agent, f"ch-{conv}", conversation_id=conv, now=at)
    for i, (role, text) in enumerate(lines):
        rv.append_message(conv, role, text, author="sam" if role == "user" else None, time=at + i)
    if close:
        rv.close_conversation(conv)


def test_r1_slot_minute_is_stable_and_due_hourly() -> None:
    m = slot_minute("ag_123")
    assert m == slot_minute("ag_123") and 0 <= m < 60
    assert len({slot_minute(f"ag_{i}") for i in range(200)}) > 40  # spread over the hour
    slot = NOW - NOW % HOUR + m * 60
    slot = slot if slot <= NOW else slot - HOUR
    assert due("ag_123", None, NOW)
    assert due("ag_123", slot - 1, NOW)
    assert not due("ag_123", slot + 1, NOW)


def test_r1_only_completed_ranges_of_memory_on_conversations(rv: Reverie) -> None:
    talk(rv, "idle", [("user", "We decided to use Postgres")], at=NOW - 2 * HOUR)
    talk(rv, "fresh", [("user", "We decided to use Redis")], at=NOW - 60)
    talk(rv, "closed", [("user", "We decided to use Kafka")], at=NOW - 60, close=True)
    talk(rv, "grp", [("user", "We decided to use MySQL")], kind="group", at=NOW - 2 * HOUR)
    rec = Recorder(first_turn_fact)
    report = review_agent(rv, "ada", rec, now=NOW)
    seen = {t.conversation_id for b in rec.inputs for t in b.turns}
    assert seen == {"idle", "closed"}
    assert report.commits == 1
    text = rv.memory_read("ada").text
    assert "Postgres" in text and "Kafka" in text
    assert "Redis" not in text and "MySQL" not in text


def test_r2_nothing_to_review_makes_no_model_call_and_no_commit(rv: Reverie) -> None:
    rec = Recorder(first_turn_fact)
    report = review_agent(rv, "ada", rec, now=NOW)
    assert rec.inputs == [] and report.model_calls == 0 and report.commits == 0
    talk(rv, "c1", [("user", "We decided to ship on Monday")])
    review_agent(rv, "ada", rec, now=NOW)
    calls, revision = len(rec.inputs), rv.memory_read("ada").revision
    again = review_agent(rv, "ada", rec, now=NOW)  # a second run with nothing new
    assert len(rec.inputs) == calls and again.model_calls == 0 and again.batches == 0
    assert rv.memory_read("ada").revision == revision


def test_r3_at_most_max_batches_per_run_the_rest_waits(rv: Reverie) -> None:
    for i in range(5):
        talk(rv, f"c{i}", [("user", f"We decided item {i} " + "x" * 50)])
    rec = Recorder(first_turn_fact)
    limits = ReviewLimits(max_batches=2, batch_chars=60)
    first = review_agent(rv, "ada", rec, now=NOW, limits=limits)
    assert (first.batches, first.pending) == (2, 3)
    second = review_agent(rv, "ada", rec, now=NOW, limits=limits)
    third = review_agent(rv, "ada", rec, now=NOW, limits=limits)
    assert (second.batches, third.batches, third.pending) == (2, 1, 0)
    reviewed = sorted(t.conversation_id for b in rec.inputs for t in b.turns)
    assert reviewed == [f"c{i}" for i in range(5)]  # each range once


def test_r3_time_limit_stops_the_run(rv: Reverie) -> None:
    for i in range(3):
        talk(rv, f"c{i}", [("user", f"We decided item {i}")])
    report = review_agent(
        rv, "ada", Recorder(), now=NOW, limits=ReviewLimits(max_seconds=0, batch_chars=10)
    )
    assert report.batches == 0 and report.pending == 3


@pytest.mark.sqlite_only
def test_r4_uncommitted_changes_are_discarded_before_a_batch(rv: Reverie) -> None:
    talk(rv, "c1", [("user", "We decided to use Postgres")])
    repo = rv.home / "memories" / rv.state.memory_of(rv.agent("ada").id)
    (repo / "MEMORY.md").write_text("garbage written by hand\n")
    review_agent(rv, "ada", Recorder(first_turn_fact), now=NOW)
    on_disk = (repo / "MEMORY.md").read_text()
    assert "garbage" not in on_disk and "Postgres" in on_disk
    assert on_disk == rv.memory_read("ada").text


def test_r5_tool_output_never_reaches_the_reviewer(rv: Reverie) -> None:
    talk(
        rv,
        "c1",
        [
            ("user", "Check the disk"),
            ("tool", "Filesystem 93% /dev/sda1"),
            ("assistant", "The disk is nearly full"),
        ],
    )
    rec = Recorder()
    review_agent(rv, "ada", rec, now=NOW)
    texts = [t.text for b in rec.inputs for t in b.turns]
    assert texts == ["Check the disk", "The disk is nearly full"]
    assert [t.position for b in rec.inputs for t in b.turns] == [0, 2]


def test_r6_r7_refused_content_is_dropped_not_sinking_the_batch(rv: Reverie) -> None:
    talk(rv, "c1", [("user", "We use GitHub Actions"), ("user", "deploys are on Tuesday")])
    token = fake("gh", "p_", "R8fQ2mZk7LwX4pVn9TbY3cHs6JdG1aEuKo5i")

    def answer(batch: ReviewInput) -> list[dict[str, Any]]:
        return [
            {
                "action": "add",
                "text": f"Uses GitHub Actions {format_source('c1', 0, 1)}",
                "section": "Environment & gotchas",
            },
            {"action": "add", "text": f"GitHub token {token} {format_source('c1', 0, 1)}"},
            {"action": "add", "text": "Deploys are on Tuesday (no source)"},
            {"action": "add", "text": f"Deploys Tuesday {format_source('c1', 1, 5)}"},
            {"action": "add", "text": f"Deploys on Tuesday {format_source('other', 0, 1)}"},
            {"action": "replace", "old": "not in memory", "text": "deploys (source: c1#1-2)"},
            # The message cited says nothing of it (H2: a source resolves to where it came from).
            {"action": "add", "text": f"Prefers green tea {format_source('c1', 1, 2)}"},
        ]

    report = review_agent(rv, "ada", Recorder(answer), now=NOW)
    assert [d["code"] for d in report.dropped] == [
        "memory_credential_rejected",
        "missing_source",
        "source_out_of_batch",
        "source_out_of_batch",
        "no_match",
        "source_unrelated",
    ]
    assert all(token not in str(d) for d in report.dropped)
    assert report.commits == 1
    text = rv.memory_read("ada").text
    assert "Uses GitHub Actions (source: c1#0-1)" in text and token not in text
    rec = rv.memory_history("ada", 1)[0]
    assert rec.writer == "review" and "Reviewed: c1#0-2" in rec.message  # R7: says from where
    batch = ReviewLog(rv.state).batches(rv.agent("ada").id)[0]
    assert (batch.tokens_in, batch.tokens_out, batch.model_calls) == (100, 10, 1)  # R7
    assert batch.ranges == [("c1", 0, 2)] and batch.revision == rec.revision


def test_r6_h2_every_source_review_writes_resolves_with_context_read(rv: Reverie) -> None:
    talk(
        rv,
        "c1",
        [
            ("user", "I prefer tea over coffee."),
            ("assistant", "Noted."),
            ("user", "We decided to deploy with Kamal from now on."),
        ],
    )
    report = review_agent(rv, "ada", reviewer_for(rv, rv.agent("ada")), now=NOW)
    assert report.model_calls == 0 and report.commits == 1  # R8: offline reviewer
    sources = parse_sources(rv.memory_read("ada").text)
    assert sources
    for conv, start, end in sources:
        page = rv.context_read("ada", conv, start, end)
        assert [m.position for m in page.messages] == list(range(start, end))


def test_r6_the_offline_reviewer_and_the_runner_agree_on_sources(rv: Reverie) -> None:
    # Enough facts to overflow MEMORY.md: the reviewer adds "More: [[memory/...]]" link lines,
    # which name no source. One rule (review/sources.py) says they need none, so the runner
    # drops nothing the reviewer proposed.
    talk(
        rv,
        "c1",
        [("user", f"We use Tool{i:02d} for job number {i} of the pipeline.") for i in range(60)],
    )
    report = review_agent(rv, "ada", reviewer_for(rv, rv.agent("ada")), now=NOW)
    assert report.commits == 1 and report.dropped == []
    index = rv.memory_read("ada").text
    assert "[[memory/" in index and len(index) <= rv.settings.prompt_index_chars


def _index_problems(rv: Reverie) -> list[str]:
    """What keeps MEMORY.md from being an index of its topic files (issue 11)."""
    index = rv.memory_read("ada").text
    problems = [f"MEMORY.md has {len(index)} characters"] if len(index) > 2000 else []
    where: dict[str, str | None] = {}
    section = None
    for line in index.split("\n"):
        if line.startswith("## "):
            section = line[3:]
        elif line.startswith("- "):
            for link in re.findall(r"\[\[(memory/[\w-]+\.md)\]\]", line):
                if link in where:
                    problems.append(f"{link} is linked twice")
                where[link] = section
    items = {line for line in index.split("\n") if line.startswith("- ") and "[[" not in line}
    for slug, name in ((topic_slug(s), s) for s in STANDARD_SECTIONS):
        path = f"memory/{slug}.md"
        try:
            topic = rv.memory_read("ada", path).text
        except NotFound:
            continue
        if where.get(path) != name:
            problems.append(f"{path} is linked under {where.get(path)!r}, not {name!r}")
        moved = {line for line in topic.split("\n") if line.startswith("- ")}
        problems += [f"{line!r} is in MEMORY.md and {path}" for line in moved & items]
        if not any(line for line in items if line in _section_lines(index, name)):
            problems.append(f"{name} keeps no entry of its own in MEMORY.md")
    return problems


def _section_lines(index: str, name: str) -> set[str]:
    body = index.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0]
    return set(body.split("\n"))


def test_r6_an_overflowing_index_stays_an_index_of_its_topic_files(rv: Reverie) -> None:
    said = []
    for i in range(20):
        said += [
            f"We decided to use Tool{i:02d} for pipeline stage {i}.",
            f"The service{i} listens on port {7000 + i}.",
            f"I prefer dish{i} on Fridays.",
            f"The Project{i} launch is on March {i + 1}.",
        ]
    for b in range(4):
        lines = [("user", text) for text in said[b * 20 : (b + 1) * 20]]
        talk(rv, f"c{b}", lines, close=True)
        report = review_agent(rv, "ada", reviewer_for(rv, rv.agent("ada")), now=NOW)
        assert report.dropped == [] and report.commits == 1
        assert _index_problems(rv) == [], b
    everything = rv.memory_read("ada").text + "".join(
        rv.memory_read("ada", f"memory/{topic_slug(s)}.md").text for s in STANDARD_SECTIONS
    )
    for text in said:  # every fact kept once, in the index or in its section's topic file
        key = text.split(" ")[-4] if "port" in text else text.split(" ")[3]
        assert everything.count(key + " ") + everything.count(key + ".") >= 1, key


def test_r6_runner_drops_entries_citing_turns_the_reviewer_did_not_read(rv: Reverie) -> None:
    talk(rv, "c1", [("user", "We use Kamal"), ("user", "Staging is on Hetzner")])

    class LeavesOut(Recorder):
        def review(self, batch: ReviewInput) -> ReviewOutput:
            out = super().review(batch)
            out.left_out = [("c1", 1, 2)]  # a model reviewer over its prompt budget
            return out

    report = review_agent(
        rv,
        "ada",
        LeavesOut(
            lambda b: [
                {"action": "add", "text": f"Uses Kamal {format_source('c1', 0, 1)}"},
                {"action": "add", "text": f"On Hetzner {format_source('c1', 1, 2)}"},
            ]
        ),
        now=NOW,
    )
    assert [d["code"] for d in report.dropped] == ["source_out_of_batch"]
    assert "Hetzner" not in rv.memory_read("ada").text
    assert rv.pending_ranges("ada", NOW) == [("c1", 1, 2)]


def test_r7_one_commit_per_batch_and_a_retry_applies_nothing_twice(rv: Reverie) -> None:
    talk(rv, "c1", [("user", "We decided to use Postgres")])
    review_agent(rv, "ada", Recorder(first_turn_fact), now=NOW)
    hist = rv.memory_history("ada")
    assert [h.writer for h in hist] == ["review", "system"]
    # the same ranges reviewed again (a crash before they were marked) replay the key
    conv = rv.conversation("c1")
    rv.state.conn.execute("UPDATE conversations SET reviewed_upto = 0 WHERE id = ?", (conv.id,))
    again = review_agent(rv, "ada", Recorder(first_turn_fact), now=NOW)
    assert again.commits == 0
    assert rv.memory_read("ada").text.count("Postgres") == 1
    assert len(rv.memory_history("ada")) == 2


def test_r8_offline_reviewer_when_no_model_else_the_model(home: Path) -> None:
    from reverie import Settings
    from reverie.review.model import ModelReviewer
    from reverie.review.offline import OfflineReviewer

    plain = Reverie(home / "plain", create=True)
    assert isinstance(reviewer_for(plain, plain.create_agent("ada")), OfflineReviewer)
    settings = Settings.load(
        home / "model", model="openai:some-model", openai_base_url="http://127.0.0.1:9/v1"
    )
    with_model = Reverie(settings=settings, create=True)
    reviewer = reviewer_for(with_model, with_model.create_agent("bea"))
    assert isinstance(reviewer, ModelReviewer)
    assert reviewer.provider.model == "some-model"  # type: ignore[attr-defined]


def test_r9_run_review_for_one_or_all_and_only_due_ones(rv: Reverie) -> None:
    rv.create_agent("bob")
    talk(rv, "a1", [("user", "We decided to use Postgres")])
    talk(rv, "b1", [("user", "We decided to use Redis")], agent="bob")
    reports = run_review(rv, now=NOW)
    assert sorted(r.agent for r in reports) == ["ada", "bob"]
    assert run_review(rv, now=NOW) == []  # both ran since their latest slot
    assert [r.agent for r in run_review(rv, "bob", force=True, now=NOW)] == ["bob"]


@pytest.mark.sqlite_only
def test_r9_one_agents_failing_review_leaves_the_others_reviewed(rv: Reverie, home: Path) -> None:
    """A conversation id stored before ids were checked for credentials gets ada's review
    commit refused (its message cites the id): ada's report says so without the secret, and
    bob is reviewed all the same, as the scheduler of `reverie serve` runs them."""
    import sqlite3

    rv.create_agent("bob")
    talk(rv, "a-old", [("user", "We decided to use Postgres")])
    talk(rv, "a-new", [("user", "We decided to keep the staging cluster")])
    talk(rv, "b1", [("user", "We decided to use Redis")], agent="bob")
    token = fake("ghp_", "Zq8Lm2Xv7Rt4Nw9Bp3Kd", "6Hs1Yc5Fj0Ga")
    with sqlite3.connect(home / "reverie.db") as conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("UPDATE conversations SET id = ? WHERE id = 'a-old'", (token,))
        conn.execute(
            "UPDATE messages SET conversation_id = ? WHERE conversation_id = 'a-old'", (token,)
        )
    by_agent = {r.agent: r for r in run_review(rv, now=NOW)}
    error = by_agent["ada"].error
    assert error is not None and error["code"] == "memory_credential_rejected"
    assert token not in str(error)
    assert by_agent["bob"].error is None and by_agent["bob"].commits == 1
    assert rv.memory_read("ada").revision == 0
    with pytest.raises(ReverieError):  # asked for by name, the refusal is the answer
        run_review(rv, "ada", force=True, now=NOW)


def test_r9_an_agent_whose_reviewer_cannot_be_made_says_what_stays_pending(
    rv: Reverie, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by an install audit: with a model whose SDK is not installed, `review run` said
    revision 0 and nothing pending beside the error, while memory stood at revision 1 and two
    batches waited; an agent with nothing to review was listed as failed too."""
    from reverie.errors import RefusedInput
    from reverie.review import schedule

    def no_model(rv: Reverie, agent: object) -> object:
        raise RefusedInput("The model's SDK is not installed.", code="model_unavailable")

    rv.memory_apply("ada", {"action": "add", "text": "We deploy on Tuesdays."})
    rv.create_agent("bob")
    talk(rv, "a1", [("user", "We decided to use Postgres")])
    talk(rv, "a2", [("user", "We decided to keep the staging cluster")])
    monkeypatch.setattr(schedule, "reviewer_for", no_model)
    by_agent = {
        r.agent: r for r in run_review(rv, force=True, now=NOW, limits=ReviewLimits(batch_chars=30))
    }
    ada, bob = by_agent["ada"], by_agent["bob"]
    assert ada.error is not None and ada.error["code"] == "model_unavailable"
    assert (ada.revision, ada.pending, ada.batches) == (1, 2, 0)
    assert bob.error is None and (bob.revision, bob.pending) == (0, 0)


def test_r10_two_processes_review_each_agent_once(home: Path) -> None:
    rv = Reverie(home, create=True)
    purposes = ("builds", "docs", "backups")
    for n in range(4):
        rv.create_agent(f"agent{n}")
        for c in range(3):
            talk(
                rv,
                f"a{n}c{c}",
                # Three decisions about different things (one about builds, then another
                # about builds, would rightly replace the first).
                [("user", f"We decided to use tool {n}-{c} for {purposes[c]}.")],
                agent=f"agent{n}",
                at=time.time() - 2 * HOUR,
            )
    rv.close()
    cmd = [
        sys.executable,
        "-m",
        "reverie.cli",
        "review",
        "run",
        "--now",
        "--json",
        "--home",
        str(home),
    ]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    rv = Reverie(home)
    for n in range(4):
        a = rv.agent(f"agent{n}")
        batches = ReviewLog(rv.state).batches(a.id)
        ranges = [r for b in batches for r in b.ranges]
        assert sorted(ranges) == [(f"a{n}c{c}", 0, 1) for c in range(3)]  # each range once
        writers = [h.writer for h in rv.memory_history(a.name)]
        assert writers.count("review") == len([b for b in batches if b.changed])
        text = rv.memory_read(a.name).text
        for c in range(3):
            assert text.count(f"tool {n}-{c}") == 1
