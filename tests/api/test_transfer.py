"""``GET {base}/memory/export`` and ``POST {base}/memory/import``."""

from __future__ import annotations

import json

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from agent_memory.models import MemoryNote
from tests.api.test_endpoints import BASE, add, assert_error

pytestmark = pytest.mark.django_db


def contents(user) -> list[str]:
    return sorted(MemoryNote.objects.filter(user=user).values_list("content", flat=True))


def test_export_is_a_json_attachment_that_import_reads_back_after_an_erase(api, user):
    add(api, "Address me informally.", ["Preferences", "Language"])
    add(api, "Works at Acme.", ["Work"])
    response = api.get(f"{BASE}/export")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"].startswith('attachment; filename="memory-')
    document = json.loads(response.content)
    assert document["version"] == 1 and len(document["notes"]) == 2

    assert api.delete(BASE).json() == {"deleted": 2}
    answer = api.post(f"{BASE}/import", document, format="json")
    assert answer.status_code == 200, answer.content
    assert answer.json() == {"created": 2, "skipped": []}
    notes = {note["content"]: note["categories"] for note in api.get(BASE).json()["notes"]}
    assert notes == {
        "Address me informally.": ["Preferences", "Language"],
        "Works at Acme.": ["Work"],
    }


def test_import_lists_the_notes_it_skipped(api, user):
    add(api, "Works at Acme.", ["Work"])
    answer = api.post(
        f"{BASE}/import",
        [
            {"categories": ["Work"], "content": "works at acme."},
            {"categories": ["Food"], "content": "Likes tea."},
        ],
        format="json",
    )
    body = answer.json()
    assert body["created"] == 1
    assert [item["content"] for item in body["skipped"]] == ["works at acme."]
    assert set(body["skipped"][0]) == {"content", "reason"}


def test_import_takes_plain_text_one_note_per_line(api, user):
    answer = api.post(
        f"{BASE}/import?categories=Food,%20Habits",
        "Likes tea.\nWalks at 7.\n",
        content_type="text/plain; charset=utf-8",
    )
    assert answer.json() == {"created": 2, "skipped": []}
    categories = [
        list(value)
        for value in MemoryNote.objects.filter(user=user).values_list("categories", flat=True)
    ]
    assert categories == [["Food", "Habits"], ["Food", "Habits"]]


def test_an_invalid_note_in_an_import_is_400_and_nothing_is_written(api, user):
    add(api, "Works at Acme.", ["Work"])
    answer = api.post(
        f"{BASE}/import",
        {
            "notes": [
                {"categories": ["Food"], "content": "Likes tea."},
                {"categories": [], "content": "x"},
            ]
        },
        format="json",
    )
    message = assert_error(answer, 400, "invalid")
    assert message.startswith("Note 2 of 2")
    assert contents(user) == ["Works at Acme."]


@override_settings(AGENT_MEMORY={"MAX_NOTES": 2})
def test_an_import_past_a_limit_is_409_and_nothing_is_written(api, user):
    add(api, "Works at Acme.", ["Work"])
    answer = api.post(f"{BASE}/import", "One.\nTwo.", content_type="text/plain")
    assert_error(answer, 409, "limit_reached")
    assert contents(user) == ["Works at Acme."]


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ('{"format": "agent_memory", "version": 7, "notes": []}', "application/json"),
        ("{not json", "application/json"),
        ('"Prefers tea"', "application/json"),  # a JSON string is neither a file nor a list
        ("", "text/plain"),
        (b"\xff\xfe bad", "text/plain"),
    ],
)
def test_an_unreadable_import_is_400(api, user, body, content_type):
    answer = api.generic("POST", f"{BASE}/import", body, content_type=content_type)
    assert_error(answer, 400, "invalid")
    assert contents(user) == []


def test_export_and_import_need_a_person(client):
    assert client.get(f"{BASE}/export").status_code in (401, 403)
    assert client.post(f"{BASE}/import", "x", content_type="text/plain").status_code in (401, 403)


def test_export_holds_only_the_persons_own_notes(api, user, other_user):
    add(api, "Mine.", ["Me"])
    other = APIClient()
    other.force_login(other_user)
    add(other, "Theirs.", ["Them"])
    document = api.get(f"{BASE}/export").json()
    assert [note["content"] for note in document["notes"]] == ["Mine."]


def test_importing_an_export_again_after_an_erase_skips_every_note_and_writes_nothing(api, user):
    # On PostgreSQL this once answered 500: nothing left to insert compiled into ``IN ()``.
    add(api, "Works at Acme.", ["Work"])
    document = api.get(f"{BASE}/export").json()
    assert api.delete(BASE).json() == {"deleted": 1}
    assert api.post(f"{BASE}/import", document, format="json").json()["created"] == 1

    again = api.post(f"{BASE}/import", document, format="json")

    assert again.status_code == 200, again.content
    assert again.json()["created"] == 0
    assert [item["content"] for item in again.json()["skipped"]] == ["Works at Acme."]
    assert contents(user) == ["Works at Acme."]
