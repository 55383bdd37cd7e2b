"""The review quality suite: scenarios, and a runner that reviews them with the real store.

Each :class:`Scenario` is a short chat history between people and an assistant, cut into the
batches review would see, with what a careful reader would keep from it:

* ``keep``: durable facts, each a key phrase and the section it belongs under. A ``required``
  fact is asserted by the tests; the others are facts the rules are known to miss (each says
  why), counted in recall so that the figure stays honest.
* ``absent``: phrases that must never reach memory, in any file or any commit (secrets,
  transient chatter, questions, rules of behaviour, tool output).
* ``gone``: phrases of outdated facts that were in memory and must have been replaced or
  removed by the end.

:func:`run_scenario` drives the reviewer end to end: a Reverie home in a temporary directory,
an agent, every batch reviewed against the memory as it is and applied with
``Reverie.memory_apply(..., writer="review")``. It returns what the tests assert and what
``bench/review_quality.py`` reports: the entries, the violations, precision and recall.
"""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reverie import Reverie
from reverie.core.markdown import sections
from reverie.review.offline import OfflineReviewer, topic_slug
from reverie.review.types import Reviewer, ReviewInput, Turn, parse_sources
from tests.conftest import fake

PEOPLE = "People & preferences"
DECISIONS = "Decisions"
ENVIRONMENT = "Environment & gotchas"
PROJECT = "Project state"

# 2024-05-03 09:00 UTC: message times, so that "today" has a fixed date.
T0 = 1714726800.0


@dataclass(frozen=True)
class Say:
    """One message: ``role`` is user, assistant or tool (tool logs must be ignored)."""

    role: str
    text: str
    author: str | None = "sam"


@dataclass(frozen=True)
class Batch:
    """The new messages review sees in one run, per conversation (appended in order)."""

    messages: dict[str, tuple[Say, ...]]


@dataclass(frozen=True)
class Fact:
    """A durable fact: a key phrase (case-blind) that one entry holds, and its section."""

    phrase: str
    section: str
    required: bool = True
    why_missed: str = ""


@dataclass(frozen=True)
class Scenario:
    """A conversation history, cut into review batches, and what review should make of it."""

    name: str
    about: str
    batches: tuple[Batch, ...]
    keep: tuple[Fact, ...] = ()
    absent: tuple[str, ...] = ()
    gone: tuple[str, ...] = ()
    #: Memory written by a person before review ran (set with the admin writer).
    seed: str | None = None
    #: The scenario must end with detail in linked topic files.
    expect_topics: bool = False


def _u(text: str, author: str = "sam") -> Say:
    return Say("user", text, author)


def _a(text: str) -> Say:
    return Say("assistant", text, None)


def _one(conversation: str, *messages: Say) -> Batch:
    return Batch({conversation: messages})


# Credential-shaped strings are built from pieces so that no file holds one whole.
STAGING_KEY = fake("sk-", "proj-", "Qm7Rt2Vx9Lp4Nz8Kc3Wb6Yh1Jd5Fg0Hs")
DB_PASSWORD = fake("Tr0ub4", "dor&3x")
URL_PASSWORD = fake("s3cr3t", "P4ss", "w0rd")
GITHUB_TOKEN = fake("gh", "p_", "R8mQ2vX7kL9pN4zT6wB3yH1jD5fG0sKc8eUa")

