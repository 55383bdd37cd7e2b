"""The LoCoMo importer: records in the SPEC 15 import format, and evidence as positions.

The samples here are synthetic, written for these tests in LoCoMo's shape; the published file
is CC BY-NC and never copied into the repository. One test reads it when it is present
(``$REVERIE_LOCOMO``, or ``../shared/bench/locomo10.json`` beside the repository) and checks the
published counts; without it the test skips, and fails under ``CI=true``.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from bench._common import locomo_path
from reverie.errors import RefusedInput
from reverie.importers import locomo
from tests.conftest import unavailable


def sample(sample_id: str = "s-1", **extra_qa: Any) -> dict[str, Any]:
    """Two invented people, two sessions (plus a date for a session that never happened)."""
    qa: list[dict[str, Any]] = [
        {
            "question": "Which kite did Ola fly?",
            "answer": "a red box kite",
            "evidence": ["D1:2"],
            "category": 4,
        },
        {
            "question": "When did Ola fly the kite?",
            "answer": "on 3 March 2024",
            "evidence": ["D1:2; D2:1"],
            "category": 2,
        },
        {
            "question": "Where did Ben buy the glue?",
            "answer": "the hardware shop",
            "evidence": ["D2:03", "D:1:1", "D", "D9:9", "D1:1"],
            "category": 1,
        },
        {
            "question": "What would Ben name a kite?",
            "answer": "Zephyr",
            "evidence": [],
            "category": 3,
        },
        {
            "question": "What did Ben say about submarines?",
            "adversarial_answer": "nothing",
            "evidence": ["D2:2"],
            "category": 5,
        },
    ]
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ola",
            "speaker_b": "Ben",
            "session_1_date_time": "4:05 pm on 3 March, 2024",
            "session_1": [
                {"speaker": "Ola", "dia_id": "D1:1", "text": "Hi Ben, windy day today!"},
                {
                    "speaker": "Ola",
                    "dia_id": "D1:2",
                    "text": "I flew my kite at the dunes.",
                    "blip_caption": "a red box kite above sand",
                    "img_url": ["https://example.invalid/k.jpg"],
                    "query": "box kite dunes",
                },
                {"speaker": "Ben", "dia_id": "D1:3", "text": "Nice, I want one too."},
            ],
            "session_2_date_time": "10:30 am on 12 March, 2024",
            "session_2": [
                {"speaker": "Ben", "dia_id": "D2:1", "text": "I started building a kite."},
                {"speaker": "Ola", "dia_id": "D2:2", "text": "", "blip_caption": "a spool"},
                {"speaker": "Ben", "dia_id": "D2:3", "text": "Got glue at the hardware shop."},
            ],
            "session_3_date_time": "9:00 am on 20 March, 2024",
        },
        "qa": qa + list(extra_qa.get("more", [])),
        "event_summary": {},
        "observation": {},
        "session_summary": {},
    }


# conversion


def test_one_conversation_per_session_then_closed() -> None:
    records = locomo.to_records(sample())
    assert [r["conversation"] for r in records] == ["locomo-s-1-s1"] * 4 + ["locomo-s-1-s2"] * 4
    assert records[3] == {"conversation": "locomo-s-1-s1", "closed": True}
    assert records[7] == {"conversation": "locomo-s-1-s2", "closed": True}


def test_messages_follow_the_spec_15_shape() -> None:
    first = locomo.to_records(sample())[0]
    assert first == {
        "conversation": "locomo-s-1-s1",
        "agent": "locomo-s-1",
        "channel": {"kind": "dm", "id": "locomo-s-1"},
        "author": "Ola",
        "role": "user",
        "text": "Hi Ben, windy day today!",
        "time": "2024-03-03T16:05:00+00:00",
    }


def test_both_speakers_are_users_and_authors() -> None:
    messages = [r for r in locomo.to_records(sample()) if "closed" not in r]
    assert {r["role"] for r in messages} == {"user"}
    assert [r["author"] for r in messages] == ["Ola", "Ola", "Ben", "Ben", "Ola", "Ben"]


def test_times_come_from_the_session_and_keep_order() -> None:
    messages = [r for r in locomo.to_records(sample()) if "closed" not in r]
    times = [dt.datetime.fromisoformat(r["time"]) for r in messages]
    assert times == sorted(times)
    assert times[1] - times[0] == dt.timedelta(seconds=locomo.TURN_SECONDS)
    assert times[3] == dt.datetime(2024, 3, 12, 10, 30, tzinfo=dt.UTC)


def test_photo_captions_are_appended_and_urls_and_queries_left_out() -> None:
    messages = [r for r in locomo.to_records(sample()) if "closed" not in r]
    assert (
        messages[1]["text"]
        == "I flew my kite at the dunes. [shared a photo: a red box kite above sand]"
    )
    assert messages[4]["text"] == "[shared a photo: a spool]"
    assert all(
        "example.invalid" not in r["text"] and "box kite dunes" not in r["text"] for r in messages
    )


def test_dates_without_a_session_make_no_conversation() -> None:
    assert [s.number for s in locomo.sessions(sample())] == [1, 2]


def test_sessions_are_ordered_by_number_not_key_order() -> None:
    s = sample()
    conv = s["conversation"]
    s["conversation"] = {
        "session_10_date_time": "1:00 pm on 1 May, 2024",
        "session_10": [{"speaker": "Ola", "dia_id": "D10:1", "text": "later"}],
        **conv,
    }
    assert [x.number for x in locomo.sessions(s)] == [1, 2, 10]


def test_jsonl_is_one_json_object_per_line() -> None:
    records = list(locomo.convert([sample("a"), sample("b")]))
    text = locomo.to_jsonl(records)
    lines = text.splitlines()
    assert len(lines) == len(records) == 16
    assert [json.loads(line) for line in lines] == records
    assert text.endswith("\n")


def test_non_ascii_survives_jsonl() -> None:
    s = sample()
    s["conversation"]["session_1"][0]["text"] = "Grüße, Zoë"
    line = locomo.to_jsonl(locomo.to_records(s)[:1])
    assert json.loads(line)["text"] == "Grüße, Zoë"


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda s: s.pop("sample_id"), "sample_id"),
        (lambda s: s.__setitem__("conversation", []), "conversation"),
        (lambda s: s["conversation"].__setitem__("session_1", "oops"), "list of turns"),
        (lambda s: s["conversation"].pop("session_2_date_time"), "date_time"),
        (lambda s: s["conversation"].__setitem__("session_1_date_time", "May 8"), "date_time"),
        (lambda s: s["conversation"]["session_1"][0].pop("speaker"), "speaker"),
    ],
)
def test_malformed_samples_are_refused_with_a_reason(mutate: Any, needle: str) -> None:
    s = sample()
    mutate(s)
    with pytest.raises(RefusedInput) as info:
        locomo.to_records(s)
    assert info.value.code == "invalid_locomo"
    assert needle in info.value.message


def test_duplicate_sample_ids_are_refused() -> None:
    with pytest.raises(RefusedInput, match="s-1"):
        list(locomo.convert([sample(), sample()]))


def test_session_time_parsing() -> None:
    assert locomo.parse_session_time("1:56 pm on 8 May, 2023") == dt.datetime(
        2023, 5, 8, 13, 56, tzinfo=dt.UTC
    )
    assert locomo.parse_session_time("12:09 am on 13 October,  2023").hour == 0
    with pytest.raises(ValueError):
        locomo.parse_session_time("yesterday")


# evidence


def test_evidence_map_gives_conversation_and_zero_based_position() -> None:
    m = locomo.evidence_map(sample())
    assert m == {
        "D1:1": ("locomo-s-1-s1", 0),
        "D1:2": ("locomo-s-1-s1", 1),
        "D1:3": ("locomo-s-1-s1", 2),
        "D2:1": ("locomo-s-1-s2", 0),
        "D2:2": ("locomo-s-1-s2", 1),
        "D2:3": ("locomo-s-1-s2", 2),
    }


def test_evidence_positions_index_the_imported_conversation() -> None:
    s = sample()
    by_conv: dict[str, list[str]] = {}
    for r in locomo.to_records(s):
        if "text" in r:
            by_conv.setdefault(r["conversation"], []).append(r["text"])
    conv, pos = locomo.evidence_map(s)["D2:3"]
    assert by_conv[conv][pos] == "Got glue at the hardware shop."


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (["D1:2"], ["D1:2"]),
        (["D8:6; D9:17"], ["D8:6", "D9:17"]),
        (["D9:1 D4:4 D4:6"], ["D9:1", "D4:4", "D4:6"]),
        (["D3:1,D3:2"], ["D3:1", "D3:2"]),
        (["D30:05"], ["D30:5"]),
        (["D:11:26"], ["D11:26"]),
        (["D"], []),
        (["D1:18", "D", "D1:20"], ["D1:18", "D1:20"]),
        (["D4:5", "D4:5", "D5:5"], ["D4:5", "D5:5"]),
        ([" D2:3 "], ["D2:3"]),
        ("D2:3; D2:4", ["D2:3", "D2:4"]),
        ([], []),
        (None, []),
        ([7, None, "d1:1", "X1:1", "D1", "D1:2:3"], []),
    ],
)
def test_normalize_evidence(raw: object, expected: list[str]) -> None:
    assert locomo.normalize_evidence(raw) == expected


def test_questions_resolve_evidence_and_report_unknown_ids() -> None:
    qs = locomo.questions(sample())
    assert [q.category for q in qs] == [4, 2, 1, 3]
    kite, when, glue, name = qs
    assert kite.targets == (("locomo-s-1-s1", 1),) and not kite.repaired
    assert when.evidence == ("D1:2", "D2:1") and when.repaired
    assert glue.evidence == ("D2:3", "D1:1")  # D:1:1 and D1:1 are one turn
    assert glue.unknown == ("D9:9",)
    assert glue.targets == (("locomo-s-1-s2", 2), ("locomo-s-1-s1", 0))
    assert name.targets == () and name.category_name == "open-domain"
    assert kite.agent == "locomo-s-1" and kite.answer == "a red box kite"


def test_questions_with_evidence_only() -> None:
    scored = locomo.questions(sample(), with_evidence=True)
    assert [q.index for q in scored] == [0, 1, 2]
    all_cats = locomo.questions(sample(), None)
    assert [q.category for q in all_cats] == [4, 2, 1, 3, 5]
    assert all_cats[-1].answer == "nothing"


def test_a_question_whose_evidence_names_no_turn_is_left_out() -> None:
    s = sample(more=[{"question": "?", "answer": "x", "evidence": ["D7:1"], "category": 4}])
    assert len(locomo.questions(s)) == 5
    assert len(locomo.questions(s, with_evidence=True)) == 3


def test_summary_of_synthetic_samples() -> None:
    summary = locomo.summarize([sample("a"), sample("b")])
    assert summary.samples == 2 and summary.sessions == 4 and summary.turns == 12
    assert summary.photos == 4 and summary.questions == 10
    assert summary.by_category == {1: 2, 2: 2, 3: 2, 4: 2, 5: 2}
    assert summary.answerable == 8 and summary.answerable_with_evidence == 6
    assert summary.unknown_ids == ("a D9:9", "b D9:9")


def test_command_line_writes_jsonl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "locomo.json"
    src.write_text(json.dumps([sample("a")]), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert locomo.main([str(src), "-o", str(out)]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == locomo.to_records(sample("a"))
    assert "1 samples, 2 conversations, 6 messages" in capsys.readouterr().err


def test_command_line_refuses_what_is_not_locomo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "bad.json"
    src.write_text('{"not": "a list"}', encoding="utf-8")
    assert locomo.main([str(src)]) == 3
    assert "list of samples" in capsys.readouterr().err


# the published file, when present


def _published() -> Path:
    path = locomo_path()
    if not path.is_file():
        unavailable(
            f"LoCoMo not found at {path}: set REVERIE_LOCOMO to locomo10.json "
            "(snap-research/LoCoMo data/locomo10.json, CC BY-NC 4.0) to run this test"
        )
    return path


def test_published_locomo_counts() -> None:
    samples = json.loads(_published().read_text(encoding="utf-8"))
    summary = locomo.summarize(samples)
    assert summary.samples == 10
    assert summary.sessions == 272
    assert summary.turns == 5882
    assert summary.questions == 1986
    assert summary.by_category == {1: 282, 2: 321, 3: 96, 4: 841, 5: 446}
    assert summary.answerable == 1540
    assert summary.answerable_with_evidence == 1536
    assert summary.repaired_questions == 8
    assert summary.unknown_ids == ("conv-42 D10:19", "conv-47 D4:36")
    records = list(locomo.convert(samples))
    assert sum("text" in r for r in records) == 5882
    assert sum("closed" in r for r in records) == 272
    for s in samples:
        positions = locomo.evidence_map(s)
        for conv, pos in positions.values():
            assert conv.startswith(f"locomo-{s['sample_id']}-s") and pos >= 0
        assert len(positions) == sum(len(x.turns) for x in locomo.sessions(s))
