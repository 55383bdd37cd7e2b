"""An update that names a new value in the slot an entry fills replaces it (R6;
review/slots.py), and facts that merely look alike are left alone."""

from __future__ import annotations

import pytest

from reverie.review.changes import supersedes
from reverie.review.frames import entry_frame, frame
from reverie.review.slots import measures, read_slot, refills
from reverie.review.statements import Statement, read, secret_values


def _updates(old_entry: str, said: str, speaker: str = "Sam") -> bool:
    return supersedes(frame(said, speaker), entry_frame(old_entry))


@pytest.mark.parametrize(
    ("old", "said"),
    [
        # The slot by a category only: paging and alerts are both alerting.
        ("Paging goes through PagerDuty.", "Opsgenie handles alerts now."),
        ("Sam: Our phone system is RingCentral.", "Phones went over to Dialpad on Friday."),
        # The slot by a shared word, the new value first and the old one last.
        ("Dispatch is Corinne.", "Luis does dispatch for us now."),
        ("Sam: We log every job in ServiceTitan.", "Jobs go into Jobber now."),
        ("Dr. Sato does exotics on Thursdays.", "Exotics go to the Harbourside clinic now."),
        ("Sam's lab partner is Sunniva.", "Callum is my partner for distillation now."),
        ("Hot lunches are supplied by Cuisine Plus.", "The hot lunch contract went to FreshPlate."),
        ("Sam: We buy our beans from Origin.", "Our beans come from Dark Arts these days."),
    ],
)
def test_r6_a_new_value_in_the_same_slot_replaces_the_old(old: str, said: str) -> None:
    assert _updates(old, said)


@pytest.mark.parametrize(
    ("old", "said"),
    [
        ("Sam: We use Stripe for payments.", "We use Xero for accounting now."),
        ("Sam: Our accountant is Maria Lopez.", "Our dentist is Dr. Reed now."),
        ("The plumber is Dave from Dalton Plumbing.", "Our electrician is Sparks Ltd now."),
        ("Ostrava Steel's contact is Jana.", "Halden Freight's contact is Mark now."),
        ("Flat 2 rent is £850.", "Flat 3 rent is £900 now."),
        ("Sam: We buy coffee beans from Origin.", "We get our milk from Estate Dairy now."),
        ("The staging server runs on Hetzner.", "The production server is on AWS now."),
        ("Standup is at 9:45 on weekdays.", "Retro is on Fridays at 3 now."),
        ("Lena handles payroll.", "Tom handles the new hires now."),
        ("Sam: Our vet is Dr. Hale.", "Our new dog is called Biscuit."),
    ],
)
def test_r6_facts_that_merely_look_alike_are_not_replaced(old: str, said: str) -> None:
    assert not _updates(old, said)


def test_a_slot_is_read_from_grammar() -> None:
    # A plural that agrees with its verb is a common noun, a name takes a singular verb.
    assert "jobs" not in read_slot("Jobs go into Jobber now.").names
    assert "evri" in read_slot("Evri collects the parcels now.").names
    # A capitalised first word with no verb after it is not a name.
    assert "hot" not in read_slot("Hot lunches are supplied by Cuisine Plus.").names
    assert read_slot("Tyres come from Velotech.").cats == {"supply"}
    # Without an update cue the reading still holds; the cue is asked by supersedes.
    assert refills("Malik takes billing escalations.", "Billing escalations go to Ruairi.")


