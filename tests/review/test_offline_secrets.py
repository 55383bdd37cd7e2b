"""The offline reviewer (R6, issue 11) and secrets said in chat: found by an audit of how people
hand over codes, passwords and keys (2026-12-07), each phrased again in other settings.

A secret must never reach memory; what is said beside it in the same sentence is a fact like
any other. Each case is reviewed, then given again against the memory it made, which must
change nothing. The helpers are those of :mod:`tests.review.test_offline`.
"""

from __future__ import annotations

import pytest

from reverie.core.markdown import new_index
from reverie.core.secrets import find_credentials
from tests.conftest import fake
from tests.review.test_offline import assert_changes_nothing, bot, index_after, review, turns, user


def entries(index: str) -> list[str]:
    return [line for line in index.split("\n") if line.startswith("- ")]


def _reviewed(*messages: tuple[str, str]) -> str:
    batch = turns("c1", *messages)
    out = review(batch)
    index = index_after(out) if out.operations else new_index()
    assert_changes_nothing(batch, index)
    return index


@pytest.mark.parametrize(
    ("said", "fact", "secret"),
    [
        # a code named in a clause of its own, after a fact about what it opens
        (
            "the shop alarm company is Verisure and the code is 5831",
            "Verisure",
            "5831",
        ),
        (
            "our burglar alarm is monitored by Chubb and the code is 2290, you get 30 seconds",
            "Chubb",
            "2290",
        ),
        # a password or key told in prose, with a fact before or after it
        (
            "the meat supplier is Fenwick Butchers, their portal login is tony@trattoria.co.uk "
            f"pass: {fake('Ribeye', '2024!x')}",
            "Fenwick Butchers",
            fake("Ribeye", "2024!x"),
        ),
        (
            f"we host the blog on Ghost, the admin pw is {fake('Quill', 'Ink#77')}",
            "Ghost",
            fake("Quill", "Ink#77"),
        ),
        (
            f"stripe key is {fake('sk_live_', '51Hq', 'K2eLm9Xp4Rt7Vw3Zy')} and we invoice "
            "clients on the 28th",
            "28th",
            fake("51Hq", "K2eLm9Xp4Rt7Vw3Zy"),
        ),
        (
            f"token for github: {fake('ghp_', '8f3Kq9ZmN2xR7tL4', 'vW6yB1cD5hJ0pS3aE9uQ')} - "
            "the bot opens a PR every monday",
            "monday",
            fake("8f3Kq9ZmN2xR7tL4", "vW6yB1cD5hJ0pS3aE9uQ"),
        ),
        # a second secret given as "the other one is ...", in quotes, whatever its shape
        (
            f"our broadband is with Zen, the wifi password is {fake('Kestrel', '77bay')} and "
            'the guest one is "seaview-seaview"',
            "Zen",
            "seaview-seaview",
        ),
        (
            f"we bank with Starling, online banking pw is {fake('Moss', '44!grove')} and the "
            "savings one is 'tulip-tulip'",
            "Starling",
            "tulip-tulip",
        ),
        # a PIN or a lockbox with the other things said around it (terse, non-native)
        (
            "pin of the fuel card is 7731, the fuel we buy from Certas",
            "Certas",
            "7731",
        ),
        (
            "our holiday let is Rose Cottage in Padstow, lockbox is 4 0 9 2",
            "Rose Cottage",
            "4 0 9 2",
        ),
        (
            "the spare keys are with Brenda at number 9, key safe is 6 6 1 0",
            "Brenda",
            "6 6 1 0",
        ),
    ],
)
def test_a_fact_said_beside_a_secret_is_kept_and_the_secret_is_not(
    said: str, fact: str, secret: str
) -> None:
    """A sentence that held a code, a password or a token was dropped whole, and with it what
    else it said ("the alarm company is ADT and the code is ..." lost ADT): the parts beside
    the secret are read as any other clause; the part that holds it, names it or leans on it
    is not."""
    index = _reviewed(user(said))
    assert any(fact.lower() in e.lower() for e in entries(index)), index
    assert secret not in index and not find_credentials(index), index
    low = index.lower()
    assert " code " not in low and "password" not in low and " pw " not in low, index


@pytest.mark.parametrize(
    ("said", "secret"),
    [
        (
            f"pasword for the booking system is {fake('kitten', '99x')} and it backs up at 2am",
            fake("kitten", "99x"),
        ),
        (
            f"the passwrod on the office laptop is {fake('Harbour', '71b')}, it's a Dell",
            fake("Harbour", "71b"),
        ),
        (
            f"Passowrd for the router is {fake('blue', 'fox2291')}, the router is a BT Hub",
            fake("blue", "fox2291"),
        ),
    ],
)
def test_a_password_typed_with_a_typo_is_a_secret(said: str, secret: str) -> None:
    """ "pasword", "passwrod", "passowrd": a typo in the word did not make the value said after
    it a password, and the sentence was kept with it."""
    index = _reviewed(user(said))
    assert secret.lower() not in index.lower(), index


@pytest.mark.parametrize(
    ("said", "secret"),
    [
        ("Main door keypad is C2580X, changed monthly", "C2580X"),
        ("the staff room keypad is A4471 since the new locks went in", "A4471"),
        ("the side entrance keypad is B7391 and parcels go to reception", "B7391"),
    ],
)
def test_a_keypad_code_with_letters_in_it_is_a_secret(said: str, secret: str) -> None:
    """A code of digits with a letter or two ("C2580X") was not read as a code, and the
    sentence was kept with it."""
    index = _reviewed(user(said))
    assert secret not in index, index


@pytest.mark.parametrize(
    ("messages", "secret"),
    [
        ([user("the safe combination is 27 left 11 right 5 left, the float is £150")], "27 left"),
        (
            [
                bot("How do I open the gun cabinet?"),
                user("combination is L32 R14 L7, the licence is renewed every 5 years"),
            ],
            "R14",
        ),
    ],
)
def test_a_dial_combination_told_with_its_turns_is_a_secret(
    messages: list[tuple[str, str]], secret: str
) -> None:
    """A combination told as a dial's turns ("27 left 11 right 5 left", "L32 R14 L7") has no
    group of three digits, so it was not read as a code and was kept."""
    index = _reviewed(*messages)
    assert secret not in index, index
