"""``POST {base}/memory/import`` is bounded: a body past 1 MB is refused before it is read, and
more notes than fit are refused before any note is checked."""

from __future__ import annotations

import json

import pytest

from agent_memory import transfer
from agent_memory.models import MemoryNote
from tests.api.test_endpoints import BASE, add, assert_error

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("content_type", ["text/plain", "application/json"])
def test_an_import_body_over_1_mb_is_invalid_saying_the_cap(api, user, content_type):
    line = "Likes green tea in the morning, usually with lemon.\n"
    body = line * (10_000_000 // len(line))
    if content_type == "application/json":
        body = json.dumps([{"categories": ["Food"], "content": line}] * 200_000)

    response = api.post(f"{BASE}/import", body.encode(), content_type=content_type)

    message = assert_error(response, 400, "invalid")
    assert "1 MB" in message and "1000000 bytes" in message
    assert not MemoryNote.objects.filter(user=user).exists()


def test_an_import_body_just_under_the_cap_is_read(api, user):
    body = "".join(f"{number:09d} " + "x" * 89 + "\n" for number in range(9_999))
    assert len(body) < transfer.MAX_IMPORT_BYTES
    # Parsed, and then refused for the number of notes it holds, not its size.
    assert_error(
        api.post(f"{BASE}/import", body.encode(), content_type="text/plain"), 409, "limit_reached"
    )


def test_a_plain_text_body_past_the_cap_without_a_declared_length_is_refused():
    from io import BytesIO

    from agent_memory.api.views import PlainTextParser
    from agent_memory.errors import InvalidNote

    with pytest.raises(InvalidNote, match="1 MB"):
        PlainTextParser().parse(BytesIO(b"a\n" * transfer.MAX_IMPORT_BYTES))


def test_a_3000_line_import_is_limit_reached_with_the_figures_before_any_note_is_checked(
    api, user, monkeypatch
):
    add(api, "Works at Acme.", ["Work"])
    checked = []
    monkeypatch.setattr(transfer, "clean_items", lambda *args: checked.append(args) or [])
    body = "".join(f"Note number {number} about the person.\n" for number in range(3000))

    response = api.post(f"{BASE}/import", body.encode(), content_type="text/plain")

    message = assert_error(response, 409, "limit_reached")
    assert "3000 new notes" in message and "only 199 are free" in message
    assert "1 of 200 notes are saved" in message
    assert checked == []
    assert MemoryNote.objects.filter(user=user).count() == 1


def test_an_import_of_notes_all_saved_already_needs_no_room(api, user, settings):
    settings.AGENT_MEMORY = {**settings.AGENT_MEMORY, "MAX_NOTES": 2}
    add(api, "Works at Acme.", ["Work"])
    add(api, "Likes tea.", ["Food"])
    document = api.get(f"{BASE}/export").json()
    document["notes"] += document["notes"]  # and each repeated once more

    response = api.post(f"{BASE}/import", document, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["created"] == 0 and len(response.json()["skipped"]) == 4


def test_an_import_past_the_character_limit_is_refused_with_the_figures(api, user, settings):
    settings.AGENT_MEMORY = {**settings.AGENT_MEMORY, "MAX_TOTAL_CHARS": 100}
    notes = [{"categories": ["A"], "content": f"{number} " + "y" * 40} for number in range(3)]

    response = api.post(f"{BASE}/import", notes, format="json")

    message = assert_error(response, 409, "limit_reached")
    assert "needs 126 characters" in message and "only 100 are free" in message


def test_an_import_with_odd_categories_is_invalid_not_a_server_error(api, user):
    notes = [{"categories": [{"a": 1}, ["b"]], "content": "Likes tea."}]

    assert_error(api.post(f"{BASE}/import", notes, format="json"), 400, "invalid")