@pytest.mark.parametrize(
    "said",
    [
        "The gate code is 4417 for deliveries.",
        "The PIN for the card machine is 0923.",
        "The safe combination is 3-18-27 if anyone asks.",
        "The keypad on the back door is 7 3 9 1.",
        "Padlock on the shed is 1966.",
        "The lockbox at the cottage is 7229.",
        # the thing, then which one or where, then the digits
        "the key box with the van keys is 2 7 7 0, don't lose it",
        "The safe behind the counter opens with 55120918.",
        # a password-shaped value right after what it is, with or without "is"
        "the router pw is Kestrel77bay",
        "guest wifi key is Harbour2025!",
        "manager pass Teal_Otter_91 for the till",
        "The 2FA seed is KRSXG5CTMVRXEZLU, keep it safe.",
        "our shop admin token shpat_8a2c1d9e7f3b for the sync",
        # a few words say whose it is before "is"
        "The Stripe key my accountant sent over is sk_9fQ2mLx71Zp.",
        "the wifi password for the back office is Plover2026",
        # digits read out as words, one by one
        "The alarm code is six one one eight, in case I'm not around.",
        "There's a lockbox by the side gate, the number is two zero four seven.",
        # what unlocks a phone, and bank details
        "Personal mobile unlock 5 1 3 7 9 in case.",
        "for when people ask, bank is sort 40-11-62 acc 2290 5173",
    ],
)
def test_r6_codes_told_in_prose_are_secrets(said: str) -> None:
    assert read(said, role="user", speaker="Sam") == "secret"


@pytest.mark.parametrize(
    "said",
    [
        "Our dress code is smart casual.",
        "We do a code freeze from 15 December to 5 January.",
        "The gate opens at 7:30 on weekdays.",
        "The door was painted in 2024.",
        "The alarm company is ADT.",
        "The gate opens at 0730 on weekdays.",
        "The door with the blue frame was fitted by Hallam Joinery.",
        "Our password manager is 1Password.",
        "The key is to call the depot before 10.",
        "The pass rate was 92 percent this term.",
        "The key contact at the council is jo@hallam.example now.",
        "The API key she gave me is in the vault, ask her for it.",
        "The password policy we agreed is 12 characters minimum.",
        # numbers in words that are not digits read out one by one
        "The back door is locked at nine, and the alarm set by ten.",
        "The gate stays shut for two or three days after the storm.",
        "The door code changes every twenty one days.",
        "We sort 300 parcels a day at the depot.",
        "The account number for Wessex Water is on the bill.",
    ],
)
def test_r6_words_near_codes_are_not_secrets(said: str) -> None:
    assert isinstance(read(said, role="user", speaker="Sam"), Statement)


def test_r6_a_negated_occurrence_retires_a_thing_but_a_schedule_does_not() -> None:
    gone = read(
        "Homework club isn't happening this year, we have no volunteers.",
        role="user",
        speaker="Sam",
    )
    assert isinstance(gone, Statement) and (gone.kind, gone.old) == ("retire", "Homework club")
    weekly = read("Spin class isn't running on Fridays.", role="user", speaker="Sam")
    assert isinstance(weekly, Statement) and weekly.kind == "fact"


def test_r6_why_a_thing_was_cancelled_is_not_part_of_its_name() -> None:
    gone = read("We cancelled Disney+ to save money.", role="user", speaker="Sam")
    assert isinstance(gone, Statement) and gone.old == "Disney+"


@pytest.mark.parametrize(
    "said",
    [
        "Oskar is about two thirds of the way through porting the worker to the new queue.",
        "On my way to the third call, running 20 min late.",
        "Wrapping up the backfill, three partitions left.",
        "Right, 40 of 60 laptops reimaged, going to grab a coffee.",
        "I'm halfway through folding a mountain of laundry.",
        # a part of a whole got through, with or without a time
        "I've varnished 14 of the 30 chairs for the hall.",
        "Nine of the twelve fences checked, the rest on Monday.",
        "We sanded about half the floorboards this morning.",
        "Lotte has done about half of Bruno's house training, he's getting there.",
        "I've finished 70 percent of the inventory count.",
        "Tomasz is about three quarters through cataloguing the donated maps.",
        # a count of the speaker's doings in a stretch of time still running
        "today: repotted 120 seedlings, swept the yard",
        "We ran it three times this afternoon and it still squeaks.",
        # what is left, and a count done
        "Four hedges trimmed, two to go, then lunch.",
        "Six boxes done, the van comes at five.",
        # a part done and what is still pending, or how far behind
        "Walls primed, the ceiling still to do.",
        "Invoices for March sent, April still with the accountant.",
        "We're 2 days behind on the fit-out.",
        # a share done, with the month it has reached
        "I'm about a third of the way through the old logbooks, got as far as March 1984.",
    ],
)
def test_r6_progress_in_many_words_is_not_kept(said: str) -> None:
    assert read(said, role="user", speaker="Sam") == "transient"


