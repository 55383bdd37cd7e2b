"""The offline reviewer's learned second reading (R6, issue 11): a clause the rules find no
durable fact in is kept when the model trained on the development sets reads one in it, and
never where the rules must have the last word.

The phrasings here are written for this file, in settings of their own; none is a corpus line.
The helpers are those of :mod:`tests.review.test_offline`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from reverie.review import learned
from reverie.review.statements import read, second_reading
from tests.review.test_offline import (
    assert_changes_nothing,
    bot,
    days_later,
    index_after,
    review,
    turns,
    user,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))  # not a package
import train_durable


@pytest.mark.parametrize(
    "said",
    [
        "staff parking behind the Co-op, permit in the glovebox",
        "Tuesday club 10am at the Scout hut",
        "spare keys with Maureen at number 12",
        "gym 6am mon wed fri",  # the README's example
    ],
)
def test_r6_a_terse_fact_the_rules_find_nothing_in_is_kept(said: str) -> None:
    """A note said without a verb the rules know ("staff parking behind the Co-op, ...") is
    turned down by the rules and kept, as said, by the second reading."""
    assert read(said, role="user", speaker="Sam") == "no durable fact"
    index = index_after(review(turns("c1", user(said), bot("Will do."))))
    assert said in index, index


@pytest.mark.parametrize(
    "said",
    [
        "no, Thursday 6pm, the hall",  # a correction: it leans on what it corrects
        "Not Thursday, the hall is booked for bingo.",  # the same, said with "not"
        "bins out by 7am on tuesdays then",  # ends leaning on what was said before
        "parking for you behind the hall, bay 4",  # said to the listener
        "can Mailchimp send the receipts automatically",  # a question without its mark
    ],
)
def test_r6_what_the_rules_must_decide_is_not_read_again(said: str) -> None:
    """However high the model scores it, a correction, a clause that leans on another, one said
    to the listener and a question without its mark are left to the rules, which turn them
    down."""
    assert learned.chance(said) >= learned.THRESHOLD  # the model alone would keep it
    assert read(said, role="user", speaker="Sam") == "no durable fact"
    assert second_reading(said, "Sam") is None
    assert review(turns("c1", user(said), bot("Will do."))).operations == []


def test_r6_a_clause_the_reply_reads_back_is_left_to_the_read_back() -> None:
    """Where the assistant's read-back says again what a clause said, the read-back is what
    is kept (in its words), not the clause beside it."""
    said = "staff parking behind the Co-op, permit in the glovebox"
    index = index_after(
        review(
            turns(
                "c1",
                user(said),
                bot("Noted: staff parking is behind the Co-op, permit in the glovebox."),
            )
        )
    )
    entries = [line for line in index.split("\n") if line.startswith("- ")]
    assert len(entries) == 1, index
    assert "parking is behind the Co-op" in entries[0], index


def test_r6_an_introduction_after_a_heading_names_no_one_new() -> None:
    """ "Quick intro before we start: I'm Dana", said by Dana, says no more than who speaks."""
    said = "Quick intro before we start: I'm Dana"
    assert learned.chance(said) >= learned.THRESHOLD
    assert second_reading(said, "Dana") is None


def test_r6_a_message_that_opens_by_correcting_is_left_to_the_rules() -> None:
    """ "no. 120 chairs. end of June.": each piece leans on what it corrects, so none is kept
    alone, and the conversations read again change nothing (the model alone would keep "end
    of June", which, read again after the date moved, came back)."""
    assert learned.chance("end of June") >= learned.THRESHOLD
    first = turns(
        "c1",
        user("big order: Harbour Hotel want 120 folding chairs by end of June"),
        bot("Noted: Harbour Hotel, 210 chairs, due end of July."),
        user("no. 120 chairs. end of June. read it again"),
        bot("Sorry. Harbour Hotel: 120 folding chairs, due end of June."),
    )
    index = index_after(review(first))
    later = days_later(
        8,
        turns(
            "c2",
            user(
                "Harbour Hotel's refurb is late so they've pushed the chairs back to mid July. "
                "still 120"
            ),
            bot("Updated: Harbour Hotel's 120 chairs now due mid July."),
        ),
    )
    after = index_after(review(later, index=index), index)
    entries = [line for line in after.split("\n") if line.startswith("- ")]
    assert not [e for e in entries if e.startswith("- end of June")], after
    assert_changes_nothing(first + later, after)


def test_r6_without_weights_nothing_is_read_again() -> None:
    """No weights (a checkout where the model was not trained): every clause scores 0."""
    assert learned.chance("staff parking behind the Co-op, permit in the glovebox", {}) == 0.0


def test_the_features_are_a_clauses_words_and_shapes() -> None:
    feats = learned.features("Bins out Tuesday, £5 fine")
    assert {
        "w=bins",
        "w=tuesday",
        "f=bins",
        "s=out|C",
        "s=C|$",
        "s=$|#",
        "nums=1",
        "caps=1",
    } <= set(feats)
    assert learned.features("") == ["bias", "empty"]


def test_the_weights_are_features_and_training_is_repeatable() -> None:
    """The committed weights are a flat map of feature to number, and the trainer gives the
    same weights twice on the same clauses (a fixed order, no clock, no randomness)."""
    weights = json.loads(learned.WEIGHTS.read_text(encoding="utf-8"))
    assert weights and all(isinstance(v, float) for v in weights.values())
    assert {k.split("=", 1)[0] for k in weights} <= {
        "bias",
        "w",
        "s",
        "s3",
        "f",
        "f2",
        "l",
        "len",
        "caps",
        "nums",
    }
    data = train_durable.examples(["dev"])
    assert data and {y for _, y in data} == {0, 1}
    assert train_durable.train(data) == train_durable.train(data)


def test_the_held_out_set_is_never_trained_on() -> None:
    with pytest.raises(SystemExit, match="held out"):
        train_durable.examples([train_durable.HELD_OUT])
