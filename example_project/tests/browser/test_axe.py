"""axe-core finds no accessibility violation on the pages people and staff use (Chromium).

The memory screen (with notes in several categories, a merge and a note the agent only finds by
searching), a note's editor, the erase confirmation, the example chat with memory in it, and the
admin's note list and a merge run's page; on a desktop, and the screen on a phone in Russian.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, override_settings

from agent_memory import LongTermMemory
from agent_memory.models import MergeRun
from example_project.chat.models import Chat
from tests.browser.test_screen import log_in, make_merge

axe_module = pytest.importorskip("axe_playwright_python.sync_playwright")


@pytest.fixture
def staff(transactional_db):
    """A staff member who also uses the chat: notes, a merge, a chat with memory in it."""
    user = get_user_model().objects.create_superuser("ops", "ops@example.com", "pw-for-tests")
    memory = LongTermMemory()
    for start in range(0, 12, memory.limits.max_batch):
        memory.create_notes(
            user,
            [
                {"categories": [["Food", "Work", "Travel"][index % 3]], "content": f"Fact {index}"}
                for index in range(start, min(12, start + memory.limits.max_batch))
            ],
        )
    tea, sugar = memory.create_notes(
        user,
        [
            {"categories": ["Drinks", "Food"], "content": "Prefers tea"},
            {"categories": ["Drinks"], "content": "Takes no sugar in tea"},
        ],
    )
    make_merge(user, [tea, sugar], "Prefers tea, no sugar", ("Drinks",))
    client = Client()
    client.force_login(user)
    chat = Chat.objects.create(user=user)
    client.post(f"/chats/{chat.pk}/send", {"text": "remember that I prefer green tea"})
    client.post(f"/chats/{chat.pk}/send", {"text": "what do you know about me?"})
    user.chat_id = chat.pk
    return user


def violations(page: Any) -> list[str]:
    results = axe_module.Axe().run(page)
    return [
        f"{item['id']}: {item['help']} ({[node['html'][:120] for node in item['nodes']]})"
        for item in results.response["violations"]
    ]


@pytest.mark.parametrize(
    ("language", "viewport"),
    [("en", {"width": 1280, "height": 800}), ("ru", {"width": 390, "height": 844})],
    ids=["desktop-en", "phone-ru"],
)
def test_no_violation_on_the_pages_people_and_staff_use(
    new_context, live_server, staff, language, viewport
):
    context = new_context(
        viewport=viewport,
        locale=f"{language}-{language.upper()}",
        extra_http_headers={"Accept-Language": language},
    )
    log_in(context, live_server, staff)
    page = context.new_page()
    note = LongTermMemory().notes(staff)[-1]
    run = MergeRun.objects.get(user=staff)
    addresses = [
        "/memory/",
        f"/memory/notes/{note.id}/edit",
        "/memory/erase",
        f"/chats/{staff.chat_id}/",
        "/admin/agent_memory/memorynote/",
        f"/admin/agent_memory/mergerun/{run.pk}/change/",
    ]
    found = {}
    with override_settings(AGENT_MEMORY={"MAX_BLOCK_CHARS": 300}):
        for address in addresses:
            # Once loaded, these pages ask for nothing more (no request on load or timer).
            page.goto(live_server.url + address, wait_until="load")
            found[address] = violations(page)
    assert found == {address: [] for address in addresses}