@pytest.mark.parametrize(
    "said",
    [
        "I'm halfway through my fourth novel, The Salt Ledger.",
        "We have two stores left in Leeds.",
        "Two of our five stores are in Leeds.",
        # a part of a whole that is how things are, or a record of its time
        "Two of the three vans are electric.",
        "Half the team works from home on Fridays.",
        "Two thirds of our members live within five miles.",
        "Half of our stock comes from the Lyon supplier.",
        "Half the roof was replaced in 2019.",
        "We hired two new chefs in March.",
        "I've been a nurse for 12 years.",
        # a move, and where the rest still is
        "We moved the server to Hetzner, the backups still on S3.",
        "We moved to Leeds, the office is still in York.",
        "The depot is two stops ahead of the school.",
        # a value that stays, a lead time
        "New hours from May, still 3 staff on a Saturday.",
        "The agenda goes out 48 hours ahead, as a PDF.",
    ],
)
def test_r6_what_looks_like_progress_but_is_a_fact_is_kept(said: str) -> None:
    assert isinstance(read(said, role="user", speaker="Sam"), Statement)


@pytest.mark.parametrize(
    "said",
    [
        # the weather of the moment
        "Bright and sunny this morning, first time in weeks.",
        "It snowed again overnight, 10 cm on the car.",
        # how the speaker's body is after work, or how they are
        "My knees are killing me after the stocktake.",
        "We're absolutely shattered after the move.",
        # an aside about the day or a match, and leaving to do something
        "Just back from a night shift, shower then bed.",
        "Rovers lost again, 3-1 at home.",
        "I'm off to pick up the kids, back later.",
    ],
)
def test_r6_talk_of_the_moment_is_small_talk(said: str) -> None:
    assert read(said, role="user", speaker="Sam") == "small talk"


@pytest.mark.parametrize(
    "said",
    [
        # the weather a rule depends on, a setting, a time from which something holds
        "We close the outdoor pool whenever it rains.",
        "The greenhouse is kept at 18 degrees.",
        "From today the heating is set to 19 degrees.",
        # a body word in another sense, a trip that is a plan
        "My hands are full on Mondays with the deliveries.",
        "I'm off to Lisbon for a conference in June.",
    ],
)
def test_r6_what_sounds_like_chat_but_is_a_fact_is_not_small_talk(said: str) -> None:
    assert read(said, role="user", speaker="Sam") != "small talk"


def test_r8_labels_and_common_advice_hold_no_fact_of_their_own() -> None:
    def user_says(text: str) -> object:
        return read(text, role="user", speaker="Sam")

    def assistant_says(text: str) -> object:
        return read(text, role="assistant", speaker="The assistant")

    # a lesson's label, without the lesson; the lesson itself is kept
    assert user_says("A lesson from the winter fair.") == "no durable fact"
    assert user_says("lesson learnt the hard way") == "no durable fact"
    said = "Lesson learned: the van battery dies because the fridge stays on overnight."
    assert isinstance(user_says(said), Statement)
    # that something did not change, with no value of its own
    assert user_says("Delivery charge unchanged.") == "no durable fact"
    assert isinstance(user_says("Delivery charge unchanged at £4."), Statement)
    said = "Xero does the invoices now, same accountant as before."
    assert isinstance(user_says(said), Statement)
    # how things commonly are, said by the assistant beside a question: advice
    assert assistant_says("A common setup is two tills, e.g. one by the door.") == (
        "no durable fact"
    )
    assert assistant_says("Most bakeries start the ovens at 4.") == "no durable fact"
    assert isinstance(assistant_says("The staging database runs Postgres 16."), Statement)


def test_r6_a_new_date_for_the_same_thing_replaces_the_old() -> None:
    assert _updates(
        "Parent-teacher meetings are on 12 November.",
        "We had to push parent-teacher meetings to the 19th because of the inspection.",
    )
    assert not _updates("The gym costs £30 a month.", "Netflix costs £10 a month now.")


