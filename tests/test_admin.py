"""Django admin for ops: finding notes, editing them through the rules, reading optimizer runs."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from agent_memory import LongTermMemory
from agent_memory.models import MemoryNote, MergedNoteSnapshot, MergeRun, OptimizerState

from .admin_pages import NOTES, add, change_data, page


@pytest.fixture
def memory():
    return LongTermMemory()


# --- finding notes ---------------------------------------------------------------------------


def test_ops_find_a_persons_notes_by_username(client, ops, memory, ann, bob):
    add(memory, ann, "Prefers tea")
    add(memory, bob, "Loves opera", ["Music"])
    listing = page(client.get(NOTES, {"q": "ann"}))
    assert "Prefers tea" in listing
    assert "Loves opera" not in listing


def test_ops_search_note_text(client, ops, memory, ann, bob):
    add(memory, ann, "Prefers tea")
    add(memory, bob, "Loves opera", ["Music"])
    listing = page(client.get(NOTES, {"q": "opera"}))
    assert "Loves opera" in listing and "Prefers tea" not in listing


def test_ops_filter_by_person_source_and_category(client, ops, memory, ann, bob):
    add(memory, ann, "Prefers tea", ["Food", "Drinks"])
    add(memory, ann, "Writes Python", ["Work"])
    memory.create_notes(
        bob, [{"categories": ["drinks"], "content": "Likes juice"}], source="person"
    )
    by_person = page(client.get(NOTES, {"person": ann.pk}))
    assert "Prefers tea" in by_person and "Writes Python" in by_person
    assert "Likes juice" not in by_person
    by_category = page(client.get(NOTES, {"category": "Drinks"}))
    assert "Prefers tea" in by_category and "Likes juice" in by_category
    assert "Writes Python" not in by_category
    by_source = page(client.get(NOTES, {"source__exact": "person"}))
    assert "Likes juice" in by_source and "Prefers tea" not in by_source


def test_list_shows_user_categories_source_and_version(client, ops, memory, ann):
    note = add(memory, ann, "Prefers tea", ["Food", "Drinks"])
    listing = page(client.get(NOTES))
    assert f"memory:{note.id}" in listing
    assert "Food, Drinks" in listing
    assert "ann" in listing


# --- editing through the rules ---------------------------------------------------------------


def test_edit_in_admin_goes_through_the_rules_and_versions(client, ops, memory, ann):
    note = add(memory, ann, "Prefers tea")
    response = client.post(
        f"{NOTES}{note.id}/change/", change_data(note, content="Prefers green tea")
    )
    assert response.status_code == 302
    row = MemoryNote.objects.get(pk=note.id)
    assert (row.content, row.version, row.source) == ("Prefers green tea", 2, "admin")


def test_edit_breaking_a_rule_is_refused_with_the_rules_message(client, ops, memory, ann):
    note = add(memory, ann, "Prefers tea")
    response = client.post(
        f"{NOTES}{note.id}/change/",
        change_data(note, content="Card 4111 1111 1111 1111 for payments"),
    )
    assert response.status_code == 200
    assert "Memory is not a place for passwords, keys or card numbers" in page(response)
    row = MemoryNote.objects.get(pk=note.id)
    assert (row.content, row.version) == ("Prefers tea", 1)


def test_edit_with_bad_categories_is_refused_with_the_rules_message(client, ops, memory, ann):
    note = add(memory, ann, "Prefers tea")
    response = client.post(f"{NOTES}{note.id}/change/", change_data(note, categories="A, a"))
    assert "are the same category; give it once." in page(response)
    assert MemoryNote.objects.get(pk=note.id).categories == ["Food"]


def test_edit_making_a_duplicate_is_refused(client, ops, memory, ann):
    add(memory, ann, "Prefers tea")
    note = add(memory, ann, "Prefers coffee")
    response = client.post(f"{NOTES}{note.id}/change/", change_data(note, content="prefers TEA"))
    assert "This text is already saved as memory:" in page(response)
    assert MemoryNote.objects.get(pk=note.id).content == "Prefers coffee"


def test_stale_edit_in_admin_is_refused(client, ops, memory, ann):
    note = add(memory, ann, "Prefers tea")
    memory.update_note(ann, note.id, 1, ["Food"], "Prefers coffee now")
    response = client.post(
        f"{NOTES}{note.id}/change/", change_data(note, content="Prefers green tea")
    )
    assert "This note was changed elsewhere while you were editing it (it is now version 2)" in (
        page(response)
    )
    assert MemoryNote.objects.get(pk=note.id).content == "Prefers coffee now"


@override_settings(AGENT_MEMORY={"MAX_NOTES": 1})
def test_add_in_admin_respects_the_limits(client, ops, memory, ann):
    add(memory, ann, "Prefers tea")
    response = client.post(
        f"{NOTES}add/", {"user": ann.pk, "categories": "Work", "content": "Writes Python"}
    )
    assert "Memory is full: 1 of 1 notes are saved" in page(response)
    assert MemoryNote.objects.filter(user=ann).count() == 1


def test_add_in_admin_writes_an_admin_note(client, ops, ann):
    response = client.post(
        f"{NOTES}add/", {"user": ann.pk, "categories": "Work, Tools", "content": "Uses ruff"}
    )
    assert response.status_code == 302
    row = MemoryNote.objects.get(user=ann)
    assert (row.categories, row.source, row.version) == (["Work", "Tools"], "admin", 1)


def test_delete_in_admin(client, ops, memory, ann):
    note = add(memory, ann, "Prefers tea")
    response = client.post(f"{NOTES}{note.id}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not MemoryNote.objects.filter(pk=note.id).exists()


# --- the optimizer's records ------------------------------------------------------------------


def failed_run(person, groups, rejected):
    """A run whose every proposed group was rejected."""
    now = timezone.now()
    return MergeRun.objects.create(
        user=person,
        status="failed",
        model="default",
        started_at=now,
        lease_expires_at=now + timedelta(minutes=10),
        finished_at=now,
        proposals={"schema": 1, "groups": groups},
        rejected=rejected,
        error="Every proposed group was rejected.",
    )


@pytest.fixture
def run(ann):
    return failed_run(
        ann,
        [{"ids": [1, 2], "categories": ["Food"], "content": "Likes coffee"}],
        [
            {
                "index": 0,
                "ids": [1, 2],
                "code": "negation",
                "reason": "The sources disagree: one says the person does not like coffee.",
            }
        ],
    )


def test_ops_read_a_runs_rejection_reasons(client, ops, run):
    detail = page(client.get(f"/admin/agent_memory/mergerun/{run.pk}/change/"))
    assert "The sources disagree: one says the person does not like coffee." in detail
    assert "<code>memory:1</code>" in detail and "<code>memory:2</code>" in detail
    assert "negation" in detail
    assert "Likes coffee" in detail  # the proposal itself
    assert 'name="_save"' not in detail  # read-only


def test_merge_runs_are_listed_with_counts(client, ops, run):
    listing = page(client.get("/admin/agent_memory/mergerun/", {"q": "ann"}))
    assert f"/admin/agent_memory/mergerun/{run.pk}/change/" in listing


def snapshot_of(run, person, group_index=0):
    return MergedNoteSnapshot.objects.create(
        run=run,
        user=person,
        group_index=group_index,
        merged_note_id=9,
        merged_version=1,
        sources={"schema": 1, "notes": [{"id": 1, "content": "Likes tea"}]},
    )


def test_snapshots_are_read_only(client, ops, run, ann):
    snapshot = snapshot_of(run, ann)
    detail = page(client.get(f"/admin/agent_memory/mergednotesnapshot/{snapshot.pk}/change/"))
    assert "memory:9" in detail and "Likes tea" in detail
    assert 'name="_save"' not in detail
    assert client.get("/admin/agent_memory/mergednotesnapshot/add/").status_code == 403


def test_reset_backoff_action(client, ops, ann, bob):
    later = timezone.now() + timedelta(hours=24)
    OptimizerState.objects.create(user=ann, consecutive_failures=3, next_run_at=later)
    OptimizerState.objects.create(user=bob, consecutive_failures=2, next_run_at=later)
    response = client.post(
        "/admin/agent_memory/optimizerstate/",
        {"action": "reset_backoff", "_selected_action": [ann.pk]},
        follow=True,
    )
    assert "Backoff reset for 1 person." in page(response)
    state = OptimizerState.objects.get(user=ann)
    assert (state.consecutive_failures, state.next_run_at) == (0, None)
    assert OptimizerState.objects.get(user=bob).consecutive_failures == 2


# --- ops read it in their language ------------------------------------------------------------


@pytest.fixture
def russian(client):
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "ru"
    return client


def rejected_run(person, memory, *, reason_code, reason, index=0, notes=None):
    tea, coffee = notes or (
        add(memory, person, "Likes coffee", ["Drinks"]),
        add(memory, person, "Doesn't like coffee", ["Drinks"]),
    )
    group = {"ids": [tea.id, coffee.id], "categories": ["Drinks"], "content": "Likes it"}
    run = failed_run(
        person,
        [group] * (index + 1),
        [{"index": index, "ids": [tea.id, coffee.id], "code": reason_code, "reason": reason}],
    )
    return run, tea, coffee


def test_each_rejection_sits_beside_the_texts_of_its_notes(client, ops, memory, ann):
    from agent_memory.optimizer import reasons

    run, _tea, _coffee = rejected_run(
        ann, memory, reason_code="polarity", reason=reasons.SOURCES_DISAGREE
    )
    detail = page(client.get(f"/admin/agent_memory/mergerun/{run.pk}/change/"))
    row = detail[detail.index("field-rejection_reasons") :]
    row = row[row.index("<tbody>") : row.index("</tbody>")]
    assert "Group 1" in row and "Likes coffee" in row and "Doesn&#x27;t like coffee" in row
    assert "Likes it" in row  # what the model proposed
    assert "The sources disagree" in row


def test_a_deleted_note_named_by_a_rejection_shows_no_text(client, ops, memory, ann):
    run, tea, _coffee = rejected_run(ann, memory, reason_code="polarity", reason="x")
    memory.delete_note(ann, tea.id, tea.version)
    detail = page(client.get(f"/admin/agent_memory/mergerun/{run.pk}/change/"))
    assert "no longer in memory" in detail
    assert "Doesn&#x27;t like coffee" in detail


@pytest.mark.parametrize(
    ("stored", "russian_text"),
    [
        ("Every proposed group was rejected.", "Все предложенные группы отклонены."),
        ("memory:9: not a current note of this person.", "memory:9: у этого человека нет такой"),
        ("The merged text loses: 12, Anna.", "В объединённом тексте потеряно: 12, Anna."),
        ("A source changed while the model was thinking.", "Исходная заметка изменилась"),
        ("Something a custom store said.", "Something a custom store said."),
    ],
)
def test_reasons_are_read_in_the_admins_language(stored, russian_text):
    from django.utils import translation

    from agent_memory.optimizer.reasons import translate_reason

    with translation.override("ru"):
        assert translate_reason(stored).startswith(russian_text)
    with translation.override("en"):
        assert translate_reason(stored) == stored


def test_the_russian_admin_translates_reasons_and_counts_runs_with_the_right_plural(
    russian, ops, memory, ann
):
    notes = None
    for _ in range(5):
        run, *notes = rejected_run(
            ann,
            memory,
            reason_code="lost_detail",
            reason="The merged text loses: 12, Anna.",
            notes=notes,
        )
    listing = page(russian.get("/admin/agent_memory/mergerun/"))
    assert "5 запусков оптимизатора" in listing
    assert "запуски оптимизатора" not in listing.split('class="paginator"')[1]
    detail = page(russian.get(f"/admin/agent_memory/mergerun/{run.pk}/change/"))
    assert f"Запуск {run.pk} (с ошибкой)" in detail
    assert "В объединённом тексте потеряно: 12, Anna." in detail
    assert "Все предложенные группы отклонены." in detail
    assert "The merged text loses" not in detail


@pytest.mark.parametrize(
    ("count", "words"),
    [(1, "1 заметка памяти"), (3, "3 заметки памяти"), (5, "5 заметок памяти"), (21, "21 заметка")],
)
def test_note_counts_use_russian_plurals(russian, ops, memory, ann, count, words):
    for number in range(count):
        add(memory, ann, f"Likes dish number {number}")
    listing = page(russian.get(NOTES))
    assert words in listing.split('class="paginator"')[1]


def test_groups_are_numbered_from_1_in_snapshots_and_rejections(client, ops, memory, ann):
    run, _tea, _coffee = rejected_run(ann, memory, reason_code="polarity", reason="x", index=1)
    snapshot = snapshot_of(run, ann, group_index=1)
    run_page = page(client.get(f"/admin/agent_memory/mergerun/{run.pk}/change/"))
    snapshot_page = page(
        client.get(f"/admin/agent_memory/mergednotesnapshot/{snapshot.pk}/change/")
    )
    snapshot_list = page(client.get("/admin/agent_memory/mergednotesnapshot/"))
    for shown in (run_page, snapshot_page, snapshot_list):
        assert "Group 2" in shown
        assert (
            "Group: 1" not in shown and ">1</td>" not in shown.split("field-group_number")[-1][:40]
        )


def test_empty_values_look_the_same_everywhere(client, ops, memory, ann):
    now = timezone.now()
    run = MergeRun.objects.create(
        user=ann, status="running", model="", started_at=now, lease_expires_at=now
    )
    OptimizerState.objects.create(user=ann)
    listing = page(client.get("/admin/agent_memory/mergerun/"))
    detail = page(client.get(f"/admin/agent_memory/mergerun/{run.pk}/change/"))
    states = page(client.get("/admin/agent_memory/optimizerstate/"))
    for shown in (listing, detail, states):
        assert "None" not in shown.replace("display: none", "")
        assert "-empty-" not in shown
    assert detail.count("—") >= 5  # finished, reverted, failure, rejections, applied groups
    assert "—" in listing and "—" in states


def test_note_form_labels_are_capitalised(client, ops, memory, ann):
    note = add(memory, ann, "Prefers tea")
    form = page(client.get(f"{NOTES}{note.id}/change/"))
    assert ">Categories:</label>" in form and ">Content:</label>" in form
    russian_form = page(client.get(f"{NOTES}{note.id}/change/", HTTP_ACCEPT_LANGUAGE="ru"))
    assert ">Категории:</label>" in russian_form and ">Текст:</label>" in russian_form


# --- pinned notes -----------------------------------------------------------------------------


def test_admin_pins_unpins_and_deletes_a_pinned_note(client, ops, memory, ann):
    note = add(memory, ann, "Never suggest npm", ("Rules",))
    response = client.post(f"{NOTES}{note.id}/change/", change_data(note, pinned="on"))
    assert response.status_code == 302
    row = MemoryNote.objects.get(pk=note.id)
    assert (row.pinned, row.version, row.source) == (True, 2, "admin")
    assert re.search(
        r"<input[^>]*name=\"pinned\"[^>]*checked", page(client.get(f"{NOTES}{note.id}/change/"))
    )
    pinned = memory.note(ann, note.id)
    client.post(f"{NOTES}{note.id}/change/", change_data(pinned))
    assert not MemoryNote.objects.get(pk=note.id).pinned
    client.post(
        f"{NOTES}add/",
        {"user": ann.pk, "categories": "Rules", "content": "No yarn", "pinned": "on"},
    )
    added = MemoryNote.objects.get(user=ann, content="No yarn")
    assert added.pinned
    response = client.post(f"{NOTES}{added.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302 and not MemoryNote.objects.filter(pk=added.pk).exists()


def test_admin_lists_and_filters_pinned_notes(client, ops, memory, ann):
    memory.create_notes(
        ann,
        [{"categories": ["Rules"], "content": "Never suggest npm"}],
        source="person",
        pinned=True,
    )
    add(memory, ann, "Prefers tea")
    html = page(client.get(f"{NOTES}?pinned__exact=1"))
    assert "Never suggest npm" in html and "Prefers tea" not in html


# --- round three: what a run, a filter and a title say -------------------------------------


def test_a_partly_reverted_run_lists_each_group_once_and_names_it_from_1(client, ops, ann):
    from tests.browser.test_screen_revert_groups import two_group_run

    run_id, _ = two_group_run(ann)
    snapshot = MergedNoteSnapshot.objects.get(run_id=run_id, group_index=1)
    response = client.post(
        "/admin/agent_memory/mergednotesnapshot/",
        {"action": "revert_groups", "_selected_action": [snapshot.pk]},
        follow=True,
    )
    assert f"Group 2 of merge {run_id}: Merge reverted" in page(response)
    detail = page(client.get(f"/admin/agent_memory/mergerun/{run_id}/change/"))
    applied = detail[detail.index("field-applied_groups") :]
    applied = applied[: applied.index("field-reverted_groups")]
    assert "Group 1" in applied and "Group 2" not in applied
    reverted = detail[detail.index("field-reverted_groups") :]
    assert "<strong>Group 2</strong>" in reverted and '"index"' not in reverted
    listing = page(client.get("/admin/agent_memory/mergerun/"))
    assert "(1 of 2 groups)" in listing


def test_the_author_filter_speaks_to_staff(client, ops, memory, ann):
    memory.create_notes(ann, [{"categories": ["Food"], "content": "Likes juice"}], source="person")
    listing = page(client.get(NOTES))
    assert "By author" in listing and "By written by" not in listing
    assert "the person" in listing and ">you<" not in listing
    assert "Likes juice" in page(client.get(NOTES, {"source__exact": "person"}))
    assert "Likes juice" not in page(client.get(NOTES, {"source__exact": "agent"}))


def test_the_russian_admin_declines_its_titles_and_names_its_section(client, ops):
    russian = {"HTTP_ACCEPT_LANGUAGE": "ru"}
    listing = page(client.get(NOTES, **russian))
    assert "Выберите заметку памяти для изменения" in listing
    assert "Добавить заметку памяти" in listing
    assert "Выберите заметка" not in listing and "Добавить заметка" not in listing
    assert "Добавить заметку памяти" in page(client.get(f"{NOTES}add/", **russian))
    assert "Память агента" in page(client.get("/admin/", **russian))


def test_the_optimizer_state_page_edits_no_digest_or_options(client, ops, ann):
    state = OptimizerState.objects.create(user=ann, consecutive_failures=1)
    detail = page(client.get(f"/admin/agent_memory/optimizerstate/{state.pk}/change/"))
    assert "<textarea" not in detail
    assert 'type="text"' not in detail


def test_a_rejections_code_is_a_tooltip_and_a_state_is_named_by_its_person(client, ops, run, ann):
    detail = page(client.get(f"/admin/agent_memory/mergerun/{run.pk}/change/"))
    assert 'title="negation"' in detail and "<code>negation</code>" not in detail
    state = OptimizerState.objects.create(user=ann)
    assert str(state) == "Optimizer state of ann"
    russian = page(
        client.get(
            f"/admin/agent_memory/optimizerstate/{state.pk}/change/", HTTP_ACCEPT_LANGUAGE="ru"
        )
    )
    assert "Состояние оптимизатора для ann" in russian


@pytest.mark.parametrize(
    ("language", "person", "you"), [("en", "the person", "you"), ("ru", "сам человек", "вы")]
)
def test_a_notes_page_and_filter_name_its_authors_in_staffs_words(
    client, ops, memory, ann, language, person, you
):
    (note,) = memory.create_notes(
        ann, [{"categories": ["Food"], "content": "Likes juice"}], source="person"
    )
    memory.update_note(ann, note.id, 1, ["Food"], "Likes orange juice", source="person")
    russian = {"HTTP_ACCEPT_LANGUAGE": language}
    listing = page(client.get(NOTES, **russian))
    detail = page(client.get(f"{NOTES}{note.id}/change/", **russian))
    for shown in (listing, detail):
        assert person in shown
        assert f">{you}<" not in shown and f" {you} " not in shown
    versions = detail[detail.index("field-earlier_versions") :]
    assert f"v1 · {person} · " in versions  # the earlier version, by whom
