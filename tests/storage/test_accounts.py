"""The rules of `storage/accounts.py` with no database: what a name may hold, which names pass
for each other, the password rule, and what hashing and checking a password or token answer."""

from __future__ import annotations

import pytest

from partida.storage.accounts import (
    MAX_NAME,
    check_name,
    check_password_rule,
    hash_password,
    hash_token,
    name_keys,
    needs_rehash,
    new_token,
    verify_password,
)


@pytest.mark.parametrize("name", ["ann", "Zoë", "名前", "a b", "x" * MAX_NAME])
def test_printable_names_within_the_limit_are_names(name: str) -> None:
    assert check_name(name) is None


@pytest.mark.parametrize(
    "name",
    ["", " ann", "ann ", "x" * (MAX_NAME + 1), "a\x00b", "a\x1b[31mb", "a\u202eb", "a\u200db", "a\u2028b", "a\ud800"],
)
def test_names_that_could_hide_or_fake_text_are_refused(name: str) -> None:
    assert check_name(name) is not None


def test_a_refusal_names_what_was_asked_for_and_its_limit() -> None:
    assert check_name("x" * 5, 4, "a guest name") == "a guest name has at most 4 characters"


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("alice", "ALICE"),
        ("alice", "\u0430lice"),  # a Cyrillic a
        ("Alice", "AIice"),  # a capital i for a small L
        ("ALİCE", "alice"),  # a dotted capital I
        ("Ａlice", "alice"),  # full width
        ("élise", "elise"),  # an accent dropped
    ],
)
def test_names_that_pass_for_each_other_share_a_key(one: str, other: str) -> None:
    assert set(name_keys(one)) & set(name_keys(other))


def test_different_names_share_no_key() -> None:
    assert not set(name_keys("alice")) & set(name_keys("alina"))
    assert all(len(key) == 64 for key in name_keys("a" * 64 + "ﷺ"))  # one length, whatever it expands to


def test_a_password_has_at_least_eight_characters() -> None:
    assert check_password_rule("1234567") is not None
    assert check_password_rule("12345678") is None


def test_a_password_checks_against_its_own_hash_only_and_a_missing_hash_never_passes() -> None:
    stored = hash_password("correct horse")
    assert verify_password(stored, "correct horse")
    assert not verify_password(stored, "correct horsE")
    assert not verify_password(None, "correct horse")
    assert not verify_password("not a hash", "correct horse")
    assert not needs_rehash(stored) and needs_rehash("not a hash")


def test_tokens_are_new_each_time_and_hash_to_a_fixed_digest() -> None:
    first, second = new_token(), new_token()
    assert first != second and len(first) >= 43
    assert hash_token(first) == hash_token(first) != hash_token(second)
