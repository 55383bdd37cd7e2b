"""The offline reviewer (R6) reading the pieces of one message, and pasted tables: found by an
outside audit (2026-12-06) with phrasings nobody here wrote.

Each case is reviewed as a user meets it, session after session, and then the whole batch is
given again against the memory it made, which must change nothing. The helpers are those of
:mod:`tests.review.test_offline`.
"""

from __future__ import annotations

import pytest

from reverie.core.markdown import new_index
from reverie.review.types import Turn
from tests.review.test_offline import (
    asked_as,
    assert_changes_nothing,
    bot,
    days_later,
    index_after,
    review,
    turns,
    user,
)
from tests.review.test_offline_reading import _entries


def _sessions(*sessions: list[tuple[str, str]]) -> str:
    """The memory after each session is reviewed in turn, a few days apart; the batch of every
    session given again changes nothing."""
    index = new_index()
    every: list[Turn] = []
    for n, messages in enumerate(sessions):
        batch = days_later(3 * n, turns(f"c{n}", *messages))
        every += batch
        out = review(batch, index=index)
        if out.operations:
            index = index_after(out, index)
    assert_changes_nothing(every, index)
    return index


def _held(index: str, *words: str) -> list[str]:
    """The entries holding every one of ``words`` (case-blind)."""
    return [e for e in _entries(index) if all(w.lower() in e.lower() for w in words)]


# Two statements about different things in one sentence, joined by "and" or "also", are two
# entries: each has a subject and a verb of its own.


@pytest.mark.parametrize(
    ("said", "kept", "other"),
    [
        (
            "mrs ahmed is allergic to penicillin and the waiting room printer is broken again",
            ("Ahmed", "penicillin"),
            None,
        ),
        (
            "quick one: coach dan is diabetic, and the printer is playing up again",
            ("Dan", "diabetic"),
            None,
        ),
        (
            "fyi mr okafor is deaf in his left ear and the lift is out of order today",
            ("Okafor", "deaf"),
            None,
        ),
        (
            "nurse kemi is vegan, and the car park is full today",
            ("Kemi", "vegan"),
            None,
        ),
        (
            "the shop opens at 9 on saturdays and the card machine is down this morning",
            ("opens at 9",),
            None,
        ),
    ],
)
def test_r6_a_statement_said_beside_news_of_the_moment_is_kept_alone(
    said: str, kept: tuple[str, ...], other: tuple[str, ...] | None
) -> None:
    # "ahmed" ends like a past tense, "dan" after "coach": a lower-case name after a title
    # is a name; and a clause about another thing after "and" was read with the first, so
    # that what was of the moment ("the printer is broken again") sank both or was kept.
    index = _sessions([user(said)])
    assert len(_held(index, *kept)) == 1, index
    if other is not None:
        assert len(_held(index, *other)) == 1, index
        assert not _held(index, *kept, *other), index


@pytest.mark.parametrize(
    ("said", "whole"),
    [
        ("the freezer and the centrifuge are in room 118", ("freezer", "centrifuge", "118")),
        (
            "our cheese vat is 2000 litres from Kalt, and the press is pneumatic",
            ("2000 litres", "pneumatic"),
        ),
        (
            "coach dan is diabetic, and training moved to 6pm on thursdays",
            ("Dan", "diabetic", "6pm"),
        ),
    ],
)
def test_r6_a_sentence_with_nothing_of_the_moment_is_kept_whole(
    said: str, whole: tuple[str, ...]
) -> None:
    # (one subject of two things; or a second part that alone says too little to be kept)
    index = _sessions([user(said)])
    assert len(_held(index, *whole)) == 1, index


# A mention of where a password is kept is dropped (conservatively), the facts beside it not.


@pytest.mark.parametrize(
    ("said", "fact"),
    [
        ("the wifi password is on the fridge, also the bins go out thursdays", "bins"),
        (
            "the router password is in the blue folder and the recycling goes out on tuesdays",
            "recycling",
        ),
        ("the safe code is written in the ledger, also the shop opens at 9 on sundays", "9"),
        ("wifi password is Bramble2024! and the bins go out thursdays", "bins"),
    ],
)
def test_r6_a_fact_beside_a_password_mention_is_kept_and_the_mention_is_not(
    said: str, fact: str
) -> None:
    index = _sessions([user(said)])
    assert _held(index, fact), index
    low = index.lower()
    assert "password" not in low and "code" not in low and "Bramble" not in index, index


# A short value answering the assistant's question for one.


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        ("What pH should the buffer be?", "7.4"),
        ("How much is adult membership these days?", "£120"),
        ("What's the max occupancy for the hall?", "60"),
        ("How many players per side in the summer league?", "7"),
    ],
)
def test_r6_a_value_alone_answering_a_question_is_kept(asked: str, said: str) -> None:
    index = _sessions([bot(asked), user(said)])
    assert _held(index, asked_as(asked), said), index


# "X so Y": what is done, kept with the cause it is done for.


