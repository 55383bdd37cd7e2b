"""The offline reviewer's learned readings (R6, issue 11): a clause the rules find no durable
fact in is kept when the model trained on the development sets reads one in it, and never where
the rules must have the last word; a statement the rules would keep beside an entry it changes
updates that entry when the second model reads it as an update.

The phrasings here are written for this file, in settings of their own; none is a corpus line.
The helpers are those of :mod:`tests.review.test_offline`.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from unittest import mock

import pytest

from reverie.review import learned
from reverie.review.statements import read, second_reading
from reverie.review.types import Turn
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
import train_updates


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


# The learned reading of updates (learned.update_chance): a statement the rules would keep
# beside an entry it changes.

_KIERAN = (
    "We have a work-experience lad, Kieran, from Bishop's College, he's with us till 12 June. "
    "His tutor is Mr Oduya."
)


def _entries(index: str) -> list[str]:
    return [line for line in index.split("\n") if line.startswith("- ")]


def _after(later: str) -> tuple[list[Turn], str]:
    """The turns of a first conversation that introduces Kieran and a second, three days later,
    that says ``later``; and memory after both."""
    first = turns("c1", user(_KIERAN), bot("Okay."))
    second = days_later(3, turns("c2", user(later), bot("Got it.")))
    index = index_after(review(first))
    return first + second, index_after(review(second, index=index), index)


def test_r6_an_update_no_rule_connects_changes_the_entry_it_updates() -> None:
    """ "Kieran's placement extended to 26 June" says no word the rules take for an update of
    "he's with us till 12 June" in an entry about more: the rules keep it beside the entry, and
    the old date stays. The learned reading takes it for an update of that entry: the old date
    goes, what else the entry said stays, and the conversations read again change nothing."""
    later = "Kieran's placement extended to 26 June, the college asked."
    with mock.patch.object(learned, "update_chance", lambda *_: 0.0):
        _, rules_only = _after(later)
    assert "12 June" in rules_only and "26 June" in rules_only  # the rules alone: both
    said, index = _after(later)
    assert "12 June" not in index, index
    assert "26 June" in index and "Mr Oduya" in index, index
    assert len(_entries(index)) == 1, index
    assert_changes_nothing(said, index)


def test_r6_a_new_fact_about_the_same_person_is_kept_beside() -> None:
    """What adds to an entry ("Kieran passed his forklift test") changes nothing it said."""
    said, index = _after("Kieran passed his forklift test on Friday.")
    assert "12 June" in index and "forklift" in index, index
    assert len(_entries(index)) == 2, index
    assert_changes_nothing(said, index)


def test_update_features_say_what_a_pair_shares_and_how_it_differs() -> None:
    feats = set(
        learned.update_features(
            "Kieran's placement extended to 26 June.",
            f"Sam: {_KIERAN} (source: c1#0-1)",
        )
    )
    # "Kieran's" is Kieran; the dates differ; "extended" is a word of change
    assert {"sh=kieran", "capsh=1", "kd=date", "u=upd", "kd=date&upd&shn"} <= feats, feats
    assert not any(f.startswith("sh=source") or f == "sh=sam" for f in feats)


def test_r6_without_update_weights_the_rules_alone_decide() -> None:
    assert learned.update_chance("Kieran's placement extended to 26 June.", _KIERAN, {}) == 0.0


def test_the_update_weights_are_features_and_training_is_repeatable() -> None:
    weights = json.loads(learned.UPDATE_WEIGHTS.read_text(encoding="utf-8"))
    assert weights and all(isinstance(v, float) for v in weights.values())
    heads = {re.split(r"[=&]", k)[0] for k in weights}
    assert heads <= {
        *("bias", "sh", "shared", "capsh", "capnew", "capold", "numnew", "numold", "numsh"),
        *("elen", "slen", "konly", "kd", "kadd", "ksame", "u", "plain"),
        *("capdiff", "numdiff", "nodiff"),
    }, heads
    data = [
        ("Kieran's placement extended to 26 June.", _KIERAN, 1),
        ("Kieran passed his forklift test on Friday.", _KIERAN, 0),
        ("Tessa's leave runs to 9 May now.", "Tessa is on leave until 2 May.", 1),
        ("Tessa likes the window desk.", "Tessa is on leave until 2 May.", 0),
    ]
    fitted = train_updates.train(data)
    assert fitted and fitted == train_updates.train(data)  # weights, and the same ones twice


def test_the_held_out_set_never_gives_update_pairs() -> None:
    with pytest.raises(SystemExit, match="held out"):
        train_updates.examples(["dev", train_updates.HELD_OUT])