def test_r6_a_verbless_list_of_named_people_is_kept_but_a_plan_with_names_is_not() -> None:
    said = "Husband Rafael, kids Mila (9) and Joaquin (6), and a beagle called Biscuit."
    assert isinstance(read(said, role="user", speaker="Gwen"), Statement)
    assert read("Coffee with Anna and Ben later.", role="user", speaker="Gwen") == (
        "no durable fact"
    )


@pytest.mark.parametrize(
    "said",
    [
        "Parking £4 a day, residents £2.",
        "Room hire 30 euros per hour",
        "Weekend surcharge now $15.",
        "Adult swim 6 pounds, under-fives free",
    ],
)
def test_r6_a_verbless_price_list_is_kept(said: str) -> None:
    assert isinstance(read(said, role="user", speaker="Gwen"), Statement)


@pytest.mark.parametrize(
    "said",
    [
        "£25, what a steal",  # a price that names nothing
        "Sandwich £7 today",  # the price of the moment
        "Fuel £80 so far",  # a sum spent
        "saving up for a canoe, about £700",  # a plan
        "Weekend surcharge now $15.",  # said by the assistant: read as any of its sentences
    ],
)
def test_r6_a_price_of_nothing_or_of_the_moment_is_not_kept(said: str) -> None:
    role = "assistant" if said.startswith("Weekend") else "user"
    assert not isinstance(read(said, role=role, speaker="Gwen"), Statement)


@pytest.mark.parametrize(
    "said",
    [
        "Life jackets are compulsory on the water.",
        "Entry is free for under-twelves.",
        "Glass bottles are not allowed by the pool.",
    ],
)
def test_r6_a_rule_of_the_place_is_kept_and_filed_as_a_decision(said: str) -> None:
    found = read(said, role="user", speaker="Gwen")
    assert isinstance(found, Statement) and found.section == "Decisions"


def test_r6_a_thing_free_for_the_moment_or_a_truism_is_not_kept() -> None:
    for said in ("The back room is free at the moment.", "Patience pays off in the end."):
        assert not isinstance(read(said, role="user", speaker="Gwen"), Statement)


def test_r6_a_pronoun_and_its_verb_after_an_opening_phrase_make_a_clause() -> None:
    said = "On Sundays it's Priya and her brother on the till."
    assert isinstance(read(said, role="user", speaker="Gwen"), Statement)
    # a possessive is no verb: a place named, not a fact
    said = "on Sundays that cafe's terrace"
    assert read(said, role="user", speaker="Gwen") == "no durable fact"


def test_r6_it_in_capitals_is_the_department_not_a_pronoun() -> None:
    assert isinstance(read("IT support is Marcus Hale.", role="user", speaker="Gwen"), Statement)
    assert read("it handles the laptops", role="user", speaker="Gwen") == "no durable fact"


def test_r6_a_rule_over_anything_of_a_value_is_kept_but_not_anything_vague() -> None:
    said = "Anything over 25 kg goes on the pallet truck."
    assert isinstance(read(said, role="user", speaker="Gwen"), Statement)
    assert read("anything else is fine", role="user", speaker="Gwen") == "no durable fact"


def test_r6_what_follows_a_retirement_is_read_too() -> None:
    gone = read(
        "Tobias retired. Adaeze Obi at the same agency looks after me now.",
        role="user",
        speaker="Celeste",
    )
    assert isinstance(gone, Statement) and gone.kind == "retire"
    assert gone.rest.startswith("Adaeze Obi")
    assert isinstance(read(gone.rest, role="user", speaker="Celeste"), Statement)


def test_r6_a_new_date_needs_no_cue_when_two_words_say_it_is_the_same_thing() -> None:
    assert _updates(
        "Sam's thermodynamics coursework is due 14 March at 5pm.",
        "Dr. Whitfield gave the whole class until the 21st for the thermodynamics coursework.",
    )
    assert not _updates("The quarter closes on September 30.", "The office closes on 24 December.")


