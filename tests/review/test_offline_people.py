"""The offline reviewer (R6, R8) on people, their roles and the lists of who does what: found
by an outside audit (2026-12-06) whose phrasings nobody here wrote, then phrased again in
other settings (lab, clinic, household, sports club, shop).

Each scenario is reviewed as a user meets it, one conversation after another, and then all its
messages again as one batch against the memory that made, which must change nothing. The
helpers are those of :mod:`tests.review.test_offline`.
"""

from __future__ import annotations

import re

import pytest

from reverie.review.types import Turn
from tests.review.test_offline import (
    assert_changes_nothing,
    days_later,
    index_after,
    review,
    turns,
    user,
)


def _entries(index: str) -> list[str]:
    return [line for line in index.split("\n") if line.startswith("- ")]


def _reviewed(*said: str) -> list[str]:
    """The entries after each of ``said`` is reviewed as a conversation of its own, three days
    apart; all of them given again as one batch change nothing."""
    batch: list[Turn] = []
    index: str | None = None
    for n, text in enumerate(said):
        given = days_later(3 * n, turns(f"c{n + 1}", user(text)))
        batch += given
        out = review(given, index=index)
        index = index_after(out, index) if out.operations else index
    assert index is not None, said
    assert_changes_nothing(batch, index)
    return _entries(index)


def _holding(lines: list[str], *words: str) -> list[str]:
    """The lines that name each of ``words`` (whole words, case-blind)."""
    return [line for line in lines if all(re.search(rf"\b{w}\b", line, re.I) for w in words)]


# Who does what, said of people in lower case


@pytest.mark.parametrize(
    ("said", "names"),
    [
        ("kim and raj do the mass spec bookings", ("Kim", "Raj")),
        ("sara and li do the stock takes", ("Sara", "Li")),
        ("dave is our coach", ("Dave",)),
        ("dr okafor is my gp", ("Okafor",)),
        ("tom, aisha and ben take the bins out", ("Tom", "Aisha", "Ben")),
    ],
)
def test_r6_who_does_what_said_in_lower_case_is_kept(said: str, names: tuple[str, ...]) -> None:
    # A capital was the only mark of a name: "kim and raj do the mass spec bookings" had no
    # name, no value and no cue, and was dropped as a truism. Two words joined by "and" before
    # a verb of a duty, someone's "is our coach", a title: those are people.
    lines = _reviewed(said)
    assert _holding(lines, *names), lines
    assert all(n in " ".join(lines) for n in names), lines  # spelled as names


# One person of a list stands in for another


@pytest.mark.parametrize(
    ("first", "later", "stays", "now", "gone"),
    [
        (
            "anna and mo do the front desk on mondays",
            "mo's on leave, priya is covering for him",
            "anna",
            "priya",
            "mo",
        ),
        (
            "kim and raj do the mass spec bookings",
            "raj is away till june, lena's covering his bookings",
            "kim",
            "lena",
            "raj",
        ),
        (
            "ben and ella coach the under 9s",
            "ella's on maternity leave, marcus is covering for her",
            "ben",
            "marcus",
            "ella",
        ),
        (
            "Jake and Chloe do the saturday shifts",
            "Chloe quit, Ruby's doing her saturdays now",
            "jake",
            "ruby",
            "chloe",
        ),
        (
            "sue and pete run the tuck shop on fridays",
            "pete's quit, dan has taken over his fridays",
            "sue",
            "dan",
            "pete",
        ),
    ],
)
def test_r8_someone_covering_for_one_of_a_list_takes_their_place(
    first: str, later: str, stays: str, now: str, gone: str
) -> None:
    # "priya is covering for him" named no one the reviewer took for a person, so the list
    # was left as it was; or the list lost the one who went ("Jake do the saturday shifts")
    # before the one who came was read.
    lines = _reviewed(first, later)
    holding = _holding(lines, stays, now)
    assert holding, lines
    assert not _holding(holding, gone), lines


# Who someone is to the speaker, and its change


@pytest.mark.parametrize(
    ("first", "later", "now", "gone"),
    [
        ("my supervisor is helen", "tom is now my supervisor", "Tom", "helen"),
        ("my manager is priya", "marco is now my manager", "Marco", "priya"),
        ("dave is our coach", "sian is now our coach", "Sian", "dave"),
        ("dr okafor is my gp", "dr okafor is no longer my gp, it's dr shah now", "Shah", None),
    ],
)
def test_r8_a_new_holder_of_a_role_replaces_the_old(
    first: str, later: str, now: str, gone: str | None
) -> None:
    lines = _reviewed(first, later)
    assert _holding(lines, now), lines
    assert len(lines) == 1, lines
    if gone is not None:
        assert not _holding(lines, gone), lines