@pytest.mark.parametrize(
    "said",
    [
        "the back fridge runs warm so we keep milk in the front one",
        "the big autoclave leaks, so we only use the small one",
        "court 2 floods when it rains, so we book court 1 for evening sessions",
        "the till drawer jams, so we keep the float in the safe",
    ],
)
def test_r6_a_cause_and_what_is_done_for_it_are_one_entry(said: str) -> None:
    index = _sessions([user(said)])
    cause = said.split(" so ")[0].rstrip(",")
    assert len(_held(index, cause, said.split(" so ")[1])) == 1, index


def test_r6_a_cause_of_the_moment_is_not_kept() -> None:
    index = _sessions([user("the lift is broken today so we are using the stairs")])
    assert not _held(index, "lift"), index


# An emoji between progress and a fact parts them; one standing for a word stays.


@pytest.mark.parametrize(
    ("said", "fact", "progress"),
    [
        ("merged the big refactor 🚀 we use pnpm", "pnpm", "refactor"),
        (
            "finally shipped the new checkout 🎉 we deploy with github actions",
            "github actions",
            "checkout",
        ),
        (
            "wrapped up the stock take 🙌 the shop opens at 8 on saturdays now",
            "opens at 8",
            "stock take",
        ),
    ],
)
def test_r6_progress_beside_a_fact_is_left_and_the_fact_kept_alone(
    said: str, fact: str, progress: str
) -> None:
    index = _sessions([user(said)])
    assert _held(index, fact), index
    assert not _held(index, progress), index


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("the kids love ⚽ and we train on sundays", "love ⚽"),
        ("I love ☕ before clinic", "☕ before clinic"),
    ],
)
def test_r6_an_emoji_standing_for_a_word_stays(said: str, kept: str) -> None:
    index = _sessions([user(said)])
    assert _held(index, kept), index
    assert not any("love and" in e or "love before" in e for e in _entries(index)), index


# Pasted tables: one entry, its rows with a size kept whole; two rows under a heading.


@pytest.mark.parametrize(
    ("said", "rows"),
    [
        (
            "prices:\nethanol 1L 12.99\nacetone 500ml 8.50\ngloves 4.20",
            ("ethanol 1L 12.99", "acetone 500ml 8.50", "gloves 4.20"),
        ),
        ("membership\nadult 120\nchild 60", ("adult 120", "child 60")),
        ("subs\nseniors 90\njuniors 45", ("seniors 90", "juniors 45")),
        (
            "Room hire\nmain hall £25 an hour\nside room £12 an hour",
            ("main hall £25 an hour", "side room £12 an hour"),
        ),
        ("feed\nlayers pellets 20kg 14.50\nmixed corn 20kg 11", ("20kg 14.50", "20kg 11")),
    ],
)
def test_r6_a_pasted_table_is_one_entry(said: str, rows: tuple[str, ...]) -> None:
    index = _sessions([user(said)])
    assert len(_held(index, *rows)) == 1, index
    assert len(_entries(index)) == 1, index


def test_r6_a_table_pasted_again_is_not_added_again() -> None:
    table = "prices:\nethanol 1L 12.99\nacetone 500ml 8.50\ngloves 4.20"
    index = _sessions([user(table)], [user(table)])
    assert len(_entries(index)) == 1, index


@pytest.mark.parametrize(
    ("table", "update", "now", "gone"),
    [
        (
            "prices:\nethanol 1L 12.99\nacetone 500ml 8.50\ngloves 4.20",
            "ethanol is 13.49 now and gloves 4.50",
            ("ethanol 1L 13.49", "acetone 500ml 8.50", "gloves 4.50"),
            ("12.99", "4.20"),
        ),
        (
            "Price list:\nsourdough £4.50\nrye £4\nbaguette £2.20",
            "sourdough £4.80, baguette £2.40 now",
            ("sourdough £4.80", "rye £4", "baguette £2.40"),
            ("£4.50", "£2.20"),
        ),
        (
            "Subs:\nseniors £90\njuniors £45\nsocials £20",
            "seniors are £95 now and juniors £50",
            ("seniors £95", "juniors £50", "socials £20"),
            ("£90", "£45"),
        ),
        (
            "Fees:\ninitial assessment £60\nfollow up £45\nsports massage £40",
            "initial assessment is £65 now, follow up is £50",
            ("initial assessment £65", "follow up £50", "sports massage £40"),
            ("£60", "£45"),
        ),
    ],
)
def test_r6_two_prices_of_a_table_changed_at_once_are_written_into_it(
    table: str, update: str, now: tuple[str, ...], gone: tuple[str, ...]
) -> None:
    # Each new price was said with the words of the one it replaces, but only one changed
    # price was written in: two replaced the whole table, and the rows it did not name went.
    index = _sessions([user(table)], [user(update)])
    assert len(_entries(index)) == 1 and _held(index, *now), index
    assert not any(price in index for price in gone), index
