"""Every way into memory refuses a secret in a category as well as in the text: the
tool, the HTTP API, the memory screen, the admin and the optimizer's merged notes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from agent_memory import LongTermMemory
from agent_memory.models import MemoryNote
from agent_memory.notes import Note
from agent_memory.optimizer.checker import check_groups

SECRET_CATEGORIES = [
    pytest.param(["Keys", "sk-proj-AbCdEf1234567890abcdefGHIJ_klmn"], id="api-key"),
    pytest.param(["4111 1111 1111 1111"], id="card"),
    pytest.param(["Wifi", "пароль Kotik2024!"], id="password"),
]
REFUSAL = "Memory is not a place for passwords, keys or card numbers"
API = "/api/chat/memory"
SCREEN = "/memory/"
ADMIN_NOTES = "/admin/agent_memory/memorynote/"


def _shown(categories: list[str]) -> str:
    return ", ".join(categories)


# --- the tool -----------------------------------------------------------------------------


@pytest.mark.parametrize("categories", SECRET_CATEGORIES)
def test_tool_create_refuses_a_secret_category(memory, person, categories):
    answer = memory.call_tool(
        person,
        {"action": "create", "notes": [{"categories": categories, "content": "Home network"}]},
    )
    assert answer["error"]["kind"] == "invalid"
    assert REFUSAL in answer["error"]["message"]
    assert categories[-1] not in answer["error"]["message"]
    assert memory.notes(person) == []


@pytest.mark.parametrize("categories", SECRET_CATEGORIES)
def test_tool_update_refuses_a_secret_category(memory, person, categories):
    (note,) = memory.create_notes(person, [{"categories": ["Home"], "content": "Home network"}])
    answer = memory.call_tool(
        person,
        {
            "action": "update",
            "id": note.id,
            "version": note.version,
            "categories": categories,
            "content": "Home network",
        },
    )
    assert answer["error"]["kind"] == "invalid"
    assert REFUSAL in answer["error"]["message"]
    assert memory.notes(person) == [note]


def test_tool_refuses_a_secret_in_the_text(memory, person):
    answer = memory.call_tool(
        person,
        {
            "action": "create",
            "notes": [{"categories": ["Wifi"], "content": "Пароль от wifi — Kotik2024!"}],
        },
    )
    assert answer["error"]["kind"] == "invalid"
    assert memory.notes(person) == []


# --- the HTTP API -------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("categories", SECRET_CATEGORIES)
def test_api_post_refuses_a_secret_category(api, user, categories):
    response = api.post(API, {"categories": categories, "content": "Home network"}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["kind"] == "invalid"
    assert REFUSAL in response.json()["error"]["message"]
    assert not MemoryNote.objects.filter(user=user).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("categories", SECRET_CATEGORIES)
def test_api_patch_refuses_a_secret_category(api, user, categories):
    (note,) = LongTermMemory().create_notes(
        user, [{"categories": ["Home"], "content": "Home network"}]
    )
    response = api.patch(
        f"{API}/{note.id}",
        {"categories": categories, "content": "Home network", "version": note.version},
        format="json",
    )
    assert response.status_code == 400
    assert REFUSAL in response.json()["error"]["message"]
    assert MemoryNote.objects.get(pk=note.id).categories == ["Home"]


# --- the memory screen --------------------------------------------------------------------


@pytest.fixture
def person_client(client: Client, user) -> Client:
    client.force_login(user)
    return client


@pytest.mark.django_db
@pytest.mark.parametrize("categories", SECRET_CATEGORIES)
def test_screen_add_refuses_a_secret_category(person_client, user, categories):
    response = person_client.post(
        SCREEN, {"categories": _shown(categories), "content": "Home network"}
    )
    assert response.status_code == 400
    assert REFUSAL in response.content.decode()
    assert not MemoryNote.objects.filter(user=user).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("categories", SECRET_CATEGORIES)
def test_screen_edit_refuses_a_secret_category(person_client, user, categories):
    (note,) = LongTermMemory().create_notes(
        user, [{"categories": ["Home"], "content": "Home network"}]
    )
    response = person_client.post(
        f"/memory/notes/{note.id}/edit",
        {"categories": _shown(categories), "content": "Home network", "version": note.version},
    )
    assert response.status_code == 400
    assert REFUSAL in response.content.decode()
    assert MemoryNote.objects.get(pk=note.id).categories == ["Home"]


# --- the admin ----------------------------------------------------------------------------


@pytest.fixture
def ops_client(client: Client, db) -> Client:
    staff = get_user_model().objects.create_superuser("ops", "ops@example.com", "pw-for-tests")
    client.force_login(staff)
    return client


@pytest.mark.parametrize("categories", SECRET_CATEGORIES)
def test_admin_add_refuses_a_secret_category(ops_client, user, categories):
    response = ops_client.post(
        f"{ADMIN_NOTES}add/",
        {"user": user.pk, "categories": _shown(categories), "content": "Home network"},
    )
    assert response.status_code == 200
    assert REFUSAL in response.content.decode()
    assert not MemoryNote.objects.filter(user=user).exists()


@pytest.mark.parametrize("categories", SECRET_CATEGORIES)
def test_admin_change_refuses_a_secret_category(ops_client, user, categories):
    (note,) = LongTermMemory().create_notes(
        user, [{"categories": ["Home"], "content": "Home network"}]
    )
    response = ops_client.post(
        f"{ADMIN_NOTES}{note.id}/change/",
        {
            "categories": _shown(categories),
            "content": "Home network",
            "expected_version": note.version,
        },
    )
    assert response.status_code == 200
    assert REFUSAL in response.content.decode()
    assert MemoryNote.objects.get(pk=note.id).categories == ["Home"]


# --- the optimizer's merged notes -----------------------------------------------------------

NOW = datetime(2030, 1, 1, tzinfo=UTC)
LEGACY = "xoxb-123456789012-1234567890123-AbCdEfGhIjKl"


@pytest.mark.parametrize(
    ("categories", "content"),
    [
        pytest.param(["Wifi", LEGACY], "Home wifi is fast, 5 GHz", id="category"),
        pytest.param(["Wifi"], "Home wifi is fast, 5 GHz; password: Kotik2024!", id="content"),
    ],
)
def test_optimizer_merge_proposing_a_secret_is_rejected(categories, content):
    # Sources may still hold a legacy category the rules refuse today; the merge must not
    # carry it (or a secret in the text) into a new note.
    notes = [
        Note(1, 1, ("Wifi", LEGACY), "Home wifi is fast", 1, "agent", NOW, NOW),
        Note(2, 1, ("Wifi",), "Home wifi is fast, 5 GHz", 1, "agent", NOW, NOW),
    ]
    proposal = {"ids": ["memory:1", "memory:2"], "categories": categories, "content": content}
    (verdict,) = check_groups([proposal], notes)
    assert not verdict.accepted
    assert verdict.code in {"categories", "content"}
    assert REFUSAL in verdict.reason


# --- invisible text-direction controls ------------------------------------------------------


@pytest.mark.django_db
def test_api_refuses_a_right_to_left_override_saying_which_and_where(api, user):
    # An override makes the note display differently from what it holds.
    response = api.post(API, {"categories": ["Food"], "content": "Likes \u202eaet"}, format="json")
    assert response.status_code == 400
    assert response.json()["error"] == {
        "kind": "invalid",
        "message": "content contains the invisible text-direction character U+202E "
        "(RIGHT-TO-LEFT OVERRIDE) at position 7; remove it and send plain text.",
    }
    assert not MemoryNote.objects.filter(user=user).exists()


# --- every class of secret, on every path ---------------------------------------------------

CLASS_EXAMPLES = [
    pytest.param("Shopify 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", id="provider-token"),
    pytest.param("pw: kotik", id="slang-password"),
    pytest.param("Wi-Fi key: sunshine2024", id="wifi-key"),
    pytest.param("ivan.petrov@gmail.com:Qwerty123", id="login-password-pair"),
    pytest.param("SSID HomeNet_5G, key bluebird", id="network-and-key"),
    pytest.param("the SMS code from Sberbank is 493021", id="sms-code"),
    pytest.param("Паспорт: серия 4510, номер 123456", id="passport"),
]


@pytest.mark.parametrize("secret", CLASS_EXAMPLES)
def test_tool_create_and_update_refuse_each_class_in_text_and_category(memory, person, secret):
    for note in (
        {"categories": ["Home"], "content": secret},
        {"categories": ["Home", secret], "content": "Home network"},
    ):
        answer = memory.call_tool(person, {"action": "create", "notes": [note]})
        assert answer["error"]["kind"] == "invalid", note
        assert REFUSAL in answer["error"]["message"]
    assert memory.notes(person) == []
    (saved,) = memory.create_notes(person, [{"categories": ["Home"], "content": "Home network"}])
    for categories, content in ((["Home"], secret), (["Home", secret], "Home network")):
        answer = memory.call_tool(
            person,
            {
                "action": "update",
                "id": saved.id,
                "version": saved.version,
                "categories": categories,
                "content": content,
            },
        )
        assert answer["error"]["kind"] == "invalid"
    assert memory.notes(person) == [saved]


@pytest.mark.django_db
@pytest.mark.parametrize("secret", CLASS_EXAMPLES)
def test_api_post_patch_and_import_refuse_each_class(api, user, secret):
    for body in (
        {"categories": ["Home"], "content": secret},
        {"categories": ["Home", secret], "content": "Home network"},
    ):
        response = api.post(API, body, format="json")
        assert response.status_code == 400, body
        assert REFUSAL in response.json()["error"]["message"]
    (note,) = LongTermMemory().create_notes(
        user, [{"categories": ["Home"], "content": "Home network"}]
    )
    response = api.patch(
        f"{API}/{note.id}", {"content": secret, "version": note.version}, format="json"
    )
    assert response.status_code == 400
    as_json = api.post(
        f"{API}/import", [{"categories": ["Home"], "content": secret}], format="json"
    )
    as_text = api.post(
        f"{API}/import?categories=Home", f"Walks at 7\n{secret}\n", content_type="text/plain"
    )
    for response in (as_json, as_text):
        assert response.status_code == 400
        assert response.json()["error"]["kind"] == "invalid"
    assert list(MemoryNote.objects.filter(user=user).values_list("content", flat=True)) == [
        "Home network"
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("secret", CLASS_EXAMPLES)
def test_screen_add_edit_and_import_refuse_each_class(person_client, user, secret):
    from django.core.files.uploadedfile import SimpleUploadedFile

    assert person_client.post(SCREEN, {"categories": "Home", "content": secret}).status_code == 400
    (note,) = LongTermMemory().create_notes(
        user, [{"categories": ["Home"], "content": "Home network"}]
    )
    edit = person_client.post(
        f"/memory/notes/{note.id}/edit",
        {"categories": "Home", "content": secret, "version": note.version},
    )
    assert edit.status_code == 400
    upload = SimpleUploadedFile("notes.txt", f"Walks at 7\n{secret}\n".encode())
    imported = person_client.post(f"{SCREEN}import", {"file": upload, "categories": "Me"})
    assert imported.status_code == 400
    assert list(MemoryNote.objects.filter(user=user).values_list("content", flat=True)) == [
        "Home network"
    ]


@pytest.mark.parametrize("secret", CLASS_EXAMPLES)
def test_admin_add_and_change_refuse_each_class(ops_client, user, secret):
    response = ops_client.post(
        f"{ADMIN_NOTES}add/", {"user": user.pk, "categories": "Home", "content": secret}
    )
    assert response.status_code == 200 and REFUSAL in response.content.decode()
    (note,) = LongTermMemory().create_notes(
        user, [{"categories": ["Home"], "content": "Home network"}]
    )
    response = ops_client.post(
        f"{ADMIN_NOTES}{note.id}/change/",
        {"categories": "Home", "content": secret, "expected_version": note.version},
    )
    assert response.status_code == 200 and REFUSAL in response.content.decode()
    assert list(MemoryNote.objects.filter(user=user).values_list("content", flat=True)) == [
        "Home network"
    ]
