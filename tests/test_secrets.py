"""The secrets filter (SPEC §1): credentials and card numbers are refused, ordinary figures pass."""

from __future__ import annotations

import pytest

from agent_memory import LongTermMemory
from agent_memory.errors import InvalidNote
from agent_memory.rules import clean_content, find_secret, luhn_valid
from agent_memory.stores.memory import InMemoryStore

SECRETS = [
    pytest.param("My OpenAI key sk-abcdefghijklmnopqrstuvwx1234", id="openai-sk"),
    pytest.param("Project key: sk-proj-AbCdEf1234567890abcdefGHIJ_klmn", id="openai-sk-proj"),
    pytest.param("sk-ant-api03-AbCdEf1234567890abcdefGHIJklmn", id="anthropic-sk-ant"),
    pytest.param("GitHub token ghp_0123456789abcdefghijABCDEFGHIJ012345", id="github-ghp"),
    pytest.param(
        "Use github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF", id="github-pat"
    ),
    pytest.param("AWS access key AKIAIOSFODNN7EXAMPLE", id="aws-akia"),
    pytest.param(
        "Session eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        id="jwt",
    ),
    pytest.param(
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----",
        id="pem-rsa",
    ),
    pytest.param("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA", id="pem-ssh"),
    pytest.param("-----BEGIN PRIVATE KEY-----", id="pem-pkcs8"),
    pytest.param("Visa 4111 1111 1111 1111", id="card-spaces"),
    pytest.param("Card 4111-1111-1111-1111 exp 12/27", id="card-dashes"),
    pytest.param("Pays with 5500000000000004", id="card-plain"),
    pytest.param("Amex 3782 822463 10005", id="card-amex-15"),
    pytest.param("password: hunter2", id="password-colon"),
    pytest.param("Wi-Fi Password = hunter2", id="password-equals"),
    pytest.param("wifi password is hunter2!", id="password-is"),
    pytest.param("пароль: qwerty123", id="ru-password-colon"),
    pytest.param("Пароль — qwerty123", id="ru-password-dash"),
    pytest.param("мой пароль это qwerty123", id="ru-password-eto"),
    pytest.param("my API key is 3fa94c1e7d2b", id="api-key-is"),
    pytest.param("api_key=9f8e7d6c5b4a", id="api-key-equals"),
    pytest.param("PIN: 4921", id="pin"),
    pytest.param("password: swordfish", id="password-colon-word"),
    pytest.param("secret: hunter2", id="secret-colon"),
    pytest.param("ключ: abc123xyz", id="ru-key-colon"),
    pytest.param("токен: abc123def", id="ru-token"),
    pytest.param("key Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LmNb", id="long-random-token"),
]

