"""Notes with a lifetime: expiry, earlier versions with undo, who wrote what, and the signals
that carry a deletion to the host's copies."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from agent_memory import LongTermMemory, signals
from agent_memory.errors import NoteNotFound
from agent_memory.models import MemoryNote, MemoryNoteVersion
from agent_memory.notes import NewNote
from agent_memory.optimizer import runner
from agent_memory.rules import clean_valid_until
from agent_memory.stores.base import MergePlan
from tests.test_deletion_everywhere import copies_of

BASE = "/api/chat/memory"


def client_of(person) -> APIClient:
    client = APIClient()
    client.force_login(person)
    return client


def staff_client() -> APIClient:
    users = get_user_model().objects
    staff = users.filter(username="ops").first() or users.create_superuser(
        "ops", "ops@example.com", "pw-for-tests"
    )
    return client_of(staff)


@pytest.fixture
def received():
    """Every signal of agent_memory.signals as ``(name, kwargs without sender)``."""
    got: list[tuple[str, dict]] = []
    names = ("note_saved", "note_deleted", "merge_applied", "merge_reverted")
    receivers = {}
    for name in names:

        def receive(sender, signal=None, _name=name, **values):
            got.append((_name, values))

        receivers[name] = receive
        getattr(signals, name).connect(receive)
    yield got
    for name, receive in receivers.items():
        getattr(signals, name).disconnect(receive)


# --- expiry ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_tool_note_whose_end_passes_leaves_every_reader_then_every_column(
    user, django_capture_on_commit_callbacks
):
    memory = LongTermMemory()
    end = timezone.now() + timedelta(hours=1)
    answer = memory.call_tool(
        user,
        {
            "action": "create",
            "notes": [
                {
                    "categories": ["Travel"],
                    "content": "Stays in Zelvorin hotel this week.",
                    "valid_until": end.isoformat(),
                }
            ],
        },
    )
    note = answer["notes"][0]
    assert datetime.fromisoformat(note["valid_until"]) == end
    turn = memory.begin_turn(user, None)
    assert f'key="memory:{note["id"]}"' in turn.text
    assert f'until="{end.astimezone(UTC).date().isoformat()}"' in turn.text
    client = client_of(user)
    assert "Zelvorin" in client.get("/memory/").content.decode()

    # The hour passes: the note's end is now a second ago (as the clock would have it).
    MemoryNote.objects.filter(pk=note["id"]).update(
        valid_until=timezone.now() - timedelta(seconds=1)
    )

    assert memory.blocks(user) == []
    assert memory.search(user, "Zelvorin hotel").total == 0
    assert memory.call_tool(user, {"action": "search", "query": "hotel"})["total"] == 0
    listed = client.get(BASE).json()
    assert listed["notes"] == [] and listed["counts"]["total"] == 0
    assert memory.export(user)["notes"] == []
    assert "Zelvorin" not in client.get("/memory/").content.decode()
    assert "Zelvorin" not in client.get(f"{BASE}/export").content.decode()
    compacted = memory.begin_turn(user, turn.state, reason="compacted")
    assert f'[No longer valid: "memory:{note["id"]}"]' in compacted.text
    # Until the sweep runs, the row is still in the table (no reader sees it).
    assert copies_of("zelvorin")

    with django_capture_on_commit_callbacks(execute=True):
        call_command("memory_optimize", stdout=open("/dev/null", "w"))

    assert copies_of("zelvorin") == []
    assert not MemoryNote.objects.filter(pk=note["id"]).exists()
    update = memory.call_tool(
        user,
        {
            "action": "update",
            "id": note["id"],
            "version": 1,
            "categories": ["Travel"],
            "content": "Stays elsewhere.",
        },
    )
    assert update["error"]["kind"] == "not_found"


@pytest.mark.parametrize(
    "value",
    [
        "tomorrow",
        "2030-13-01",
        "05.12.2030",
        "2030-12-05T18:00:00",  # no offset
        "2020-01-01",  # past
        "2099-01-01",  # more than 10 years ahead
        12,
        True,
        ["2030-12-05"],
    ],
)
def test_a_bad_valid_until_is_invalid_and_says_the_form(memory, person, value):
    answer = memory.call_tool(
        person,
        {
            "action": "create",
            "notes": [{"categories": ["X"], "content": "Y", "valid_until": value}],
        },
    )
    assert answer["error"]["kind"] == "invalid"
    assert "YYYY-MM-DD" in answer["error"]["message"]
    assert memory.notes(person) == []


@override_settings(TIME_ZONE="Europe/Berlin")
def test_an_iso_date_means_through_the_end_of_that_day_in_the_site_time_zone():
    now = datetime(2030, 12, 1, 12, tzinfo=UTC)
    moment = clean_valid_until("2030-12-05", now)
    assert moment == datetime(2030, 12, 5, 23, 59, 59, 999999, tzinfo=ZoneInfo("Europe/Berlin"))
    with_offset = clean_valid_until("2030-12-05T18:00:00+01:00", now)
    assert with_offset == datetime(2030, 12, 5, 17, tzinfo=UTC)
    assert clean_valid_until(None, now) is None


def test_update_keeps_an_omitted_end_and_null_clears_it(memory, person):
    created = memory.call_tool(
        person,
        {
            "action": "create",
            "notes": [
                {"categories": ["Travel"], "content": "In Berlin.", "valid_until": "2030-12-05"}
            ],
        },
    )["notes"][0]
    args = {"action": "update", "id": created["id"], "categories": ["Travel"]}
    kept = memory.call_tool(person, {**args, "version": 1, "content": "In Berlin, Mitte."})
    assert kept["note"]["valid_until"] == created["valid_until"]
    moved = memory.call_tool(
        person, {**args, "version": 2, "content": "In Berlin.", "valid_until": "2030-12-07"}
    )
    assert moved["note"]["valid_until"].startswith("2030-12-07")
    cleared = memory.call_tool(
        person, {**args, "version": 3, "content": "Lives in Berlin.", "valid_until": None}
    )
    assert cleared["note"]["valid_until"] is None
    assert memory.notes(person)[0].valid_until is None


def test_the_tool_schema_and_the_instructions_teach_valid_until(memory):
    schema = memory.tool_definition("json")
    item = schema["properties"]["notes"]["items"]["properties"]
    assert "valid_until" in item and "valid_until" in schema["properties"]
    assert "null" in schema["properties"]["valid_until"]["description"]
    assert "valid_until" in memory.instructions and "до пятницы" in memory.instructions


def test_expired_notes_count_toward_no_limit(memory, person):
    with override_settings(AGENT_MEMORY={"MAX_NOTES": 1}):
        (note,) = memory.create_notes(
            person,
            [
                {
                    "categories": ["Travel"],
                    "content": "At the fair.",
                    "valid_until": timezone.now() + timedelta(seconds=1),
                }
            ],
        )
        time.sleep(max(0.0, (note.valid_until - timezone.now()).total_seconds()) + 0.1)
        (other,) = memory.create_notes(person, [{"categories": ["Home"], "content": "In Riga."}])
    assert memory.notes(person) == [other]


# --- history -----------------------------------------------------------------------------------


def test_history_lists_earlier_versions_newest_first_and_ends_with_the_note(memory, person):
    (note,) = memory.create_notes(
        person, [{"categories": ["Food"], "content": "Likes tea."}], source="person"
    )
    memory.call_tool(
        person,
        {
            "action": "update",
            "id": note.key,
            "version": 1,
            "categories": ["Food"],
            "content": "Likes green tea.",
        },
    )
    memory.update_note(person, note.id, 2, ["Food"], "Likes white tea.", source="person")
    first, second = memory.history(person, note.key)
    assert (first.version, first.content, first.source) == (2, "Likes green tea.", "agent")
    assert (second.version, second.content, second.source) == (1, "Likes tea.", "person")
    memory.delete_note(person, note.id, 3)
    with pytest.raises(NoteNotFound):
        memory.history(person, note.id)


@pytest.mark.django_db
def test_history_over_http_is_the_persons_only(user, other_user):
    memory = LongTermMemory()
    (note,) = memory.create_notes(user, [{"categories": ["Food"], "content": "Likes tea."}])
    memory.update_note(user, note.id, 1, ["Food"], "Likes coffee.", source="person")
    body = client_of(user).get(f"{BASE}/{note.id}/history").json()
    assert [(item["version"], item["content"], item["source"]) for item in body["versions"]] == [
        (1, "Likes tea.", "agent")
    ]
    assert set(body["versions"][0]) == {
        "version",
        "categories",
        "content",
        "pinned",
        "valid_until",
        "source",
        "changed_at",
    }
    foreign = client_of(other_user).get(f"{BASE}/{note.id}/history")
    assert foreign.status_code == 404 and foreign.json()["error"]["kind"] == "not_found"


def history_words(person) -> list[str]:
    return list(MemoryNoteVersion.objects.filter(user=person).values_list("content", flat=True))


@pytest.mark.django_db
@pytest.mark.parametrize("how", ["delete", "erase", "expiry", "merge"])
def test_history_goes_with_its_note_on_every_kind_of_delete(user, how):
    memory = LongTermMemory()
    (note, other) = memory.create_notes(
        user,
        [
            {"categories": ["Pets"], "content": "Has a cat called Quobrin."},
            {"categories": ["Pets"], "content": "Feeds the cat twice."},
        ],
    )
    memory.update_note(user, note.id, 1, ["Pets"], "Has a cat.", source="person")
    assert copies_of("quobrin")
    if how == "delete":
        memory.delete_note(user, note.id, 2)
    elif how == "erase":
        memory.clear(user)
    elif how == "expiry":
        MemoryNote.objects.filter(pk=note.id).update(valid_until=timezone.now())
        assert runner.purge_expired_notes(memory.store) == 1
    else:
        store, at = memory.store, runner.now()
        run = store.claim_optimization_run(
            user.pk, model="default", now=at, lease_until=at + timedelta(minutes=5), force=True
        )
        plan = MergePlan(0, {note.id: 2, other.id: 1}, NewNote(("Pets",), "Has a cat, fed twice."))
        store.apply_merge(user.pk, run.id, plan, now=at)
        # The snapshot keeps version 2 to revert to; version 1 (with the name) is gone.
    assert copies_of("quobrin") == []
    assert not MemoryNoteVersion.objects.filter(note_id=note.id).exists()


@pytest.mark.django_db
def test_the_screen_shows_what_the_assistant_changed_and_undo_brings_it_back(user):
    memory = LongTermMemory()
    (note,) = memory.create_notes(
        user, [{"categories": ["Food"], "content": "Likes tea."}], source="person"
    )
    memory.call_tool(
        user,
        {
            "action": "update",
            "id": note.id,
            "version": 1,
            "categories": ["Food"],
            "content": "Likes coffee.",
        },
    )
    client = client_of(user)
    page = client.get("/memory/").content.decode()
    assert (
        "Changed by the assistant" in page
        and "Written by you, changed by the assistant" in " ".join(page.split())
    )
    assert "Likes tea." in page  # in the short history

    response = client.post(f"/memory/notes/{note.id}/undo", {"version": 2, "to": 1})

    assert response.status_code == 302
    (back,) = memory.notes(user)
    assert (back.content, back.version, back.source, back.created_by) == (
        "Likes tea.",
        3,
        "person",
        "person",
    )
    stale = client.post(f"/memory/notes/{note.id}/undo", {"version": 2, "to": 1}, follow=True)
    assert "changed again meanwhile" in stale.content.decode()
    assert memory.notes(user)[0].version == 3


@pytest.mark.django_db
def test_the_screen_takes_a_date_and_shows_until_in_the_persons_language(user):
    client = client_of(user)
    response = client.post(
        "/memory/", {"categories": "Travel", "content": "In Berlin.", "valid_until": "2030-12-06"}
    )
    assert response.status_code == 302
    (note,) = LongTermMemory().notes(user)
    assert timezone.localdate(note.valid_until).isoformat() == "2030-12-06"
    assert "until Fri 6 Dec" in client.get("/memory/").content.decode()
    russian = client.get("/memory/", HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert "до Пт 6 Дек" in russian
    past = client.post(
        "/memory/", {"categories": "T", "content": "Old.", "valid_until": "2020-01-01"}
    )
    assert past.status_code == 400 and "already passed" in past.content.decode()


# --- provenance --------------------------------------------------------------------------------


def write_by(path: str, person, memory, note=None):
    """Create (``note is None``) or edit ``note`` by ``path``; return the note as saved."""
    text = f"Written by {path}{' again' if note else ''}."
    if path == "tool":
        if note is None:
            answer = memory.call_tool(
                person, {"action": "create", "notes": [{"categories": ["P"], "content": text}]}
            )
            return answer["notes"][0]["id"]
        memory.call_tool(
            person,
            {
                "action": "update",
                "id": note.id,
                "version": note.version,
                "categories": ["P"],
                "content": text,
            },
        )
    elif path == "api":
        client = client_of(person)
        if note is None:
            return client.post(BASE, {"categories": ["P"], "content": text}, format="json").json()[
                "note"
            ]["id"]
        client.patch(
            f"{BASE}/{note.id}",
            {"categories": ["P"], "content": text, "version": note.version},
            format="json",
        )
    elif path == "screen":
        client = client_of(person)
        if note is None:
            client.post("/memory/", {"categories": "P", "content": text})
            return memory.notes(person)[0].id
        client.post(
            f"/memory/notes/{note.id}/edit",
            {"categories": "P", "content": text, "version": note.version},
        )
    elif path == "admin":
        client = staff_client()
        if note is None:
            client.post(
                "/admin/agent_memory/memorynote/add/",
                {"user": person.pk, "categories": "P", "content": text},
            )
            return memory.notes(person)[0].id
        client.post(
            f"/admin/agent_memory/memorynote/{note.id}/change/",
            {"categories": "P", "content": text, "expected_version": note.version},
        )
    elif path == "import":
        document = {
            "format": "agent_memory",
            "version": 1,
            "notes": [
                {
                    "categories": ["P"],
                    "content": text,
                    "source": "admin",
                    "created_at": "2024-05-01T10:00:00+00:00",
                }
            ],
        }
        (created,) = memory.import_notes(person, document).created
        return created.id
    else:  # merge
        (first, second) = memory.create_notes(
            person,
            [{"categories": ["P"], "content": "One."}, {"categories": ["P"], "content": "Two."}],
        )
        store, at = memory.store, runner.now()
        run = store.claim_optimization_run(
            person.pk, model="default", now=at, lease_until=at + timedelta(minutes=5), force=True
        )
        plan = MergePlan(0, {first.id: 1, second.id: 1}, NewNote(("P",), "One. Two."))
        return store.apply_merge(person.pk, run.id, plan, now=at).id
    return note.id


PATHS = {
    "tool": "agent",
    "api": "person",
    "screen": "person",
    "admin": "admin",
    "import": "import",
    "merge": "merge",
}


@pytest.mark.django_db
@pytest.mark.parametrize("first", list(PATHS))
@pytest.mark.parametrize("then", ["tool", "api", "screen", "admin"])
def test_created_by_and_source_are_right_on_every_path(first, then, user):
    memory = LongTermMemory()
    note_id = write_by(first, user, memory)
    (note,) = [item for item in memory.notes(user) if item.id == note_id]
    assert (note.created_by, note.source) == (PATHS[first], PATHS[first])
    assert client_of(user).get(BASE).json()["notes"][0]["created_by"] == PATHS[first]
    if first == "import":
        assert note.created_at == datetime(2024, 5, 1, 10, tzinfo=UTC)

    write_by(then, user, memory, note)

    (edited,) = [item for item in memory.notes(user) if item.id == note_id]
    assert edited.version == 2
    assert (edited.created_by, edited.source) == (PATHS[first], PATHS[then])


def test_an_import_keeps_no_future_date_and_no_claimed_source(memory, person):
    future = (timezone.now() + timedelta(days=3)).isoformat()
    result = memory.import_notes(
        person,
        [{"categories": ["P"], "content": "Later.", "source": "agent", "created_at": future}],
    )
    (note,) = result.created
    assert note.source == note.created_by == "import"
    assert note.created_at <= timezone.now()


# --- signals and caches ------------------------------------------------------------------------


@pytest.mark.django_db
def test_signals_come_after_commit_with_ids_only(
    user, received, django_capture_on_commit_callbacks
):
    memory = LongTermMemory()
    with django_capture_on_commit_callbacks(execute=False) as pending:
        (note,) = memory.create_notes(user, [{"categories": ["Food"], "content": "Likes tea."}])
    assert received == [] and len(pending) == 1
    with django_capture_on_commit_callbacks(execute=True):
        (other,) = memory.create_notes(user, [{"categories": ["Food"], "content": "Likes jam."}])
        memory.update_note(user, other.id, 1, ["Food"], "Likes plum jam.", source="person")
        memory.delete_note(user, note.id, 1)
        memory.clear(user)
    assert received == [
        ("note_saved", {"user_id": user.pk, "note_id": other.id, "version": 1, "source": "agent"}),
        ("note_saved", {"user_id": user.pk, "note_id": other.id, "version": 2, "source": "person"}),
        ("note_deleted", {"user_id": user.pk, "note_ids": [note.id], "reason": "deleted"}),
        ("note_deleted", {"user_id": user.pk, "note_ids": [other.id], "reason": "erased"}),
    ]
    everything = json.dumps([values for _, values in received], default=str)  # a UUID key
    assert "tea" not in everything and "jam" not in everything


@pytest.mark.django_db
def test_expiry_and_merges_send_their_signals(user, received, django_capture_on_commit_callbacks):
    memory = LongTermMemory()
    with django_capture_on_commit_callbacks(execute=True):
        _first, _second, third = memory.create_notes(
            user,
            [
                {"categories": ["P"], "content": "One."},
                {"categories": ["P"], "content": "Two."},
                {"categories": ["P"], "content": "Three."},
            ],
        )
    received.clear()
    with django_capture_on_commit_callbacks(execute=True):
        MemoryNote.objects.filter(pk=third.id).update(valid_until=timezone.now())
        assert runner.purge_expired_notes(memory.store) == 1
    assert received == [
        ("note_deleted", {"user_id": user.pk, "note_ids": [third.id], "reason": "expired"})
    ]


def test_a_deleted_note_leaves_no_text_in_the_process_caches(memory, person):
    from agent_memory import search

    (note,) = memory.create_notes(person, [{"categories": ["Pets"], "content": "Owns a Qelvar."}])
    assert memory.search(person, "Qelvar").total == 1
    assert search._note_stems.cache_info().currsize > 0
    memory.delete_note(person, note.id, 1)
    assert search._note_stems.cache_info().currsize == 0
    assert search.stem.cache_info().currsize == 0


@pytest.mark.django_db
def test_a_receiver_that_fails_never_fails_the_change(
    user, caplog, django_capture_on_commit_callbacks
):
    def broken(sender, **values):
        raise RuntimeError("the host's index is down")

    signals.note_saved.connect(broken)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            answer = LongTermMemory().call_tool(
                user,
                {"action": "create", "notes": [{"categories": ["Food"], "content": "Likes tea."}]},
            )
    finally:
        signals.note_saved.disconnect(broken)
    assert answer["notes"][0]["content"] == "Likes tea."
    assert "A receiver of an agent_memory signal failed" in caplog.text


@pytest.mark.django_db
@override_settings(AGENT_MEMORY={"OPTIMIZER": False})
def test_memory_optimize_deletes_expired_notes_even_with_the_optimizer_off(user):
    memory = LongTermMemory()
    (note,) = memory.create_notes(user, [{"categories": ["Travel"], "content": "At the fair."}])
    MemoryNote.objects.filter(pk=note.id).update(valid_until=timezone.now())
    with pytest.raises(CommandError):
        call_command("memory_optimize", stdout=open("/dev/null", "w"))
    assert not MemoryNote.objects.filter(pk=note.id).exists()


@pytest.mark.django_db
def test_admin_lists_a_note_until_the_minute_its_end_passes(user):
    memory = LongTermMemory()
    gone, kept = memory.create_notes(
        user,
        [
            {"categories": ["Travel"], "content": "At the Quorvath fair."},
            {"categories": ["Travel"], "content": "At the Brellin fair."},
        ],
    )
    now = timezone.now()
    MemoryNote.objects.filter(pk=gone.id).update(valid_until=now - timedelta(minutes=1))
    MemoryNote.objects.filter(pk=kept.id).update(valid_until=now + timedelta(minutes=1))
    listed = staff_client().get("/admin/agent_memory/memorynote/").content.decode()
    assert "Brellin" in listed and "Quorvath" not in listed


@pytest.mark.django_db
def test_admin_sets_valid_until_and_shows_the_earlier_versions(user):
    memory = LongTermMemory()
    (note,) = memory.create_notes(user, [{"categories": ["Food"], "content": "Likes tea."}])
    memory.update_note(user, note.id, 1, ["Food"], "Likes coffee.", source="person")
    client = staff_client()
    page = client.get(f"/admin/agent_memory/memorynote/{note.id}/change/").content.decode()
    assert "Likes tea." in page and "first written by" in page.lower()
    response = client.post(
        f"/admin/agent_memory/memorynote/{note.id}/change/",
        {
            "categories": "Food",
            "content": "Likes coffee.",
            "expected_version": 2,
            "valid_until": "2030-12-05",
        },
    )
    assert response.status_code == 302
    (saved,) = memory.notes(user)
    assert timezone.localdate(saved.valid_until).isoformat() == "2030-12-05"
    assert (saved.source, saved.created_by, saved.version) == ("admin", "agent", 3)