_OVERFLOW_FACTS = (
    ("We use Grafana for dashboards.", "Grafana", PEOPLE),
    ("We use PagerDuty for on-call paging.", "PagerDuty", PEOPLE),
    ("We use Linear for issue tracking.", "Linear", PEOPLE),
    ("We use Figma for design reviews.", "Figma", PEOPLE),
    ("We use Terraform for infrastructure changes.", "Terraform", PEOPLE),
    ("We use Sentry for frontend error reporting.", "Sentry", PEOPLE),
    ("We use Metabase for ad-hoc analytics.", "Metabase", PEOPLE),
    ("Dana is our DBA.", "DBA", PEOPLE),
    ("Marco prefers written specs over meetings.", "written specs", PEOPLE),
    ("Ines is our on-call lead this quarter.", "on-call lead", PEOPLE),
    ("We decided to keep the monorepo.", "monorepo", DECISIONS),
    ("We decided to deprecate the v1 REST API by the end of Q3.", "v1 REST API", DECISIONS),
    ("We agreed to review pull requests within one working day.", "one working day", DECISIONS),
    ("We decided to host the docs on Read the Docs.", "Read the Docs", DECISIONS),
    ("We decided to run load tests before every major release.", "load tests", DECISIONS),
    ("The search service listens on port 9200.", "port 9200", ENVIRONMENT),
    ("The image builder needs at least 16 GB of disk.", "16 GB of disk", ENVIRONMENT),
    ("Staging emails go to the mailhog inbox at mail.staging.internal.", "mailhog", ENVIRONMENT),
    ("The ledger service requires Java 21.", "Java 21", ENVIRONMENT),
    ("The CDN caches API responses for 60 seconds.", "60 seconds", ENVIRONMENT),
    ("The cron runner breaks when two jobs share a lock name.", "lock name", ENVIRONMENT),
    ("The analytics warehouse is read-only for interns.", "read-only for interns", ENVIRONMENT),
    ("The mobile beta is live on TestFlight.", "TestFlight", PROJECT),
    ("The pricing page redesign is blocked on copy from marketing.", "pricing page", PROJECT),
    ("The data retention policy was approved by legal.", "retention policy", PROJECT),
    ("The SOC 2 audit is scheduled for October 14.", "SOC 2 audit", PROJECT),
    ("The partner API launches on September 2.", "partner API", PROJECT),
    ("We shipped dark mode for the web app.", "dark mode", PROJECT),
    ("The Kafka upgrade is on hold until November.", "Kafka upgrade", PROJECT),
    ("We use Postmark for transactional email.", "Postmark", PEOPLE),
    ("We use Cloudflare for DNS.", "Cloudflare", PEOPLE),
    ("The billing worker times out above 500 invoices per batch.", "500 invoices", ENVIRONMENT),
    (
        "The feature flag service defaults to off when Redis is down.",
        "defaults to off",
        ENVIRONMENT,
    ),
    ("We decided to pin Python at 3.12 for all services.", "pin Python", DECISIONS),
    ("Priya prefers Slack threads over email.", "Slack threads", PEOPLE),
    ("The EU region launches on November 18.", "EU region", PROJECT),
)


