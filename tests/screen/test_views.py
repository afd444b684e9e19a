"""The memory screen through Django's test client: the rules, versions and errors it shows.

The same flows run in a real browser in tests/browser/test_screen.py.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, override_settings

from agent_memory.errors import DuplicateNote, ErrorCode, LimitReached, MergeConflict
from agent_memory.models import MemoryNote
from agent_memory.screen import views
from tests.screen.pages import HTMX, SCREEN, add, scripted_merges, text

# --- access ---------------------------------------------------------------------------------


def test_anonymous_person_is_sent_to_login(client, db):
    response = client.get(SCREEN)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=/memory/")


@override_settings(AGENT_MEMORY={"ENABLED": False})
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", SCREEN),
        ("post", SCREEN),
        ("get", "/memory/notes/1/edit"),
        ("post", "/memory/notes/1/delete"),
        ("get", "/memory/erase"),
        ("post", "/memory/merges/1/revert"),
    ],
)
def test_every_address_is_404_when_memory_is_disabled(client, person, method, path):
    assert getattr(client, method)(path).status_code == 404


def resolve_nobody(request):
    return None


def resolve_other(request):
    return get_user_model().objects.get(username="other-person")


@override_settings(AGENT_MEMORY={"RESOLVE_USER": "tests.screen.test_views.resolve_nobody"})
def test_resolve_user_returning_none_means_login(client, person):
    assert client.get(SCREEN)["Location"].startswith("/accounts/login/")


@override_settings(AGENT_MEMORY={"RESOLVE_USER": "tests.screen.test_views.resolve_other"})
def test_resolve_user_picks_whose_memory_is_shown(client, person, make_user, memory):
    other = make_user("other-person")
    add(memory, other, "Loves opera", ["Music"])
    add(memory, person, "Prefers tea")
    page = text(client.get(SCREEN))
    assert "Loves opera" in page and "Prefers tea" not in page


def test_forms_need_the_csrf_token(user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.post(SCREEN, {"categories": "Food", "content": "Prefers tea"})
    assert response.status_code == 403
    assert not MemoryNote.objects.filter(user=user).exists()


def test_page_is_never_cached(client, person):
    assert "no-store" in client.get(SCREEN)["Cache-Control"]


# --- reading --------------------------------------------------------------------------------


def test_empty_memory_explains_what_memory_is(client, person):
    page = text(client.get(SCREEN))
    assert "The agent has not saved anything about you yet." in page
    assert "0 of 200 notes" in page
    assert "Erase all memory…" not in page


def test_notes_are_grouped_under_their_first_category(client, person, memory):
    add(memory, person, "Prefers tea", ["Food", "Drinks"])
    add(memory, person, "Writes Python", ["Work"])
    memory.create_notes(person, [{"categories": ["Work"], "content": "Uses ruff"}], source="person")
    page = text(client.get(SCREEN))
    groups = re.findall(r'class="am-group-title"[^>]*>([^<]+)<', page)
    assert [name.strip() for name in groups] == ["Food", "Work"]
    assert re.search(r'class="am-tag"[^>]*>Drinks</a>', page)
    assert "by the agent" in page and "by you" in page
    assert "3 of 200 notes" in page
    assert "Changed on" in page


def test_overflow_says_how_many_notes_the_agent_sees(client, person, memory):
    for number in range(4):
        add(memory, person, f"Fact number {number} " + "x" * 80, [f"Topic {number}"])
    with override_settings(AGENT_MEMORY={"MAX_BLOCK_CHARS": 700}):
        page = text(client.get(SCREEN))
        shown = sum(not block.hidden for block in memory.blocks(person))
    assert 0 < shown < 4
    assert (
        f"The agent sees {shown} of 4 notes — the most recently changed; it finds the others by "
        "searching." in page
    )
    assert page.count("Found by search only") == 4 - shown


def test_no_overflow_sentence_when_every_note_fits(client, person, memory):
    add(memory, person, "Prefers tea")
    assert "The agent sees" not in text(client.get(SCREEN))


def test_note_text_is_escaped(client, person, memory):
    add(memory, person, '<script>alert("x")</script><img src=x onerror=alert(1)>')
    page = text(client.get(SCREEN))
    assert "<script>alert" not in page
    assert "<img src=x" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page


def test_another_persons_notes_are_not_shown(client, person, other_user, memory):
    add(memory, other_user, "Secretly loves opera")
    assert "Secretly loves opera" not in text(client.get(SCREEN))


# --- adding ---------------------------------------------------------------------------------


def test_add_saves_a_note_written_by_the_person_and_redirects(client, person):
    response = client.post(SCREEN, {"categories": "Food, Drinks", "content": "Prefers tea"})
    note = MemoryNote.objects.get(user=person)
    assert response.status_code == 302
    assert response["Location"] == f"/memory/#note-{note.pk}"
    assert (note.categories, note.content, note.source, note.version) == (
        ["Food", "Drinks"],
        "Prefers tea",
        "person",
        1,
    )
    assert "Note saved." in text(client.get(SCREEN))


def test_add_refused_by_a_rule_shows_the_rules_message(client, person, caplog):
    secret = "my password: hunter2-very-secret"
    with caplog.at_level(logging.DEBUG):
        response = client.post(SCREEN, {"categories": "Accounts", "content": secret})
    assert response.status_code == 400
    assert "Memory is not a place for passwords, keys or card numbers" in text(response)
    assert not MemoryNote.objects.filter(user=person).exists()
    assert all("hunter2" not in record.getMessage() for record in caplog.records)


def test_add_with_bad_categories_shows_the_rules_message(client, person):
    response = client.post(SCREEN, {"categories": "A, B, C, D", "content": "Prefers tea"})
    assert response.status_code == 400
    assert "A note can have up to 3 categories; you gave 4." in text(response)
    # What the person typed is kept.
    assert "Prefers tea</textarea>" in text(response)


def test_add_duplicate_points_to_the_existing_note(client, person, memory):
    add(memory, person, "Prefers tea", ["Food", "Drinks"])
    response = client.post(SCREEN, {"categories": "drinks", "content": "prefers  TEA"})
    assert response.status_code == 400
    assert "This text is already saved in another note (Food, Drinks)." in text(response)
    assert MemoryNote.objects.filter(user=person).count() == 1


@override_settings(AGENT_MEMORY={"MAX_NOTES": 1})
def test_add_past_the_limit_says_memory_is_full(client, person, memory):
    add(memory, person, "Prefers tea")
    response = client.post(SCREEN, {"categories": "Work", "content": "Writes Python"})
    assert response.status_code == 400
    assert "Memory is full: 1 of 1 notes are saved." in text(response)
    assert "1 of 1 note" in text(response)
    assert MemoryNote.objects.filter(user=person).count() == 1


# --- editing --------------------------------------------------------------------------------


def test_edit_page_shows_the_editor_in_place(client, person, memory):
    note = add(memory, person, "Prefers tea")
    page = text(client.get(f"/memory/notes/{note.id}/edit"))
    assert f'action="/memory/notes/{note.id}/edit"' in page
    assert 'name="version"' in page and f'value="{note.version}"' in page
    assert "Prefers tea</textarea>" in page
    assert "What the agent remembers about you" in page


def test_edit_fragment_for_htmx_is_the_row_only(client, person, memory):
    note = add(memory, person, "Prefers tea")
    page = text(client.get(f"/memory/notes/{note.id}/edit", **HTMX))
    assert page.strip().startswith(f'<li id="note-{note.id}"')
    assert "<html" not in page


def test_edit_saves_with_the_version_and_marks_it_as_yours(client, person, memory):
    note = add(memory, person, "Prefers tea")
    response = client.post(
        f"/memory/notes/{note.id}/edit",
        {"categories": "Food", "content": "Prefers green tea", "version": note.version},
    )
    assert response.status_code == 302
    row = MemoryNote.objects.get(pk=note.id)
    assert (row.content, row.version, row.source) == ("Prefers green tea", 2, "person")


def test_htmx_edit_answers_with_the_whole_screen_in_place(client, person, memory):
    note = add(memory, person, "Prefers tea")
    response = client.post(
        f"/memory/notes/{note.id}/edit",
        {"categories": "Food", "content": "Prefers green tea", "version": note.version},
        **HTMX,
    )
    assert response.status_code == 200
    assert response["HX-Retarget"] == "#am-screen"
    assert text(response).lstrip().startswith('<div id="am-screen"')
    assert "Prefers green tea" in text(response)


def test_htmx_edit_refused_by_a_rule_answers_with_the_row_and_the_message(client, person, memory):
    note = add(memory, person, "Prefers tea")
    response = client.post(
        f"/memory/notes/{note.id}/edit",
        {"categories": "", "content": "Prefers green tea", "version": 1},
        **HTMX,
    )
    assert response.status_code == 200  # htmx swaps only successful answers
    assert "HX-Retarget" not in response
    assert text(response).strip().startswith(f'<li id="note-{note.id}"')
    assert "Give the note a category, e.g. “Preferences”." in text(response)
    assert MemoryNote.objects.get(pk=note.id).version == 1


def test_htmx_delete_asks_in_the_row(client, person, memory):
    note = add(memory, person, "Prefers tea")
    response = client.get(f"/memory/notes/{note.id}/delete", **HTMX)
    assert text(response).strip().startswith(f'<li id="note-{note.id}"')
    assert "Delete this note?" in text(response)


def test_stale_edit_says_the_note_changed_and_shows_the_current_text(client, person, memory):
    note = add(memory, person, "Prefers tea")
    memory.update_note(person, note.id, 1, ["Food"], "Prefers coffee now")
    response = client.post(
        f"/memory/notes/{note.id}/edit",
        {"categories": "Food", "content": "Prefers green tea", "version": 1},
    )
    page = text(response)
    assert response.status_code == 409
    assert page.count("This note was changed elsewhere while you were editing it") == 1
    assert "Prefers coffee now</textarea>" in page
    assert 'value="2"' in page  # the fresh version, so saving again is deliberate
    assert "Prefers green tea" in page  # the person's own text, to copy from
    assert MemoryNote.objects.get(pk=note.id).content == "Prefers coffee now"


def test_edit_breaking_a_rule_keeps_the_note(client, person, memory):
    note = add(memory, person, "Prefers tea")
    response = client.post(
        f"/memory/notes/{note.id}/edit",
        {"categories": "Food/Drinks", "content": "Prefers tea", "version": 1},
    )
    assert response.status_code == 400
    assert "A category can’t contain “/”." in text(response)
    assert MemoryNote.objects.get(pk=note.id).version == 1


def test_editing_another_persons_note_is_like_a_missing_one(client, person, other_user, memory):
    note = add(memory, other_user, "Loves opera")
    response = client.post(
        f"/memory/notes/{note.id}/edit",
        {"categories": "Music", "content": "Hates opera", "version": 1},
        follow=True,
    )
    assert "This note no longer exists" in text(response)
    assert MemoryNote.objects.get(pk=note.id).content == "Loves opera"


def test_an_edit_of_a_deleted_note_keeps_the_typed_text_and_offers_it_as_a_new_note(
    client, person, memory
):
    note = add(memory, person, "Prefers tea", ("Drinks",))
    add(memory, person, "Writes Python", ("Work",))
    memory.delete_note(person, note.id, note.version)
    typed = {"categories": "Drinks", "content": "Prefers green tea", "version": 1}
    response = client.post(f"/memory/notes/{note.id}/edit", typed)
    assert response.status_code == 404
    page = text(response)
    assert "This note no longer exists" in page
    # In "Add a note", which is open, with the text as typed and the offer to keep it.
    assert re.search(r'<details class="am-add-details" open>', page)
    assert ">Prefers green tea</textarea>" in page
    assert 'value="Drinks"' in page
    assert "Save as a new note" in page

    fragment = text(client.post(f"/memory/notes/{note.id}/edit", typed, **HTMX))
    assert fragment.lstrip().startswith(f'<li id="note-{note.id}"')
    assert 'action="/memory/"' in fragment and ">Prefers green tea</textarea>" in fragment
    assert 'id="gone-' in fragment and 'id="new-note-' not in fragment
    response = client.post(SCREEN, {"categories": "Drinks", "content": "Prefers green tea"})
    assert response.status_code == 302
    assert MemoryNote.objects.filter(user=person, content="Prefers green tea").exists()


def test_a_saved_edit_lands_on_its_note_with_saved_shown_in_its_row(client, person, memory):
    note = add(memory, person, "Prefers tea")
    response = client.post(
        f"/memory/notes/{note.id}/edit", {"categories": "Food", "content": "Tea", "version": 1}
    )
    assert response["Location"] == f"/memory/#note-{note.id}"
    page = text(client.get(SCREEN))
    row = page[page.index(f'<li id="note-{note.id}"') :]
    row = row[: row.index("</li>\n", row.index("am-menu"))]
    assert "data-am-land" in row and "Saved." in row
    assert page.count("Saved.") == 1, "shown in the row only, not again at the top"


# --- deleting -------------------------------------------------------------------------------


def test_a_delete_lands_on_the_next_note_and_says_so_there(client, person, memory):
    first = add(memory, person, "Aa first", ("Alpha",))
    second = add(memory, person, "Bb second", ("Beta",))
    third = add(memory, person, "Cc third", ("Gamma",))
    response = client.post(f"/memory/notes/{second.id}/delete", {"version": 1})
    assert response["Location"] == f"/memory/#note-{third.id}"
    page = text(client.get(SCREEN))
    row = page[page.index(f'<li id="note-{third.id}"') :]
    assert row.index("Note deleted.") < row.index("Cc third")
    # The last note listed: focus goes to the one before it.
    response = client.post(f"/memory/notes/{third.id}/delete", {"version": 1})
    assert response["Location"] == f"/memory/#note-{first.id}"
    client.get(SCREEN)
    # The only note: the empty screen says so at its top.
    response = client.post(f"/memory/notes/{first.id}/delete", {"version": 1})
    assert response["Location"] == "/memory/"
    assert "Note deleted." in text(client.get(SCREEN))


def test_delete_asks_first_then_deletes(client, person, memory):
    note = add(memory, person, "Prefers tea")
    page = text(client.get(f"/memory/notes/{note.id}/delete"))
    assert "Delete this note?" in page
    assert MemoryNote.objects.filter(pk=note.id).exists()
    response = client.post(f"/memory/notes/{note.id}/delete", {"version": note.version})
    assert response.status_code == 302
    assert not MemoryNote.objects.filter(pk=note.id).exists()


def test_delete_of_a_changed_note_asks_again_with_its_current_text(client, person, memory):
    note = add(memory, person, "Prefers tea")
    memory.update_note(person, note.id, 1, ["Food"], "Prefers coffee now")
    response = client.post(f"/memory/notes/{note.id}/delete", {"version": 1})
    assert response.status_code == 409
    assert "This note changed elsewhere since you asked to delete it." in text(response)
    assert "Prefers coffee now" in text(response)
    assert MemoryNote.objects.filter(pk=note.id).exists()


# --- erasing --------------------------------------------------------------------------------


def test_erase_confirmation_says_what_will_be_lost(client, person, memory):
    add(memory, person, "Prefers tea", ["Food"])
    add(memory, person, "Writes Python", ["Work"])
    page = text(client.get("/memory/erase"))
    assert "all 2 notes the agent keeps about you (Food, Work)" in page
    assert "This cannot be undone." in page
    assert MemoryNote.objects.filter(user=person).count() == 2


def test_erase_deletes_every_note_of_the_person_only(client, person, other_user, memory):
    add(memory, person, "Prefers tea")
    add(memory, other_user, "Loves opera")
    response = client.post("/memory/erase", {"total": "1"})
    assert response.status_code == 302
    assert not MemoryNote.objects.filter(user=person).exists()
    assert MemoryNote.objects.filter(user=other_user).exists()
    assert "Memory erased: 1 note deleted." in text(client.get(SCREEN))


def test_erase_asks_again_when_notes_were_added_meanwhile(client, person, memory):
    add(memory, person, "Prefers tea")
    add(memory, person, "Writes Python", ["Work"])
    response = client.post("/memory/erase", {"total": "1"})
    assert response.status_code == 409
    assert "Your memory changed since you opened this page." in text(response)
    assert MemoryNote.objects.filter(user=person).count() == 2


# --- merges (the screen's side; the real optimizer runs in the browser test) --------------


def test_merged_section_shows_the_merged_note_and_its_originals(client, person, settings):
    scripted_merges(settings, person)
    page = text(client.get(SCREEN))
    assert "Merged" in page
    assert "Prefers tea, no sugar" in page
    assert "Takes no sugar" in page
    assert "Made from 2 notes:" in page
    # "Revert…" asks first: a link to the confirmation, no form that reverts at once.
    assert 'href="/memory/merges/3/revert?group=' in page
    assert 'action="/memory/merges/3/revert"' not in page


@pytest.mark.parametrize(
    ("error", "sentence"),
    [
        (MergeConflict("x"), "the merged note was changed or deleted after the merge"),
        (LimitReached("x"), "Reverting would bring back more notes than your memory can hold."),
        (
            DuplicateNote("x"),
            "One of the original notes has been saved again since the merge",
        ),
    ],
)
def test_each_revert_conflict_has_a_clear_sentence(client, person, settings, error, sentence):
    scripted_merges(settings, person, error=error)
    response = client.post("/memory/merges/3/revert")
    assert response.status_code == 409
    assert sentence in text(response).replace("&#x27;", "'")


def test_merge_addresses_are_404_when_the_store_cannot_merge(client, person, settings):
    settings.AGENT_MEMORY = {"STORE": {"BACKEND": "tests.scripted_store.NoteOnlyStore"}}
    assert client.post("/memory/merges/3/revert").status_code == 404


# --- privacy ----------------------------------------------------------------------------------


def test_no_note_text_in_any_address(client, person, memory):
    note = add(memory, person, "Prefers tea")
    response = client.post(
        f"/memory/notes/{note.id}/edit",
        {"categories": "Food", "content": "Prefers green tea", "version": 1},
    )
    assert "tea" not in response["Location"]
    page = text(client.get(SCREEN))
    addresses = re.findall(r'(?:href|action|hx-get|hx-post)="([^"]*)"', page)
    assert addresses and all("tea" not in address.lower() for address in addresses)


def test_htmx_is_served_by_the_app_with_the_csrf_header_on_the_screen(client, person):
    page = text(client.get(SCREEN))
    screen = re.search(r'<div id="am-screen"[^>]*>', page).group(0)
    assert 'hx-boost="true"' in screen
    assert re.search(r"""hx-headers='\{"X-CSRFToken": "[A-Za-z0-9]{32,}"\}'""", screen)
    scripts = re.findall(r'<script[^>]*src="([^"]+)"', page)
    assert scripts == ["/static/agent_memory/htmx.min.js", "/static/agent_memory/memory.js"]
    assert not re.search(r'(?:src|href)="(?:https?:)?//', page)  # nothing from a CDN


def test_vendored_htmx_keeps_its_license():
    static = Path(views.__file__).resolve().parents[1] / "static" / "agent_memory"
    assert "Zero-Clause BSD" in (static / "htmx.min.js").read_text()[:300]
    assert "Zero-Clause BSD" in (static / "htmx.LICENSE.txt").read_text()


def test_every_field_has_a_label_and_ids_are_unique(client, person, memory):
    first = add(memory, person, "Prefers tea")
    add(memory, person, "Writes Python", ["Work"])
    page = text(client.get(f"/memory/notes/{first.id}/edit"))  # the add form and an editor
    ids = re.findall(r'\sid="([^"]+)"', page)
    assert len(ids) == len(set(ids))
    fields = re.findall(r"<(?:input|textarea)\b[^>]*>", page)
    visible = [field for field in fields if 'type="hidden"' not in field]
    # The add form's three fields (text, categories, valid until), the editor's three, the search
    # box, the import form's two and the connected apps' token name.
    assert len(visible) == 10
    for field in visible:
        field_id = re.search(r'\sid="([^"]+)"', field).group(1)
        assert re.search(rf'<label class="am-(?:visually-hidden|label)" for="{field_id}">', page)


# --- round three: what each row, group and card says ------------------------------------------


def test_a_note_with_several_categories_is_counted_under_each_like_the_filter(
    client, person, memory
):
    add(memory, person, "Prefers tea", ["Food", "Drinks"])
    add(memory, person, "Drinks coffee at noon", ["Drinks"])
    page = text(client.get(SCREEN))
    counts = re.findall(r'id="am-group-\d+">([^<]+) <span class="am-group-count">(\d+)<', page)
    assert counts == [("Drinks", "2"), ("Food", "1")]
    assert "and 1 more note in “Drinks”, listed under its first category" in page
    assert "2 notes in “Drinks”." in text(client.get(SCREEN, {"category": "Drinks"}))
    russian = text(client.get(SCREEN, HTTP_ACCEPT_LANGUAGE="ru"))
    assert "и ещё 1 заметка в «Drinks», она показана под своей первой категорией" in russian


def test_a_row_does_not_repeat_its_groups_heading_as_a_chip(client, person, memory):
    note = add(memory, person, "Prefers tea", ["Food", "Drinks"])
    page = text(client.get(SCREEN))
    row = page[page.index(f'<li id="note-{note.id}"') :]
    row = row[: row.index("am-menu")]
    assert re.findall(r'class="am-tag"[^>]*>([^<]+)</a>', row) == ["Drinks"]
    # In search results (no heading) every category is a chip.
    found = text(client.get(SCREEN, {"q": "tea"}))
    found = found[found.index(f'<li id="note-{note.id}"') :]
    assert re.findall(r'class="am-tag"[^>]*>([^<]+)</a>', found[: found.index("am-menu")]) == [
        "Food",
        "Drinks",
    ]


def test_search_only_notes_are_marked_once_in_words_not_on_every_row(client, person, memory):
    for number in range(4):
        add(memory, person, f"Fact number {number} " + "x" * 80, [f"Topic {number}"])
    with override_settings(AGENT_MEMORY={"MAX_BLOCK_CHARS": 700}):
        page = text(client.get(SCREEN))
    assert "Notes with a dashed edge are found by search only." in page
    # Each hidden row still says it to a screen reader, without a visible chip.
    assert page.count('class="am-badge am-visually-hidden"') == page.count("Found by search only")


def test_merge_cards_give_the_time_and_merged_notes_link_to_them(client, person, settings):
    scripted_merges(settings, person)
    page = text(client.get(SCREEN))
    assert re.search(
        r"Merged on \w+\.? \d+, \d{4}, (\d+:\d\d|\d+ [ap]\.m\.|noon|midnight)", page
    ), "a date and a time"
    assert re.search(r'<a class="am-tag am-tag--merged" href="#merge-3"', page)
    assert 'href="#am-merges-title"' in page  # and the section links name the Merged section


def test_the_page_links_to_its_sections(client, person, memory):
    add(memory, person, "Prefers tea")
    page = text(client.get(SCREEN))
    nav = page[page.index('<nav class="am-jump"') : page.index("</nav>")]
    anchors = re.findall(r'href="#([\w-]+)"', nav)
    assert anchors == ["am-notes-title", "am-transfer-title", "am-erase-title"]
    for anchor in anchors:
        assert f'id="{anchor}"' in page


def test_after_an_erase_the_empty_screen_says_it_was_erased(client, person, memory):
    add(memory, person, "Prefers tea")
    response = client.post("/memory/erase", {"total": "1"})
    assert response["Location"] == "/memory/#am-empty"
    page = text(client.get(SCREEN))
    empty = page[page.index('id="am-empty"') :]
    assert empty.index("Memory erased: 1 note deleted.") < empty.index("Your memory is empty now.")
    assert "has not saved anything about you yet" not in page
    # Beside the red button, the safe choice reads "don't erase", not "save memory".
    add(memory, person, "Prefers tea")
    russian = text(client.get("/memory/erase", HTTP_ACCEPT_LANGUAGE="ru"))
    assert "Не стирать память" in russian and "Сохранить память" not in russian


def test_a_duplicate_error_links_to_the_note_that_holds_the_text(client, person, memory):
    note = add(memory, person, "Prefers tea")
    response = client.post(SCREEN, {"categories": "Food", "content": "Prefers tea"})
    assert response.status_code == 400
    page = text(response)
    error = page[page.index('id="new-note-content-error"') :]
    error = error[: error.index("</p>")]
    assert "already saved in another note (Food)" in error
    assert f'href="/memory/#note-{note.id}"' in error and "Show that note" in error


def test_an_error_on_the_categories_focuses_the_categories(client, person, memory):
    response = client.post(SCREEN, {"categories": "Food/Drinks", "content": "Prefers tea"})
    page = text(response)
    field = page[page.index('id="new-note-categories"') :]
    assert "autofocus" in field[: field.index(">")]
    textarea = page[page.index('<textarea class="am-input am-textarea" name="content"') :]
    assert "autofocus" not in textarea[: textarea.index(">")]


def test_a_refused_import_words_the_limit_from_the_errors_figures():
    from django.utils import translation

    from agent_memory.wording import person_message

    error = LimitReached("x", code=ErrorCode.TOO_MANY_NOTES, count=39, limit=45, added=12)
    assert person_message(error) == (
        "Not enough room: this adds 12 notes, but only 6 of 45 are free (39 are saved). Delete "
        "at least 6 notes you no longer need, or add fewer, then try again."
    )
    full = LimitReached("x", code=ErrorCode.TOO_MANY_NOTES, count=45, limit=45, added=1)
    assert person_message(full).startswith("Memory is full: 45 of 45 notes are saved.")
    chars = LimitReached(
        "x", code=ErrorCode.TOO_MANY_CHARS, count=47_000, limit=48_000, added=1_500
    )
    assert "only 1000 of 48000 are free" in person_message(chars)
    assert "at least 500 characters" in person_message(chars)
    with translation.override("ru"):
        assert "свободно только 6 из 45 (сохранено 39)" in person_message(error)