def test_r6_a_statement_that_says_no_more_than_an_entry_is_a_duplicate() -> None:
    from reverie.review.slots import says_no_more

    assert says_no_more("Weekday opening is still 7:30.", "Hana: We open at 7:30 on weekdays.")
    assert says_no_more("Netflix stays.", "Gwen: We pay for Netflix.")
    assert says_no_more("Flu shots need an appointment.", "Flu shots are by appointment only.")
    # Something of its own, another polarity, or another person: not a duplicate.
    assert not says_no_more("We open at 8 on weekdays.", "We open at 7:30 on weekdays.")
    assert not says_no_more("We don't pay for Netflix.", "Gwen: We pay for Netflix.")
    assert not says_no_more("Ava: I prefer tea.", "Ben: I prefer tea.")


def test_r6_a_person_giving_something_up_retires_only_their_entry() -> None:
    gone = read(
        "Mila quit swimming. She does climbing on Wednesday evenings now.",
        role="user",
        speaker="Gwen",
    )
    assert isinstance(gone, Statement) and (gone.kind, gone.old) == ("retire", "swimming")
    assert gone.rest.startswith("She does climbing")


def test_r6_what_stopped_being_done_is_the_thing_retired_and_a_day_alone_is_not() -> None:
    gone = read("We stopped doing Saturday hours.", role="user", speaker="Hana")
    assert isinstance(gone, Statement) and (gone.kind, gone.old) == ("retire", "Saturday hours")
    closed = read("We're closed on July 4.", role="user", speaker="Hana")
    assert isinstance(closed, Statement) and closed.kind == "fact"


@pytest.mark.parametrize(
    "said",
    [
        "We cancel unpaid bookings after two days.",
        "We stop serving breakfast at 11.",
        "We shut the kitchen at 10 on Sundays.",
        "We cancel lessons when the wind is over 25 knots.",
    ],
)
def test_r6_a_present_tense_ending_with_a_time_or_a_rule_is_a_schedule(said: str) -> None:
    """A present-tense "we stop", "we cancel", "we shut" also says what happens each time: with a
    time or a rule after them, a fact to keep, not a thing that ended."""
    found = read(said, role="user", speaker="Hana")
    assert isinstance(found, Statement) and found.kind == "fact", found


@pytest.mark.parametrize(
    ("said", "thing"),
    [
        ("We cancel the Tuesday yoga class.", "Tuesday yoga class"),
        ("We stop the van hire.", "van hire"),
    ],
)
def test_r6_a_present_tense_ending_of_a_thing_retires_it(said: str, thing: str) -> None:
    gone = read(said, role="user", speaker="Hana")
    assert isinstance(gone, Statement) and (gone.kind, gone.old) == ("retire", thing)


def test_r6_the_opposite_state_of_the_same_thing_replaces_it() -> None:
    assert _updates(
        "Uploads over 5 GB fail on Safari because of the chunk size.",
        "Large Safari uploads work now.",
    )
    assert not _updates("The staging deploy fails on Mondays.", "The production deploy works now.")


def test_r6_narrative_that_shares_a_word_or_two_people_talking_is_not_an_update() -> None:
    # LoCoMo-like chat: a word in common among many, and two people talking.
    assert not _updates(
        "Jon lost their job as a banker on 2023-01-19.",
        "Unfortunately, I also lost my job at Door Dash in January 2023.",
        speaker="Gina",
    )
    assert not _updates(
        "Caroline: We had a blast in 2022 at the Pride fest with our supportive friends.",
        "Now I'm ready to offer love and support to those who need it.",
        speaker="Caroline",
    )
    # A name in common that is the subject of neither is no slot.
    assert not refills(
        "The CDN caches API responses for 60 seconds.", "The partner API launches on September 2."
    )


@pytest.mark.parametrize(
    ("said", "value"),
    [
        ("the studio opens Monday and Thursday", "mon,thu"),
        ("we deliver Tue, Thu and Sat", "tue,thu,sat"),
        ("she works weds to sun", "wed-sun"),
        ("bins go out mon wed fri", "mon,wed,fri"),
        ("Saturdays-Sundays only", "sat-sun"),
    ],
)
def test_r6_days_said_together_are_one_value(said: str, value: str) -> None:
    from reverie.review.slots import measures

    assert [(m.kind, m.value) for m in measures(said)] == [("days", value)]