ORDINARY = [
    pytest.param("Phone +7 915 123-45-67", id="phone-ru"),
    pytest.param("Call me at +1 (555) 010-0199", id="phone-us"),
    pytest.param("Mobile 8 (915) 123-45-67, home 8 495 123 45 67", id="phones-two"),
    pytest.param("Phone 89151234567", id="phone-digits"),
    pytest.param("Born 1990-05-17", id="date-iso"),
    pytest.param("Meeting on 17.05.2024 at 14:30", id="date-dots-time"),
    pytest.param("Deadline 05/17/2024 23:59:59", id="date-slashes-time"),
    pytest.param("Flight SU 1234 to Moscow", id="flight-su"),
    pytest.param("Takes LH400 on Fridays", id="flight-lh"),
    pytest.param("The laptop cost $1,299.99", id="price-usd"),
    pytest.param("Rent is 45 000 ₽ a month", id="price-rub"),
    pytest.param("Favourite book ISBN 978-3-16-148410-0", id="isbn-13"),
    pytest.param("ISBN 0-306-40615-2", id="isbn-10"),
    # Luhn-valid by chance: the ISBN-13 checksum and the "+" of a phone number tell them apart.
    pytest.param("Reading ISBN 978-5-17-100004-2", id="isbn-13-luhn-valid"),
    pytest.param("Reading 9785171000042", id="isbn-13-bare-luhn-valid"),
    pytest.param("WeChat +86 138 0013 8002", id="phone-intl-luhn-valid"),
    pytest.param("Order 1234567890123456", id="16-digits-not-luhn"),
    pytest.param("Order 4111 1111 1111 1112", id="16-digits-spaced-not-luhn"),
    pytest.param("I reset my password every month", id="password-in-prose"),
    pytest.param("Forgot the password again last week", id="password-prose-2"),
    pytest.param("The password is long", id="password-is-word"),
    pytest.param("Uses 1Password as a password manager", id="password-manager"),
    pytest.param("Keeps the API key in the team vault", id="api-key-prose"),
    pytest.param("Меняет пароль каждый месяц", id="ru-password-prose"),
    pytest.param("Password hint: first pet", id="password-hint"),
    pytest.param("Ключ: под ковриком", id="ru-key-under-the-mat"),
    pytest.param("Secret: surprises everywhere", id="secret-prose"),
    pytest.param("Pinterest: loves it", id="pinterest"),
    pytest.param("Fixed in commit 3f786850e387550fdab836ed7e6dc881de23001b", id="git-sha-full"),
    pytest.param("Deployed 3f78685 yesterday", id="git-sha-short"),
    pytest.param("Request id 123e4567-e89b-12d3-a456-426614174000", id="uuid"),
    pytest.param("Postcode 123456, flat 42", id="postcode"),
    pytest.param("Has 2 kids aged 5 and 7", id="small-numbers"),
    pytest.param("Не любит кофе, пьёт чай", id="ru-prose"),
    pytest.param("Card ending 1234", id="card-last-four"),
]


@pytest.mark.parametrize("text", SECRETS)
def test_credentials_and_cards_are_found(text):
    assert find_secret(text) is not None


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_and_figures_pass(text):
    assert find_secret(text) is None
    assert clean_content(text) == text


@pytest.mark.parametrize("text", SECRETS)
def test_secret_is_refused_as_invalid_with_a_message_saying_why(text):
    with pytest.raises(InvalidNote) as refused:
        clean_content(text)
    assert refused.value.kind == "invalid"
    assert "not a place for passwords, keys or card numbers" in refused.value.message


def test_message_names_what_was_found():
    with pytest.raises(InvalidNote, match="payment card number"):
        clean_content("Visa 4111 1111 1111 1111")
    with pytest.raises(InvalidNote, match="password or key"):
        clean_content("password: hunter2")


def test_numbers_that_only_look_like_isbns_or_phones_are_still_cards():
    assert luhn_valid("8613800138002") and find_secret("Card 86138 0013 8002") is not None
    assert luhn_valid("4111111111111111") and find_secret("Order #4111111111111111") is not None


def test_luhn_checksum():
    assert luhn_valid("4111111111111111")
    assert luhn_valid("79927398713")
    assert not luhn_valid("4111111111111112")
    assert not luhn_valid("1234567890123456")


def test_card_numbers_need_13_to_19_digits():
    # 12 Luhn-valid digits are not a card; 13 are.
    assert luhn_valid("123456789015") and find_secret("Ref 123456789015") is None
    assert luhn_valid("4222222222222") and find_secret("Card 4222222222222") is not None


def test_secret_in_a_batch_refuses_the_whole_batch_and_saves_nothing():
    memory = LongTermMemory(store=InMemoryStore())
    batch = [
        {"categories": ["Work"], "content": "Works at Acme"},
        {"categories": ["Work"], "content": "VPN password: hunter2"},
    ]
    with pytest.raises(InvalidNote, match="Note 2 of 2"):
        memory.create_notes(1, batch)
    assert memory.notes(1) == []


def test_secret_is_refused_on_update_and_the_note_is_unchanged():
    memory = LongTermMemory(store=InMemoryStore())
    (note,) = memory.create_notes(1, [{"categories": ["Work"], "content": "Works at Acme"}])
    with pytest.raises(InvalidNote, match="not a place for passwords"):
        memory.update_note(1, note.id, 1, ["Work"], "Acme card 4111 1111 1111 1111")
    assert memory.notes(1) == [note]
