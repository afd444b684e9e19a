"""The screen's import has the API's bounds: a file past 1 MB is refused unread, and more notes
than fit are refused, with the figures, before any is checked."""

from __future__ import annotations

import html

import pytest
from django.core.files import uploadhandler
from django.test import Client

from agent_memory.models import MemoryNote
from tests.screen.pages import SCREEN, add, text
from tests.screen.test_people import field_errors, upload

pytestmark = pytest.mark.django_db


def test_a_file_over_1_mb_is_refused_before_it_is_read(client, person, monkeypatch):
    read = []
    for handler in (
        uploadhandler.MemoryFileUploadHandler,
        uploadhandler.TemporaryFileUploadHandler,
    ):
        chunk = handler.receive_data_chunk
        monkeypatch.setattr(
            handler,
            "receive_data_chunk",
            lambda self, data, start, chunk=chunk: (
                read.append(len(data)) or chunk(self, data, start)
            ),
        )
    big = "Likes green tea in the morning.\n" * (10_000_000 // 32)

    response = client.post(f"{SCREEN}import", {"file": upload(big, "notes.txt")})

    assert response.status_code == 400
    (error,) = field_errors(text(response))
    assert "larger than 1 MB" in error
    assert read == []
    assert MemoryNote.objects.filter(user=person).count() == 0


def test_a_3000_line_file_is_refused_with_the_room_left(client, person, memory):
    add(memory, person, "Likes green tea")
    lines = "".join(f"Note number {number} about me\n" for number in range(3000))

    response = client.post(f"{SCREEN}import", {"file": upload(lines, "notes.txt")})

    assert response.status_code == 400
    (error,) = field_errors(html.unescape(text(response)))
    assert "3000 new notes" in error and "room for 199 more (1 of 200 are saved)" in error
    assert MemoryNote.objects.filter(user=person).count() == 1


def test_the_import_still_demands_the_csrf_token(user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)

    response = client.post(f"{SCREEN}import", {"file": upload("Likes tea\n", "notes.txt")})

    assert response.status_code == 403
    assert MemoryNote.objects.filter(user=user).count() == 0