def _overflow_batches() -> tuple[Batch, ...]:
    out = []
    per = 12
    for k in range(0, len(_OVERFLOW_FACTS), per):
        chunk = _OVERFLOW_FACTS[k : k + per]
        conv = f"ops-{k // per + 1}"
        msgs: list[Say] = [_u("Some notes for the team wiki, so you have them:")]
        for sentence, _, _ in chunk:
            msgs.append(_u(sentence))
        msgs.append(_a("Thanks, that's a useful overview."))
        out.append(Batch({conv: tuple(msgs)}))
    return tuple(out)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        name="preferences",
        about="A new user introduces themself; facts about them are kept in third person.",
        batches=(
            _one(
                "intro",
                _u(
                    "Hi! Quick intro before we start: I'm Priya, I'm a data engineer at Lumen "
                    "Analytics.",
                    "priya",
                ),
                _a("Nice to meet you, Priya! What are you working on?"),
                _u(
                    "I live in Lisbon and I mostly work remotely. I prefer metric units and "
                    "24-hour times.",
                    "priya",
                ),
                _u(
                    "Also, I'm allergic to shellfish, so skip those when you suggest places for "
                    "the offsite.",
                    "priya",
                ),
                _u("My daughter's name is Mia, she just turned six.", "priya"),
                _a("Got it. Let me know when you want to plan the offsite."),
            ),
        ),
        keep=(
            Fact("data engineer at Lumen Analytics", PEOPLE),
            Fact("lives in Lisbon", PEOPLE),
            Fact("metric units", PEOPLE),
            Fact("allergic to shellfish", PEOPLE),
            Fact("Mia", PEOPLE),
            Fact(
                "remotely",
                PEOPLE,
                required=False,
                why_missed="'I mostly work remotely' matches no rule (only 'work at/for/as').",
            ),
        ),
        absent=("skip those", "offsite", "What are you working on"),
    ),
    Scenario(
        name="update-replaces",
        about="A later statement updates a fact: the old entry is replaced, not kept beside.",
        batches=(
            _one(
                "week-1",
                _u("For context: I live in Paris and I work at Acme."),
                _u("The report deadline is May 30."),
                _a("Thanks, I'll keep that in mind."),
            ),
            _one(
                "week-6",
                _u("Big news, I moved to Berlin last month!"),
                _a("Congratulations! How is the new flat?"),
                _u("Great, thanks. Also the report deadline moved to June 14."),
            ),
        ),
        keep=(
            Fact("lives in Berlin", PEOPLE),
            Fact("works at Acme", PEOPLE),
            Fact("June 14", PROJECT),
        ),
        gone=("Paris", "May 30"),
        absent=("new flat",),
    ),
    Scenario(
        name="removal",
        about="'We no longer use X' removes the entries about X, also ones a person wrote.",
        seed=(
            "# Memory\n\n## People & preferences\n\n## Decisions\n\n## Environment & gotchas\n"
            "- The Jenkins box lives at ci.internal:8080\n\n## Project state\n"
        ),
        batches=(
            _one(
                "ci-1",
                _u("We use Jenkins for CI."),
                _u("We use Sentry for error tracking."),
            ),
            _one(
                "ci-2",
                _u("FYI we no longer use Jenkins, everything runs on GitHub Actions now."),
                _a("Understood. Do you want me to update the runbook?"),
            ),
        ),
        keep=(
            Fact("Sentry for error tracking", PEOPLE),
            Fact(
                "GitHub Actions",
                PEOPLE,
                required=False,
                why_missed="'everything runs on X now' is too vague a shape for the rules.",
            ),
        ),
        gone=("Jenkins",),
        absent=("runbook",),
    ),
    Scenario(
        name="decisions",
        about="Decisions the user states are kept; a hedged idea and a question are not.",
        batches=(
            _one(
                "arch",
                _u("Okay, after the spike we decided to use PostgreSQL for the event store."),
                _a("Sounds good. Should I draft the schema?"),
                _u("Not yet. Let's go with Tailwind for the new admin UI."),
                _u("And we agreed to freeze deploys on Fridays."),
                _u("Maybe we should also look at Kafka later, not sure."),
                _a("Let's use a queue table for now then, we can revisit Kafka in Q3."),
            ),
        ),
        keep=(
            Fact("PostgreSQL for the event store", DECISIONS),
            Fact("Tailwind for the new admin UI", DECISIONS),
            Fact("freeze deploys on Fridays", DECISIONS),
        ),
        absent=("Kafka", "schema", "queue table"),
    ),
    Scenario(
        name="environment",
        about="Environment facts and gotchas, from the user and the assistant.",
        batches=(
            _one(
                "env",
                _u("Heads up: the staging database resets every night at 02:00 UTC."),
                _u("The build needs Node 18; it breaks on Node 20 because of the OpenSSL change."),
                _u("The API listens on port 8080."),
                _u("Remember that the payments sandbox only accepts test cards."),
                _a(
                    "Noted. Also, Docker Desktop on macOS needs at least 8 GB of memory for "
                    "the full stack."
                ),
                _u("Our VPN config lives at ~/vpn/corp.ovpn."),
            ),
        ),
        keep=(
            Fact("resets every night", ENVIRONMENT),
            Fact("needs Node 18", ENVIRONMENT),
            Fact("port 8080", ENVIRONMENT),
            Fact("only accepts test cards", ENVIRONMENT),
            Fact("8 GB of memory", ENVIRONMENT),
            Fact("corp.ovpn", ENVIRONMENT),
            Fact(
                "Node 20",
                ENVIRONMENT,
                required=False,
                why_missed="'it breaks on Node 20': the subject is a pronoun, rules do not "
                "resolve it.",
            ),
        ),
    ),
    Scenario(
        name="project-state",
        about="Shipped, done, launch dates and blockers; 'today' becomes a date.",
        batches=(
            _one(
                "status",
                _u("Good news: we shipped v2 of the mobile app today!"),
                _u("The Postgres migration is done, finally."),
                _u("v3 launches on March 3."),
                _u("The billing revamp is blocked on legal review."),
                _a("Congrats on the launch! Want me to draft release notes?"),
            ),
        ),
        keep=(
            Fact("v2 of the mobile app on 2024-05-03", PROJECT),
            Fact("migration is done", PROJECT),
            Fact("v3 launches on March 3", PROJECT),
            Fact("blocked on legal review", PROJECT),
        ),
        absent=("release notes", "Congrats"),
    ),
    Scenario(
        name="assistant-lesson",
        about="Lessons the assistant states in its reply are kept; the failure report is not.",
        batches=(
            _one(
                "incident",
                _u("The nightly export job failed again with a timeout."),
                _a(
                    "I looked at the logs. The root cause was the export query scanning the "
                    "whole orders table without an index."
                ),
                _a(
                    "The fix was to add an index on orders.created_at and batch the export in "
                    "10k-row pages."
                ),
                _u("Nice, that worked. Thanks!"),
                _a("Lesson learned: large exports should be paginated from the start."),
            ),
        ),
        keep=(
            Fact("scanning the whole orders table", ENVIRONMENT),
            Fact("index on orders.created_at", ENVIRONMENT),
            Fact("paginated from the start", ENVIRONMENT),
        ),
        absent=("failed again", "that worked", "looked at the logs"),
    ),
    Scenario(
        name="transient-chatter",
        about="Progress chatter, greetings and thanks leave memory untouched.",
        batches=(
            _one(
                "chatter",
                _u("hey! one sec, running the test suite"),
                _u("still compiling..."),
                _u("brb, grabbing coffee"),
                _a("No problem, take your time."),
                _u("ok back. tests are green now"),
                _u("I'm deploying the hotfix to staging now."),
                _u("thanks, that's all for today!"),
            ),
        ),
        absent=("compiling", "coffee", "test suite", "green", "hotfix", "brb"),
    ),
    Scenario(
        name="questions",
        about="Questions are not facts, even when they name things.",
        batches=(
            _one(
                "qa",
                _u("Do we use Redis anywhere in the stack?"),
                _a("I don't see Redis in memory. Which service would need it?"),
                _u("What port does the billing API listen on?"),
                _u("Is the staging cluster on Kubernetes 1.29?"),
                _u("could you check whether the nightly backup ran"),
            ),
        ),
        absent=("Redis", "billing API", "Kubernetes", "nightly backup"),
    ),
    Scenario(
        name="pasted-secret",
        about="Secrets never reach memory or its history; the facts beside them do.",
        batches=(
            _one(
                "secrets",
                _u(f"Here's the staging API key so you can test: {STAGING_KEY}"),
                _u(f"The staging database password is {DB_PASSWORD}, please don't share it."),
                _u(
                    f"Our Postgres URL is postgres://app:{URL_PASSWORD}@db.staging.internal:5432/app"
                ),
                _u(f"export GITHUB_TOKEN={GITHUB_TOKEN}"),
                _u("The deploy token is stored in Vault under ci/deploy."),
                _u("By the way, the staging DB host is db.staging.internal."),
            ),
        ),
        keep=(
            Fact("stored in Vault", ENVIRONMENT),
            Fact("host is db.staging.internal", ENVIRONMENT),
        ),
        absent=(
            STAGING_KEY,
            STAGING_KEY[:12],
            DB_PASSWORD,
            URL_PASSWORD,
            GITHUB_TOKEN,
            "GITHUB_TOKEN",
            "API key",
            "password",
        ),
    ),
    Scenario(
        name="behavioural-rules",
        about="Rules aimed at the agent belong to instructions, not memory.",
        batches=(
            _one(
                "rules",
                _u("Always answer in French from now on."),
                _u("Never use emojis in your replies."),
                _u("You should cite the source file when you quote code."),
                _u("From now on, keep replies under 200 words."),
                _u("Please remind me to stretch every hour."),
                _u("I prefer metric units, though."),
                _u("Don't ever apologise for being an AI."),
            ),
        ),
        keep=(Fact("metric units", PEOPLE),),
        absent=("French", "emoji", "cite", "200 words", "stretch", "apologise"),
    ),
    Scenario(
        name="overflow",
        about="Many facts: MEMORY.md stays within its cap, detail moves to linked topic files.",
        batches=_overflow_batches(),
        keep=tuple(Fact(phrase, section) for _, phrase, section in _OVERFLOW_FACTS),
        absent=("wiki", "useful overview"),
        expect_topics=True,
    ),
    Scenario(
        name="duplicates",
        about="A fact said twice in a batch, and again in a later run, is kept once.",
        batches=(
            _one(
                "dup-1",
                _u("I prefer dark mode in every editor."),
                _u("We use pnpm for the frontend packages."),
                _a("Noted!"),
                _u("Seriously, I prefer dark mode in every editor!"),
            ),
            _one(
                "dup-2",
                _u("Again, I prefer dark mode in every editor."),
                _u("we use PNPM for the frontend packages"),
            ),
        ),
        keep=(
            Fact("dark mode in every editor", PEOPLE),
            Fact("pnpm for the frontend packages", PEOPLE),
        ),
    ),
    Scenario(
        name="switch",
        about="'We switched from X to Y' rewrites the entry that said X is used.",
        batches=(
            _one(
                "db-1",
                _u("We use MySQL 5.7 for the main database."),
                _u("We're on Python 3.11."),
            ),
            _one(
                "db-2",
                _u("We switched from MySQL to PostgreSQL 16 over the weekend."),
                _u("We upgraded to Python 3.12 as well."),
            ),
        ),
        keep=(
            Fact("PostgreSQL 16 for the main database", PEOPLE),
            Fact("Python 3.12", ENVIRONMENT),
        ),
        gone=("MySQL", "Python 3.11"),
    ),
    Scenario(
        name="people-and-teammates",
        about="Two users and their teammates: each fact names its person; no cross-talk.",
        batches=(
            Batch(
                {
                    "lena-dm": (
                        _u("Dana is our DBA, ping her for schema changes.", "lena"),
                        _u("Marco prefers async updates over meetings.", "lena"),
                        _u("I live in Oslo.", "lena"),
                        _a("Thanks Lena, noted."),
                    ),
                    "omar-dm": (
                        _u("I live in Cairo.", "omar"),
                        _u("I'm vegetarian.", "omar"),
                        _a("Good to know, Omar."),
                    ),
                }
            ),
            _one("lena-dm-2", _u("Marco moved to Tokyo in March.", "lena")),
        ),
        keep=(
            Fact("Dana is our DBA", PEOPLE),
            Fact("Marco prefers async updates", PEOPLE),
            Fact("Lena lives in Oslo", PEOPLE),
            Fact("Omar lives in Cairo", PEOPLE),
            Fact("Omar is vegetarian", PEOPLE),
            Fact("Marco lives in Tokyo", PEOPLE),
        ),
    ),
    Scenario(
        name="debugging-session",
        about="A realistic incident: code, logs and tool output are ignored; the lesson stays.",
        batches=(
            Batch(
                {
                    "incident-7": (
                        _u(
                            "The deploy to prod failed with this:\n```\nERROR: relation "
                            '"users" does not exist\n```'
                        ),
                        Say(
                            "tool",
                            "$ kubectl get pods\nNAME READY STATUS\napi-7d9 0/1 CrashLoopBackOff"
                            "\nThe cluster needs 3 nodes.",
                            None,
                        ),
                        _a(
                            "That error means the tables were missing when the app started. "
                            "The cause was the release job starting the app before `alembic "
                            "upgrade head` finished.\n\n```bash\nkubectl rollout restart "
                            "deploy/api\n```"
                        ),
                        _u(
                            "Pasting the log:\n2024-05-02 10:00:01 INFO starting worker\n"
                            'Traceback (most recent call last):\n  File "app.py", line 3'
                        ),
                        _u("Makes sense. We run migrations in a separate job now."),
                        _a("Good call. I'm checking the rollout status now."),
                    )
                }
            ),
        ),
        keep=(
            Fact("before `alembic upgrade head` finished", ENVIRONMENT),
            Fact(
                "separate job",
                DECISIONS,
                required=False,
                why_missed="'we run X' is not read as a decision or a usage (too often a "
                "one-off action).",
            ),
        ),
        absent=("CrashLoopBackOff", "3 nodes", "Traceback", "starting worker", "rollout"),
    ),
    Scenario(
        name="chatty-workday",
        about="A long, noisy workday chat: a few durable facts among opinions and to-dos.",
        batches=(
            _one(
                "workday",
                _u("Morning! Coffee first, then the sprint review.", "noah"),
                _u("I'm done with the onboarding doc, finally.", "noah"),
                _a("Great. Anything you want me to look at?"),
                _u("Yes, the login page. It breaks when I click save twice.", "noah"),
                _u(
                    "The login page breaks when the session cookie is older than a day.",
                    "noah",
                ),
                _u("I love it when that happens, lol.", "noah"),
                _u("We need to fix the login bug before Friday.", "noah"),
                _a("I'm running the test suite against the login page now."),
                _u("The tests are done.", "noah"),
                _u("We're going with Stripe for payments, decided yesterday.", "noah"),
                _a(
                    "Sounds good. The Stripe webhook needs the raw request body, so make sure "
                    "the JSON middleware skips /webhooks."
                ),
                _u("Makes sense. The office wifi is terrible today.", "noah"),
                _u("My manager is Ana Costa.", "noah"),
                _u("I think the flaky test is the one with the timezone mock.", "noah"),
                _a("You'll need to restart the worker after changing the queue config."),
                _u("The deploy is done.", "noah"),
                _u("I like the new dashboard a lot.", "noah"),
                _u("Our Redis instance runs out of memory when the queue backs up.", "noah"),
                _u("We use Notion for meeting notes.", "noah"),
                _a("I've updated the ticket with the repro steps."),
                _u("Gotta run, talk tomorrow!", "noah"),
            ),
        ),
        keep=(
            Fact("session cookie is older than a day", ENVIRONMENT),
            Fact("Stripe for payments", DECISIONS),
            Fact("raw request body", ENVIRONMENT),
            Fact("Ana Costa", PEOPLE),
            Fact("runs out of memory", ENVIRONMENT),
            Fact("Notion for meeting notes", PEOPLE),
            Fact(
                "restart the worker",
                ENVIRONMENT,
                required=False,
                why_missed="advice in the second person ('you'll need to ...') is not read.",
            ),
        ),
        absent=(
            "coffee",
            "onboarding doc",
            "click save",
            "wifi",
            "flaky",
            "repro",
            "talk tomorrow",
        ),
    ),
)


