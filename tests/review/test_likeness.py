"""The offline reviewer's default likeness (review/likeness.py): the words two statements
share, asked for an update or an ending that no rule connected (R6).

Each end-to-end case here was kept by the rules alone as two entries, the stale one beside the
new one; the guards that keep the likeness off other people's and other things' facts are
tested in test_offline.py (a person with a value of their own, a price of one group, a terse
ending, someone else's fact that names the same thing).
"""

from __future__ import annotations

import pytest

from reverie.review.likeness import SharedWords, features
from tests.review.test_offline import _after, index_after, review, turns, user


def entries(index: str) -> list[str]:
    return [line for line in index.splitlines() if line.startswith("- ")]


def test_features_are_words_names_and_kinds_of_value_not_the_values() -> None:
    f = features("Senior membership is £420 a season at Ice Rink Oxford.")
    assert {"membership", "season"} <= f
    assert "name:ice rink oxford" in f and "word:oxford" in f
    assert "kind:amount" in f
    assert not any("420" in x for x in f)  # the value itself is what an update changes
    # A source and a "Sam: " attribution are not what it says.
    assert features("Sam: Senior membership is £420. (source: c1#0-1)") == features(
        "Senior membership is £420."
    )


def test_shared_words_score_is_the_cosine_of_the_two_sets() -> None:
    likeness = SharedWords()
    same = "Ewan is lead driver on the Skye tours."
    a, b = features(same), features("Gary does the Skye tours now.")
    (score,) = likeness.similarities(same, ["Gary does the Skye tours now."])
    assert score == pytest.approx(len(a & b) / (len(a) * len(b)) ** 0.5)
    assert 0 < score < 1
    assert likeness.similarities(same, [same]) == [pytest.approx(1.0)]
    # The person two statements are said of is not what they share.
    said_of_audrey = ["Audrey has never gone on a fishing trip before."]
    assert likeness.similarities("Audrey loves cooking.", said_of_audrey) == [0.0]
    # Two values of one kind and nothing else in common are two facts, not one slot.
    assert likeness.similarities("Tom has 3 kids.", ["Lena looks after 12 hives."]) == [0.0]


@pytest.mark.parametrize(
    ("old", "new", "stale"),
    [
        # the same named tours, another driver, said to do them now
        ("Ewan is lead driver on the Skye tours.", "Gary does the Skye tours now.", "Ewan"),
        # a named job taken over by another person
        (
            "Wells Cathedral tuning is Clare's job, quarterly visits.",
            "Josh takes over the Wells tuning from April.",
            "Clare",
        ),
    ],
)
def test_r6_an_update_no_rule_connects_replaces_the_entry_it_shares_words_with(
    old: str, new: str, stale: str
) -> None:
    index = _after(old, new)
    kept = entries(index)
    assert len(kept) == 1, kept
    assert stale not in kept[0] and new.rstrip(".") in kept[0]


def test_r6_an_unrelated_entry_stays_beside_the_update() -> None:
    index = _after(
        "Ewan is lead driver on the Skye tours.",
        "The van goes in for its MOT on Fridays.",
        "Gary does the Skye tours now.",
    )
    kept = entries(index)
    assert any("MOT on Fridays" in e for e in kept)
    assert not any("Ewan" in e for e in kept)


def test_r6_an_update_found_by_shared_words_idles_cleanly() -> None:
    first = turns("c0", user("Ewan is lead driver on the Skye tours."))
    index = index_after(review(first))
    later = turns("c1", user("Gary does the Skye tours now."))
    after = index_after(review(later, index), index)
    assert "Ewan" not in after and "Gary does the Skye tours" in after
    # Both conversations read again, against the memory they made: nothing changes.
    again = review([*first, *later], after)
    assert not again.operations or index_after(again, after) == after


def test_r6_new_and_since_alone_send_nothing_to_the_likeness() -> None:
    # Casual talk is full of them (LoCoMo): "a new job" changes no fact memory holds, and
    # "ever since" ends none.
    old = "Swimming is a good choice for the joints, Evan."
    index = _after(old, "Evan is on the hunt for a new job.")
    assert any("good choice for the joints" in e for e in entries(index))
    old = "Seems like forever since we caught up, Jolene."
    index = _after(old, "Jolene has been hooked on yoga ever since.")
    assert any("forever since we caught up" in e for e in entries(index))