@pytest.mark.parametrize(
    ("first", "later", "who", "role"),
    [
        ("my supervisor is helen", "helen left the uni last month", "helen", "supervisor"),
        ("helen is my supervisor", "helen left the uni last month", "helen", "supervisor"),
        ("dave is our coach", "dave left the club in the summer", "dave", "coach"),
        ("my manager is priya", "priya left the company on friday", "priya", "manager"),
    ],
)
def test_r8_someone_who_left_is_no_longer_what_they_were(
    first: str, later: str, who: str, role: str
) -> None:
    # "helen left the uni last month" named no one the reviewer knew (it was in lower case),
    # and "Helen is my supervisor" stayed.
    lines = _reviewed(first, later)
    assert not _holding(lines, who, role), lines


# A duty said again in the progressive: "X is doing ..."


@pytest.mark.parametrize(
    ("first", "later", "now", "gone"),
    [
        (
            "Jen does the school run on tuesdays and thursdays",
            "Jen is doing mondays and wednesdays now",
            "mondays and wednesdays",
            "tuesdays",
        ),
        (
            "Marco runs the u10s training on tuesdays",
            "Marco is doing wednesdays now",
            "wednesdays",
            "tuesdays",
        ),
        ("Priya opens the shop on saturdays", "Priya is doing sundays now", "sundays", "saturdays"),
        ("Kim books the mass spec on mondays", "Kim is doing fridays now", "fridays", "mondays"),
        (
            "Jen does the tuesday school run",
            "Jen is doing mondays and wednesdays now",
            "mondays",
            "tuesday",
        ),
    ],
)
def test_r8_someone_is_doing_another_day_now_updates_their_duty(
    first: str, later: str, now: str, gone: str
) -> None:
    # "jen's doing mondays now" updated the school run, "Jen is doing mondays now" was kept
    # beside it: "doing" was read as a word of content, which "does" is not.
    lines = _reviewed(first, later)
    assert len(lines) == 1 and now in lines[0], lines
    assert gone not in lines[0], lines


# The speaker and someone else, as one subject


@pytest.mark.parametrize(
    ("said", "names"),
    [
        ("tom and i do the bins", ("Tom", "I")),
        ("ali and I do the early shifts at the shop", ("Ali", "I")),
        ("kim and I run the journal club", ("Kim", "I")),
        ("me and tom do the bins", ("Me", "Tom")),
    ],
)
def test_r6_someone_and_the_speaker_doing_something_keeps_both(
    said: str, names: tuple[str, ...]
) -> None:
    # "tom and i do the bins" was cut before "and i" and kept as "Sam does the bins".
    lines = _reviewed(said)
    assert _holding(lines, *names), lines


@pytest.mark.parametrize(
    ("first", "later", "now", "gone"),
    [
        (
            "rob does the school run on mondays, I do tuesdays",
            "me and rob swapped school runs, he does tuesdays now",
            "he does tuesdays now",
            "I do tuesdays",
        ),
        (
            "Ali does the early shift, I do lates",
            "ali and I swapped shifts, he's on lates now",
            "he's on lates now",
            "early shift",
        ),
        (
            "ali does the early shift",
            "ali and I swapped shifts, he's on lates now",
            "lates",
            "early",
        ),
        (
            "Priya does the Saturday till, I do Sundays",
            "Priya and I have swapped weekends, she's on Sundays now",
            "she's on Sundays",
            "Saturday till",
        ),
        (
            "mia has a peanut allergy, rob does the school run on tuesdays",
            "me and rob swapped school runs, he does mondays now",
            "he does mondays now",
            "on tuesdays",
        ),
    ],
)
def test_r8_a_swap_between_the_speaker_and_someone_replaces_who_did_what(
    first: str, later: str, now: str, gone: str
) -> None:
    # "me and rob swapped school runs, he does tuesdays now" was kept beside "rob does the
    # school run on mondays, I do tuesdays", joined to its "I do tuesdays".
    lines = _reviewed(first, later)
    assert [line for line in lines if now in line], lines
    assert not [line for line in lines if gone in line], lines
    if "allergy" in first:
        assert _holding(lines, "peanut allergy"), lines  # what it said of others stays