# --- running ---------------------------------------------------------------------------------


@dataclass
class Entry:
    """One entry written by review, where it ended up."""

    path: str
    section: str | None
    text: str


@dataclass
class Outcome:
    """What happened when a scenario was reviewed."""

    scenario: Scenario
    entries: list[Entry] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    kept: dict[str, int] = field(default_factory=dict)  # phrase -> entries holding it
    commits: int = 0
    operations: int = 0
    seconds: float = 0.0
    model_calls: int = 0

    @property
    def expected_entries(self) -> int:
        phrases = [f.phrase.casefold() for f in self.scenario.keep]
        return sum(1 for e in self.entries if any(p in e.text.casefold() for p in phrases))

    @property
    def found(self) -> int:
        return sum(1 for f in self.scenario.keep if self.kept.get(f.phrase, 0) >= 1)


def _files(rv: Reverie, agent: str) -> dict[str, str]:
    repo = _repo(rv, agent)
    out = {"MEMORY.md": rv.memory_read(agent).text}
    for p in sorted((repo / "memory").glob("*.md")):
        out[f"memory/{p.name}"] = rv.memory_read(agent, f"memory/{p.name}").text
    return out


def _repo(rv: Reverie, agent: str) -> Path:
    return rv.home / "memories" / rv.state.memory_of(rv.agent(agent).id)


