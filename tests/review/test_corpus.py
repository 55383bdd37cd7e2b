"""The review corpus (issue 11) parses, and each conversation sits in the half its id picks."""

from __future__ import annotations

import pytest

from tests.review.corpus_format import (
    CORPUS,
    DEVELOPMENT,
    EIGHTEENTH,
    EIGHTH,
    ELEVENTH,
    FIFTEENTH,
    FIFTH,
    FOURTEENTH,
    FOURTH,
    HALVES,
    HELD_OUT,
    NINETEENTH,
    NINTH,
    SECOND,
    SEVENTEENTH,
    SEVENTH,
    SIXTEENTH,
    SIXTH,
    TENTH,
    THIRD,
    THIRTEENTH,
    TWELFTH,
    TWENTIETH,
    TWENTY_FIFTH,
    TWENTY_FIRST,
    TWENTY_FOURTH,
    TWENTY_SECOND,
    TWENTY_SEVENTH,
    TWENTY_SIXTH,
    TWENTY_THIRD,
    fact,
    half,
    load,
    parse,
)


def test_split_rule_is_the_first_byte_of_sha256() -> None:
    # Fixed before any tuning: these values must never change.
    assert half("home-coffee") == "dev"
    assert half("clinic-intro-desk") == "test"
    assert {half(f"x-{i}") for i in range(20)} == set(HALVES)
    assert half("t2-clinic-intro") == SECOND == "test2"
    assert half("t3-vet-intro") == THIRD == "test3"
    assert half("t4-any-intro") == FOURTH == "test4"
    assert half("t5-any-intro") == FIFTH == "test5"
    assert half("t6-any-intro") == SIXTH == "test6"
    assert half("t7-any-intro") == SEVENTH == "test7"
    assert half("t8-any-intro") == EIGHTH == "test8"
    assert half("t9-any-intro") == NINTH == "test9"
    assert half("t10-any-intro") == TENTH == "test10"
    assert half("t11-any-intro") == ELEVENTH == "test11"
    assert half("t12-any-intro") == TWELFTH == "test12"
    assert half("t13-any-intro") == THIRTEENTH == "test13"
    assert half("t14-any-intro") == FOURTEENTH == "test14"
    assert half("t15-any-intro") == FIFTEENTH == "test15"
    assert half("t16-any-intro") == SIXTEENTH == "test16"
    assert half("t17-any-intro") == SEVENTEENTH == "test17"
    assert half("t18-any-intro") == EIGHTEENTH == "test18"
    assert half("t19-any-intro") == NINETEENTH == "test19"
    assert half("t20-any-intro") == TWENTIETH == "test20"
    assert half("t21-any-intro") == TWENTY_FIRST == "test21"
    assert half("t22-any-intro") == TWENTY_SECOND == "test22"
    assert half("t23-any-intro") == TWENTY_THIRD == "test23"
    assert half("t24-any-intro") == TWENTY_FOURTH == "test24"
    assert half("t25-any-intro") == TWENTY_FIFTH == "test25"
    assert half("t26-any-intro") == TWENTY_SIXTH == "test26"
    assert half("t27-any-intro") == TWENTY_SEVENTH == "test27"
    assert half("t28-any-intro") == HELD_OUT == "test28"
    assert HELD_OUT not in DEVELOPMENT


@pytest.mark.parametrize("which", [*DEVELOPMENT, HELD_OUT])
def test_every_conversation_parses_and_is_in_its_half(which: str) -> None:
    conversations = load(which)
    assert conversations
    for conv in conversations:
        assert conv.half == which
        assert conv.sessions and all(s.messages for s in conv.sessions)
        # Every expectation can be checked: something to keep, replace, remove or avoid.
        assert conv.keep or conv.was or conv.gone or conv.never, conv.id


def test_files_live_under_the_corpus_directory() -> None:
    assert {p.name for p in CORPUS.iterdir() if p.is_dir()} == {*DEVELOPMENT, HELD_OUT}


def test_the_corpus_is_large_and_varied() -> None:
    conversations = load()
    assert len(conversations) >= 150
    assert len({c.setting for c in conversations}) >= 7
    for which in HALVES:
        part = [c for c in conversations if c.half == which]
        assert sum(len(c.keep) for c in part) >= 100
        assert sum(len(c.was) for c in part) >= 25
        assert {k for c in part for k, _ in c.never} >= {
            "secret",
            "tool",
            "question",
            "group",
            "rule",
            "progress",
        }


@pytest.mark.parametrize(
    "which",
    [
        *(SECOND, THIRD, FOURTH, FIFTH, SIXTH, SEVENTH, EIGHTH, NINTH, TENTH, ELEVENTH),
        *(TWELFTH, THIRTEENTH, FOURTEENTH, FIFTEENTH, SIXTEENTH, SEVENTEENTH, EIGHTEENTH),
        *(NINETEENTH, TWENTIETH, TWENTY_FIRST, TWENTY_SECOND, TWENTY_THIRD, TWENTY_FOURTH),
        *(TWENTY_FIFTH, TWENTY_SIXTH, TWENTY_SEVENTH, HELD_OUT),
    ],
)
def test_the_fresh_sets_are_large_and_varied(which: str) -> None:
    conversations = load(which)
    assert len(conversations) >= (80 if which == SECOND else 100)
    assert len({c.setting for c in conversations}) >= 10
    assert sum(len(c.keep) for c in conversations) >= 100
    assert sum(len(c.was) for c in conversations) >= (30 if which == SECOND else 60)
    assert sum(len(c.gone) for c in conversations) >= 5
    assert {k for c in conversations for k, _ in c.never} >= {
        "secret",
        "tool",
        "question",
        "group",
        "rule",
        "progress",
        "smalltalk",
    }
    # No id is shared with the other sets.
    others = [c.id for w in DEVELOPMENT if w != which for c in load(w)]
    assert not {c.id for c in conversations} & set(others)


def test_the_format() -> None:
    [conv] = parse(
        "== a-1 | demo\n-- dm\nsam: We use {+}Redis.\n  | line two\ntool: out\n-- group +2d\n"
        "pia: hi\nkeep Environment: Redis & line two|three\nwas: x => y\ngone: z\n"
        "never group: hi\n"
    )
    assert conv.id == "a-1" and conv.setting == "demo"
    first, second = conv.sessions
    assert (first.kind, second.kind, second.days_after) == ("dm", "group", 2)
    assert first.messages[0].text == "We use Redis.\nline two"
    assert (first.messages[1].role, first.messages[1].author) == ("tool", None)
    assert (second.messages[0].role, second.messages[0].author) == ("user", "pia")
    [(section, f)] = conv.keep
    assert section == "Environment & gotchas"
    assert f.held_by("- the team uses redis; LINE  two") and not f.held_by("Redis")
    assert fact("a|b & c").phrases == (("a", "b"), ("c",))
    with pytest.raises(ValueError, match="unknown section"):
        parse("== a | b\n-- dm\nx: y\nkeep Nowhere: y\n")
