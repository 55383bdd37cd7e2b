"""The offline reviewer (R6) reading new users as they type: found by a third outside audit
(2026-12-06), in which a tester played new users (lower case, run-on sentences, emoji).

The helpers are those of :mod:`tests.review.test_offline`.
"""

from __future__ import annotations

import pytest

from reverie.review.sentences import sentences
from tests.review.test_offline import (
    asked_as,
    assert_changes_nothing,
    bot,
    days_later,
    index_after,
    review,
    section_of,
    turns,
    user,
)


def _entries(index: str) -> list[str]:
    return [line for line in index.split("\n") if line.startswith("- ")]


# An answer to the assistant's question is kept with the question, citing both.


@pytest.mark.parametrize(
    ("asked", "said", "question"),
    [
        (
            "When and where does the running club meet? I can add it to your notes.",
            "sundays 10am at Victoria park",
            "When and where does the running club meet?",
        ),
        (
            "Thanks! Which lab do you send bloods to? I'll note it for the rota.",
            "the hospital lab, collection at 2pm",
            "Which lab do you send bloods to?",
        ),
        (
            "Who's your landlord? Do you have their number?",
            "mr patel, 07700 900123",
            "Who's your landlord?",
        ),
    ],
)
def test_r6_an_answer_to_a_question_with_more_said_after_it_is_kept(
    asked: str, said: str, question: str
) -> None:
    # Only a message that ended with its question was taken as asking one: a question
    # followed by an offer ("I can add it to your notes") or by a second question lost the
    # answer. Of several, the question kept is the one that asks for a value.
    batch = turns("c1", bot(asked), user(said))
    index = index_after(review(batch))
    # (case-blind: "mr patel" is spelled "Mr Patel", a name)
    entry = next((e for e in _entries(index) if said.lower() in e.lower()), None)
    assert entry is not None, index
    assert f"asked {asked_as(question)}" in entry and "(source: c1#0-2)" in entry, entry
    assert_changes_nothing(batch, index)


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        ("Where do you keep the spare keys?", "under the blue pot by the back door"),
        ("Which database did you pick?", "postgres, the managed one on aws"),
        ("Where are the invoices saved?", "the shared drive, in the finance folder"),
    ],
)
def test_r6_a_verbless_answer_naming_a_thing_by_a_word_that_may_be_a_verb_is_kept(
    asked: str, said: str
) -> None:
    # "the back door", "the managed one", "the shared drive": a word after a determiner
    # names a thing; read as a verb ("back", "managed", "shared"), the answer had a verb of
    # its own and was dropped.
    index = index_after(review(turns("c1", bot(asked), user(said))))
    assert any(said in e and asked_as(asked) in e for e in _entries(index)), index


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        ("Which database did you pick?", "postgres"),
        ("Which vet do you use?", "riverside"),
        ("who's your landlord?", "patel"),
    ],
)
def test_r6_a_one_word_answer_to_a_question_naming_what_it_asks_for_is_kept(
    asked: str, said: str
) -> None:
    index = index_after(review(turns("c1", bot(asked), user(said))))
    assert any(f"{asked_as(asked)}: {said}" in e for e in _entries(index)), index


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        ("Which one did you go with?", "dunno"),
        ("Which database did you pick?", "thanks"),
        ("What's up?", "nothing much"),
        ("What do you want to work on today?", "invoices"),
    ],
)
def test_r6_a_one_word_reply_that_answers_nothing_is_not_kept(asked: str, said: str) -> None:
    assert not review(turns("c1", bot(asked), user(said))).operations


def test_r6_an_answer_to_a_secret_asked_beside_another_question_is_not_kept() -> None:
    # The question picked among several is the one asking for a secret: its answer stays out.
    batch = turns(
        "c1",
        bot("What's the wifi password? And where is the router?"),
        user("hunter22, under the stairs"),
    )
    out = review(batch)
    assert not out.operations or "hunter22" not in index_after(out), out.operations


# A fact, then what follows from it after "so".


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("alfie is lactose intolerant so no normal milk for him", "Alfie is lactose intolerant"),
        ("mia is allergic to nuts so nothing with pesto for her", "Mia is allergic to nuts"),
        ("the staging db is a read replica so no writes to it", "staging db is a read replica"),
    ],
)
def test_r6_a_fact_with_its_consequence_after_so_is_kept(said: str, kept: str) -> None:
    # What follows "so" leans on the fact ("him", "it"): read as one clause, the pronoun made
    # the whole of it lean on something said elsewhere, and the fact was lost.
    batch = turns("c1", user(said))
    index = index_after(review(batch))
    entry = next((e for e in _entries(index) if kept in e), None)
    assert entry is not None, index
    assert said.split(" so ", 1)[1] in entry, entry  # and the consequence, which holds too
    assert_changes_nothing(batch, index)


def test_r6_an_allergy_with_its_consequence_is_about_people() -> None:
    said = "alfie is lactose intolerant so no normal milk for him"
    index = index_after(review(turns("c1", user(said))))
    assert section_of(index, "Alfie is lactose intolerant") == "People & preferences", index


@pytest.mark.parametrize(
    "said",
    ["we're out of oat milk so no oat lattes today", "the card machine is down so cash only today"],
)
def test_r6_a_fact_whose_consequence_is_of_the_moment_is_not_kept(said: str) -> None:
    # (what follows "so" is of today: what it follows from most often is too)
    assert not review(turns("c1", user(said))).operations


# A pasted price table is one entry.