def history_text(rv: Reverie, agent: str) -> str:
    """Every commit of the memory repository, messages and patches (``git log -p``)."""
    return subprocess.run(
        ["git", "-C", str(_repo(rv, agent)), "log", "-p", "--all"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def _entries(files: dict[str, str]) -> list[Entry]:
    out = []
    for path, text in files.items():
        names: dict[int, str] = {}
        for name, start, end in sections(text):
            for i in range(start, end):
                names[i] = name
        for i, line in enumerate(text.split("\n")):
            m = re.match(r"^[-*+] (.*)$", line)
            if m:
                out.append(Entry(path, names.get(i), m.group(1)))
    return out


def _turns(batch: Batch, counts: dict[str, int], messages: dict[str, list[Say]]) -> list[Turn]:
    turns: list[Turn] = []
    for conv, says in batch.messages.items():
        for say in says:
            pos = counts.get(conv, 0)
            counts[conv] = pos + 1
            messages.setdefault(conv, []).append(say)
            turns.append(Turn(conv, pos, say.role, say.author, say.text, T0 + 60 * len(turns)))
    return turns


def _review(rv: Reverie, agent: str, reviewer: Reviewer, turns: list[Turn]) -> Any:
    files = _files(rv, agent)
    topics = {p: t for p, t in files.items() if p != "MEMORY.md"}
    batch = ReviewInput(
        agent=agent,
        turns=turns,
        index=files["MEMORY.md"],
        topics=topics,
        index_cap_chars=rv.settings.prompt_index_chars,
    )
    return reviewer.review(batch)


_FUNCTION_WORDS = frozenset(
    [
        "the",
        "and",
        "that",
        "this",
        "with",
        "from",
        "have",
        "has",
        "had",
        "their",
        "they",
        "them",
        "there",
        "then",
        "than",
        "also",
        "just",
        "very",
        "really",
        "will",
        "would",
        "could",
        "should",
        "what",
        "when",
        "where",
        "which",
        "while",
        "about",
        "into",
        "over",
        "your",
        "yours",
        "source",
    ]
)


def _normalize(text: str) -> str:
    # The judge's own reading of words (not the reviewer's): lower case, no function words,
    # a plural "s" cut.
    words = re.findall(r"[a-z0-9]+", text.casefold().replace("’", "'"))
    kept = [w for w in words if w not in _FUNCTION_WORDS]
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in kept)


def _content_words(text: str) -> set[str]:
    return {w for w in _normalize(text).split(" ") if len(w) >= 4}


def run_scenario(scenario: Scenario, home: Path, reviewer: Reviewer | None = None) -> Outcome:
    """Review ``scenario`` batch by batch into a new home at ``home``; check what came out."""
    reviewer = reviewer or OfflineReviewer()
    out = Outcome(scenario)
    agent = "ada"
    started = time.perf_counter()
    with Reverie(home, create=True) as rv:
        rv.create_agent(agent)
        cap = rv.settings.prompt_index_chars
        if scenario.seed is not None:
            rv.memory_apply(
                agent,
                {"operations": [{"action": "set_body", "text": scenario.seed}]},
                writer="admin",
            )
        seeded = {e.text for e in _entries(_files(rv, agent))}
        counts: dict[str, int] = {}
        messages: dict[str, list[Say]] = {}
        last: list[Turn] = []
        all_turns: list[Turn] = []
        for n, batch in enumerate(scenario.batches):
            turns = _turns(batch, counts, messages)
            last, all_turns = turns, all_turns + turns
            before = {e.text for e in _entries(_files(rv, agent))}
            result = _review(rv, agent, reviewer, turns)
            out.model_calls += result.model_calls
            out.operations += len(result.operations)
            if result.operations:
                outcome = rv.memory_apply(
                    agent,
                    {"operations": result.operations, "message": result.message},
                    writer="review",
                )
                out.commits += int(outcome.changed)
                for conv in {t.conversation_id for t in turns}:
                    if conv not in result.message:
                        out.violations.append(f"batch {n}: commit message does not name {conv}")
            files = _files(rv, agent)
            given = {(t.conversation_id, t.position): t for t in turns}
            for e in _entries(files):
                if e.text in before or "[[" in e.text:
                    continue
                # A new or rewritten entry: its source lies within the turns it was given.
                cited = parse_sources(e.text)
                if len(cited) != 1:
                    out.violations.append(f"entry without exactly one source: {e.text!r}")
                    continue
                conv, start, end = cited[0]
                span = [given.get((conv, p)) for p in range(start, end)]
                if start >= end or any(t is None for t in span):
                    out.violations.append(
                        f"source {conv}#{start}-{end} outside batch {n}: {e.text!r}"
                    )
                    continue
                said = " ".join(t.text for t in span if t is not None)
                if not _content_words(e.text) & _content_words(said):
                    out.violations.append(f"source does not say this: {e.text!r} <- {said!r}")
            if len(files["MEMORY.md"]) > cap:
                out.violations.append(f"batch {n}: MEMORY.md is {len(files['MEMORY.md'])} > {cap}")
        files = _files(rv, agent)
        out.entries = [e for e in _entries(files) if "[[" not in e.text and e.text not in seeded]
        _check_final(rv, agent, scenario, files, out)
        # Nothing new: the last batch again, all turns as one batch, and no turns at all.
        for label, turns in (
            ("last batch again", last),
            ("all turns again", all_turns),
            ("no turns", []),
        ):
            again = _review(rv, agent, reviewer, turns)
            if again.operations:
                out.violations.append(f"{label}: {len(again.operations)} operations, expected none")
            out.model_calls += again.model_calls
    out.seconds = time.perf_counter() - started
    return out


def _check_final(
    rv: Reverie, agent: str, scenario: Scenario, files: dict[str, str], out: Outcome
) -> None:
    everything = "\n".join(files.values()).casefold()
    history = history_text(rv, agent).casefold()
    for e in out.entries:
        if len(parse_sources(e.text)) != 1:
            out.violations.append(f"review entry without one source: {e.text!r}")
    for fact in scenario.keep:
        holders = [e for e in out.entries if fact.phrase.casefold() in e.text.casefold()]
        out.kept[fact.phrase] = len(holders)
        if not fact.required:
            continue
        if len(holders) != 1:
            out.violations.append(f"fact {fact.phrase!r} is in {len(holders)} entries, not 1")
            continue
        where = holders[0]
        slug = topic_slug(fact.section)
        in_section = (where.path == "MEMORY.md" and where.section == fact.section) or (
            where.path.startswith(f"memory/{slug}")
        )
        if not in_section:
            out.violations.append(
                f"fact {fact.phrase!r} is in {where.path} / {where.section}, not {fact.section}"
            )
    for phrase in scenario.absent:
        if phrase.casefold() in everything:
            out.violations.append(f"{phrase!r} is in memory")
        elif phrase.casefold() in history:
            out.violations.append(f"{phrase!r} is in the git history")
    for phrase in scenario.gone:
        if phrase.casefold() in everything:
            out.violations.append(f"outdated {phrase!r} is still in memory")
        if phrase.casefold() not in history:
            out.violations.append(f"{phrase!r} was never in memory: the update was not tested")
    topics = [p for p in files if p != "MEMORY.md"]
    for path in topics:
        if f"[[{path}]]" not in files["MEMORY.md"]:
            out.violations.append(f"{path} is not linked from MEMORY.md")
    if scenario.expect_topics and not topics:
        out.violations.append("expected detail in topic files; there are none")


def totals(outcomes: list[Outcome]) -> dict[str, float]:
    """Precision and recall across the suite (see the module docstring)."""
    entries = sum(len(o.entries) for o in outcomes)
    expected = sum(o.expected_entries for o in outcomes)
    facts = sum(len(o.scenario.keep) for o in outcomes)
    found = sum(o.found for o in outcomes)
    required = [f for o in outcomes for f in o.scenario.keep if f.required]
    found_required = sum(
        1 for o in outcomes for f in o.scenario.keep if f.required and o.kept.get(f.phrase, 0) >= 1
    )
    return {
        "entries": entries,
        "expected_entries": expected,
        "precision": expected / entries if entries else 1.0,
        "facts": facts,
        "found": found,
        "recall": found / facts if facts else 1.0,
        "required_recall": found_required / len(required) if required else 1.0,
        "violations": sum(len(o.violations) for o in outcomes),
    }
