"""Names as a batch spells them (SPEC R6, issue 11): a lower-case message read with the
capitals the assistant or memory gave its names."""

from __future__ import annotations

import pytest

from reverie.review.spelling import recase, spellings
from tests.review.test_offline import (
    assert_changes_nothing,
    bot,
    days_later,
    index_after,
    review,
    turns,
    user,
)


def test_r6_a_name_is_learnt_where_it_is_spelled_with_capitals() -> None:
    found = spellings(
        [
            "Thanks, Dr Nia Evans at Usk Vets.",  # mid-sentence, and a run of two words
            "Noted.",  # a sentence's first word teaches nothing
            "Sea Lark takes 10 divers.",  # two words opening a sentence are a name
            "Burns is what we feed.",  # one word opening a sentence: maybe any word
            "Great, see you Monday at Bramble Cottage.",  # not a day or a month
        ]
    )
    assert found["nia evans"] == "Nia Evans"
    assert found["usk vets"] == "Usk Vets"
    assert found["sea lark"] == "Sea Lark"
    assert "noted" not in found and "burns" not in found and "monday" not in found
    assert found["bramble cottage"] == "Bramble Cottage"


def test_r6_memory_headings_and_entry_openings_teach_nothing() -> None:
    index = (
        "# Memory\n\n## People & preferences\n- Billing escalations go to Ruairi. (source: c1#0-1)"
        "\n- Sam: Payroll runs on Fridays. (source: c1#1-2)\n"
    )
    found = spellings([index])
    assert "people" not in found and "memory" not in found
    assert "billing" not in found and "payroll" not in found
    assert found["ruairi"] == "Ruairi"


def test_r6_only_whole_lower_case_words_are_recased_and_nothing_moves() -> None:
    names = {"usk vets": "Usk Vets", "usk": "Usk", "nia evans": "Nia Evans"}
    said = "we moved from usk vets to another practice. nia evans said USK Vets is fine. tusk"
    out = recase(said, names)
    assert len(out) == len(said)
    assert out.startswith("we moved from Usk Vets to another practice. Nia Evans said")
    assert "USK Vets" in out  # typed with capitals: left as typed
    assert out.endswith("tusk")  # inside a word: not the name


def test_r6_a_lower_case_handover_is_read_with_the_names_the_assistant_spelled() -> None:
    # "jim pollard has retired": once the assistant has spelled the name, the lower-case
    # message names the entry, and the retirement replaces it.
    index = index_after(
        review(
            turns(
                "c0",
                user("our farrier is jim pollard from ashby forge"),
                bot("Noted: Jim Pollard from Ashby Forge."),
                author="bev",
            )
        )
    )
    out = review(
        turns(
            "c1",
            user("jim pollard has retired, we use kate rowe now"),
            bot("OK, Kate Rowe from now on."),
            author="bev",
        ),
        index,
    )
    after = index_after(out, index)
    assert "Kate Rowe" in after
    assert "jim pollard" not in after.lower()


def test_r6_a_word_said_to_have_an_allergy_or_a_diet_is_a_name() -> None:
    # Second outside audit: "mia has a severe peanut allergy" lost the allergy, "mia" read
    # as a common word. Said of the sentence's first word, with nothing before it, it is a
    # name; a common word ("the menu") or one talking is none.
    assert spellings(["mia has a severe peanut allergy"]) == {"mia": "Mia"}
    assert spellings(["ok. alfie is lactose intolerant"]) == {"alfie": "Alfie"}
    assert spellings(["the menu has a vegan option", "she is vegetarian"]) == {}
    assert spellings(["sam is coeliac"], people=["sam"]) == {}


@pytest.mark.parametrize(
    "memory",
    [
        "- Mia has a peanut allergy. (source: c1#0-1)",
        "## People & preferences\n- Sam: Mia has a severe peanut allergy. (source: c1#0-1)",
        "- Mia is lactose intolerant, so oat milk only. (source: c1#0-1)",
    ],
)
def test_r6_a_name_memory_gives_an_allergy_is_learnt_from_memory(memory: str) -> None:
    # Memory writes the name with a capital at the head of an entry, where one capitalised
    # word teaches nothing: a later "mia is ok with almonds" was read as no one's and lost,
    # while the same messages reviewed as one batch kept it (the idle re-run changed memory).
    assert spellings([memory]) == {"mia": "Mia"}
    assert recase("mia is ok with almonds tho", spellings([memory])) == "Mia is ok with almonds tho"


@pytest.mark.parametrize(
    ("first", "later", "kept"),
    [
        ("mia has a peanut allergy", "mia is ok with almonds tho", "Mia is ok with almonds"),
        ("raj is allergic to latex", "raj handles the mass spec bookings", "Raj handles"),
        ("alfie is lactose intolerant", "alfie is fine with oat milk btw", "Alfie is fine"),
    ],
)
def test_r6_a_later_lower_case_message_about_someone_memory_names_is_kept(
    first: str, later: str, kept: str
) -> None:
    # Found by the re-audit of this round: reviewed in its own conversation, the later fact was
    # lost; the two conversations given again as one batch kept it, so an idle re-run changed
    # memory.
    index = index_after(review(turns("c1", user(first))))
    after = index_after(review(days_later(3, turns("c2", user(later))), index=index), index)
    assert kept in after, after
    assert_changes_nothing(
        turns("c1", user(first)) + days_later(3, turns("c2", user(later))), after
    )