@pytest.mark.parametrize(
    ("said", "rows"),
    [
        (
            "Prices:\nflat white 3.20\nlatte 3.40\ncappuccino 3.40\nmocha 3.60",
            ["flat white 3.20", "latte 3.40", "cappuccino 3.40", "mocha 3.60"],
        ),
        (
            "treatment prices:\ninitial consultation £60\nfollow up £45\nnail surgery £350\n"
            "orthotics assessment £80",
            ["initial consultation £60", "follow up £45", "nail surgery £350", "£80"],
        ),
        (
            "cloud costs per month:\n- prod cluster $2,400\n- staging $600\n- ci runners $350\n"
            "- backups $90",
            ["prod cluster $2,400", "staging $600", "ci runners $350", "backups $90"],
        ),
        (
            "our prices\nflat white | 3.20\nlatte | 3.40\ncappuccino | 3.40",
            ["flat white 3.20", "latte 3.40", "cappuccino 3.40"],
        ),
        (
            "day rates\nsmall van\t£45\nlarge van\t£70\nluton\t£95",
            ["small van £45", "large van £70", "luton £95"],
        ),
    ],
)
def test_r6_a_pasted_price_table_is_kept_as_one_entry(said: str, rows: list[str]) -> None:
    # Kept a line at a time, a table flooded memory with one entry a row, and a row of one
    # word and a price ("latte 3.40") said too little and was lost: the table is one thing
    # given, kept whole like a price list typed on one line.
    batch = turns("c1", user(said))
    index = index_after(review(batch))
    entries = _entries(index)
    assert len(entries) == 1, entries
    assert all(row in entries[0] for row in rows), entries
    assert_changes_nothing(batch, index)


def test_r6_a_price_of_a_pasted_table_is_updated_in_its_entry() -> None:
    first = index_after(
        review(turns("c1", user("Prices:\nflat white 3.20\nlatte 3.40\ncappuccino 3.50")))
    )
    later = turns("c2", user("latte is going up to 3.60 from monday"))
    index = index_after(review(later, first), first)
    assert "latte 3.60" in index and "3.40" not in index, index
    assert "flat white 3.20" in index and "cappuccino 3.50" in index, index


@pytest.mark.parametrize(
    ("update", "changed", "kept"),
    [
        ("big van is going up to £95 a day from june", "big van £95", ["£60", "£25"]),
        ("the trailer is now £30 a day", "trailer £30", ["£90", "£60"]),
    ],
)
def test_r6_a_price_of_a_pasted_hire_table_is_updated_in_its_entry(
    update: str, changed: str, kept: list[str]
) -> None:
    said = "Hire rates:\nbig van £90 a day\nsmall van £60 a day\ntrailer £25 a day"
    first = index_after(review(turns("c1", user(said))))
    later = days_later(3, turns("c2", user(update)))
    index = index_after(review(later, first), first)
    entries = _entries(index)
    assert len(entries) == 1 and changed in entries[0], entries
    assert all(price in entries[0] for price in kept), entries


def test_r6_two_priced_lines_are_no_table() -> None:
    # (fewer than three rows and no heading: each line is read as before; under a heading two
    # rows are a table, see test_offline_pieces.py)
    said = "full day £160 a week\nhalf day £95 a week"
    entries = _entries(index_after(review(turns("c1", user(said)))))
    assert not any("full day" in e and "half day" in e for e in entries), entries


# An emoji that ends a thought ends its sentence.


@pytest.mark.parametrize(
    ("said", "kept", "not_kept"),
    [
        ("great news 🎉 we signed the lease on the new shop", "signed the lease", "news"),
        ("done ✅ moved the server to hetzner", "moved the server to hetzner", "done"),
        ("sorted 👍 the build runs on github actions now", "github actions", "sorted"),
    ],
)
def test_r6_an_emoji_between_two_thoughts_ends_the_first(
    said: str, kept: str, not_kept: str
) -> None:
    # With the emoji taken out, "great news we signed the lease" ran on as one sentence, and
    # the exclamation before it went into the entry.
    index = index_after(review(turns("c1", user(said))))
    entry = next((e for e in _entries(index) if kept in e), None)
    assert entry is not None, index
    assert not_kept not in entry.lower(), entry


def test_r6_an_emoji_standing_for_a_word_is_no_sentence_break() -> None:
    assert len(sentences("I love ☕ in the morning")) == 1
    assert len(sentences("we got the 🍕 oven fixed at last")) == 1
    assert len(sentences("sundays 10am at Victoria park 🙂")) == 1
    assert [s for _, _, s in sentences("yay 🥳 Priya starts as practice manager on the 3rd")] == [
        "yay 🥳",
        "Priya starts as practice manager on the 3rd",
    ]


# Guards: what the new readings must not let in (these held before too).


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        # a verb after the thing's name is its verb
        ("What does the secretary's job involve?", "The packhouse runs itself mostly."),
        # an offer of help, asked with more after it: what they want help with is no answer
        (
            "Welcome! What would you like help with? I can do rotas and emails.",
            "rotas, the volunteer emails, and the fundraising",
        ),
    ],
)
def test_r6_what_reads_as_no_answer_stays_out(asked: str, said: str) -> None:
    out = review(turns("c1", bot(asked), user(said)))
    assert not out.operations or asked not in index_after(out), out.operations


def test_r6_a_feeling_after_a_greeting_and_an_emoji_is_not_kept() -> None:
    # "hi everyone 👋 excited to be here": parted by the emoji, the feeling has no "I'm"
    assert not review(turns("c1", user("hi everyone 👋 excited to be here"))).operations


def test_r6_two_statements_parted_by_an_emoji_stay_one_entry() -> None:
    # "last day is the 27th" leans on who is leaving: the emoji parts no statement from the
    # statement it goes on with
    said = "marcus is off to open his own barbers in Newport 😭 last day is the 27th of june"
    entries = _entries(index_after(review(turns("c1", user(said)))))
    assert any("Newport" in e and "27th of june" in e for e in entries), entries
