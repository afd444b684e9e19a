"""Erase-all leaves no note text in any of the app's tables, optimizer included.

The test fills every place a text can reach (notes, a merged note, snapshots, proposals of a
succeeded run, a rejection reason quoting a name, the raw answer of an unparsable run, the
django-q2 task of a run), erases the person's memory, then reads every column of every model of
the app, and of django-q2's tables, looking for any of the texts.
"""

from __future__ import annotations

import json

import pytest
from django.apps import apps
from django.utils import timezone

from agent_memory import LongTermMemory
from agent_memory.models import MemoryNote
from tests import scripted_model
from tests.scripted_model import groups

pytestmark = pytest.mark.django_db

TEXTS = [
    "Likes Quorvish tea in Zentraburg",
    "Likes Quorvish tea in Zentraburg every morning",
    "Brother Xalvador lives in Pemberlyx",
    "Brother Xalvador is a Pemberlyx architect",
]
WORDS = ["Quorvish", "Zentraburg", "Xalvador", "Pemberlyx"]


def every_value(app_label: str) -> list[str]:
    values = []
    for model in apps.get_app_config(app_label).get_models():
        for row in model._default_manager.all():
            for field in model._meta.concrete_fields:
                value = getattr(row, field.attname)
                if isinstance(value, (dict, list)):
                    value = json.dumps(value, ensure_ascii=False)
                values.append(str(value))
    return values


def leaks(app_label: str) -> list[str]:
    found = []
    for value in every_value(app_label):
        found += [word for word in WORDS if word.casefold() in value.casefold()]
    return found


def test_erase_all_leaves_no_note_text_in_any_table(user, other_user, settings):
    memory = LongTermMemory()
    a, b, c, d = memory.create_notes(
        user, [{"categories": ["Family"], "content": text} for text in TEXTS]
    )
    (kept,) = memory.create_notes(
        other_user, [{"categories": ["Family"], "content": "Owns a red bicycle"}]
    )
    settings.AGENT_MEMORY = {
        "MODELS": {
            "default": scripted_model.configure(
                "privacy",
                groups(
                    {"ids": [a.id, b.id], "categories": ["Family"], "content": TEXTS[1]},
                    # Rejected: loses the name; the reason quotes it.
                    {"ids": [c.id, d.id], "categories": ["Family"], "content": "Brother is nice"},
                ),
                f"Sorry, I cannot: {TEXTS[2]}",  # unparsable, kept raw for ops
            )
        }
    }
    memory.after_turn(user)  # through django-q2 (sync): a Task row is stored
    # A touched note makes the next run send the model its notes again.
    memory.update_note(user, c.id, c.version, ["Family"], TEXTS[2])
    assert memory.optimize(user, force=True).status == "failed"
    assert len(memory.merges(user)) == 1
    assert set(leaks("agent_memory")) == set(WORDS)  # the scan does see them before the erase

    assert memory.clear(user) == 3

    assert leaks("agent_memory") == []
    assert leaks("django_q") == []
    assert memory.merges(user) == []
    assert list(MemoryNote.objects.values_list("id", flat=True)) == [kept.id]
    # The runs stay for ops (statuses, counts, reason codes), without text.
    from agent_memory.models import MergeRun

    assert sorted(MergeRun.objects.values_list("status", flat=True)) == ["failed", "succeeded"]
    assert MergeRun.objects.get(status="succeeded").rejected[0]["code"] == "lost_detail"


def test_a_run_finishing_after_the_erase_stores_no_text(user, settings):
    memory = LongTermMemory()
    a, b, *_ = memory.create_notes(
        user, [{"categories": ["Family"], "content": text} for text in TEXTS]
    )

    def erase_meanwhile(notes):
        memory.clear(user)
        return groups({"ids": [a.id, b.id], "categories": ["Family"], "content": TEXTS[1]})

    settings.AGENT_MEMORY = {
        "MODELS": {"default": scripted_model.configure("privacy2", erase_meanwhile)}
    }
    result = memory.optimize(user)
    assert result.applied == 0
    assert leaks("agent_memory") == []
    assert memory.store.get_optimizer_state(user.pk).last_success_at <= timezone.now()