@pytest.mark.parametrize(
    "said", ["the sun sat low over the bay", "the sat-nav sent us wrong on sun"]
)
def test_r6_short_words_that_look_like_days_are_not_days(said: str) -> None:
    from reverie.review.slots import measures

    assert not [m for m in measures(said) if m.kind in ("days", "weekday")]


def test_r6_a_date_with_its_day_stays_a_date_beside_another_day() -> None:
    from reverie.review.slots import measures

    kinds = [m.kind for m in measures("we meet Monday 16th and Friday")]
    assert kinds == ["date", "weekday"]


def test_r6_a_password_shaped_value_beside_a_secrets_name_in_the_message_is_secret() -> None:
    said = "Dad made a password for the bank app. He forgets it all the time, it's HollyOak1977!x"
    [(start, end)] = secret_values(said)
    assert said[start:end] == "HollyOak1977!x"
    # Without a secret's name in the message, a mixed word is a product or a place.
    assert secret_values("We bought three MacBookPro2023 units for the studio.") == []
    # A name in capitals with digits is a reference, not a password.
    assert secret_values("The login for ticket SAP-2026-17 is with IT.") == []


def test_an_hour_after_at_is_a_time_unless_a_noun_follows() -> None:
    def kinds(said: str) -> list[tuple[str, str]]:
        return [(m.kind, m.value) for m in measures(said)]

    assert ("time", "9") in kinds("vinyasa is at 9 with Lou")
    assert ("time", "10") in kinds("volunteers come in at 10 and 3")
    assert not [k for k in kinds("we meet at 9 Baker Street") if k[0] == "time"]
    assert kinds("it froze at 3 degrees") == []


def test_a_price_without_its_currency_is_money_but_a_version_or_a_time_is_not() -> None:
    def money(said: str) -> list[str]:
        return [m.value for m in measures(said) if m.kind == "money"]

    assert money("jong belegen is 14.90 per kilo") == ["14.90"]
    assert money("sorry, I said it wrong, it's 2.50 since Easter") == ["2.50"]
    # a capital that opens the sentence or ends with a comma names no product
    assert money("It's 2.50 since Easter") == ["2.50"] and money("Sorry, 2.50 now") == ["2.50"]
    assert money("we run Python 3.12 now") == []
    assert money("firmware 2.10 is out") == []
    assert money("the 12.15 train is late") == [] and money("at 10.30 we open") == []


@pytest.mark.parametrize(
    "said",
    [
        "Fergus is absolutely covered in soot today, his wife made him strip in the garage ha",
        "saw the first oystercatchers back on the Dee this morning, always makes me happy",
        "The Atlantic was magnificent this morning, grey and enormous",
        "Our dog ate a whole bag of candy floss sugar today, he's bouncing off the walls",
    ],
)
def test_r6_the_days_news_is_not_kept(said: str) -> None:
    assert not isinstance(read(said, role="user", speaker="Moira"), Statement)


@pytest.mark.parametrize(
    "said",
    [
        "We hired Ama today as our apprentice",  # a change, said on its day
        "Ines Carvalho is photo desk chief from today",  # what holds from that day on
        "we've been on 8.0 since last night",
        "the vet came today, Bella needs a check in 6 weeks",  # a value beyond the day
        "Mette says we have SailPack 8 now, she installed it last night",
    ],
)
def test_r6_what_outlasts_its_day_is_kept(said: str) -> None:
    assert isinstance(read(said, role="user", speaker="Moira"), Statement)


def test_r6_a_plural_of_an_ing_noun_has_the_stem_of_its_singular() -> None:
    from reverie.review.frames import stem

    assert stem("mornings") == stem("morning")
    assert stem("bookings") == stem("booking")


def test_r6_the_month_and_day_of_an_iso_date_are_not_opening_hours() -> None:
    # relative days are written as ISO dates ("since this week" -> "since the week of
    # 2024-05-03"): its "05-03" is no range of hours
    assert not [m for m in measures("skipper since the week of 2024-05-03") if m.kind == "hours"]
    assert [(m.kind, m.value) for m in measures("open 9-5 on weekdays")] == [("hours", "9-5")]
