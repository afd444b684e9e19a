"""Settings are read on every use: override_settings takes effect without a restart, and a value
of the wrong kind means the default while the system check reports it."""

from __future__ import annotations

import pytest
from django.test import override_settings

from agent_memory import LongTermMemory, get_memory
from agent_memory.conf import DEFAULTS, Limits, memory_settings
from agent_memory.errors import InvalidNote, LimitReached
from agent_memory.stores.in_memory import InMemoryStore
from agent_memory.stores.orm import DjangoStore


def note(content: str) -> dict[str, object]:
    return {"categories": ["General"], "content": content}


def test_defaults_are_the_documented_ones():
    with override_settings(AGENT_MEMORY={}):
        assert memory_settings.limits == Limits(
            max_notes=200,
            max_total_chars=48_000,
            max_batch=5,
            max_block_chars=12_000,
            search_limit=10,
        )
        assert memory_settings.ENABLED is True
        assert memory_settings.RESOLVE_USER is None
        assert memory_settings.MODELS == {}
        assert memory_settings.MERGE_RETENTION_DAYS == 30
        assert memory_settings.OPTIMIZER == DEFAULTS["OPTIMIZER"]


def test_missing_agent_memory_setting_means_defaults(settings):
    del settings.AGENT_MEMORY
    assert memory_settings.MAX_NOTES == 200


def test_unknown_setting_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="Unknown agent_memory setting: MAX_NOTE"):
        _ = memory_settings.MAX_NOTE


@pytest.mark.django_db
def test_lowered_max_notes_refuses_the_next_create_on_an_existing_object(user):
    memory = LongTermMemory(store=DjangoStore())
    memory.create_notes(user, [note("one"), note("two")])
    with override_settings(AGENT_MEMORY={"MAX_NOTES": 2}):
        assert memory.limits.max_notes == 2
        with pytest.raises(LimitReached, match="2 of 2 notes"):
            memory.create_notes(user, [note("three")])
    # Back to the default as soon as the override ends.
    memory.create_notes(user, [note("three")])
    assert len(memory.notes(user)) == 3


def test_every_limit_follows_the_override():
    memory = LongTermMemory(store=InMemoryStore())
    memory.create_notes(1, [note("x" * 10)])
    with override_settings(AGENT_MEMORY={"MAX_TOTAL_CHARS": 12}):
        with pytest.raises(LimitReached, match="10 of 12 characters"):
            memory.create_notes(1, [note("yyy")])
    with override_settings(AGENT_MEMORY={"MAX_BATCH": 1}):
        with pytest.raises(InvalidNote, match="at most 1 notes; got 2"):
            memory.create_notes(1, [note("a"), note("b")])
    memory.create_notes(1, [note("tea one"), note("tea two")])
    with override_settings(AGENT_MEMORY={"SEARCH_LIMIT": 1, "MAX_BLOCK_CHARS": 99}):
        result = memory.search(1, "tea")
        assert (len(result.notes), result.total) == (1, 2)
        assert memory.limits.max_block_chars == 99
    assert len(memory.search(1, "tea").notes) == 2


def test_nested_overrides_apply_and_unwind():
    with override_settings(AGENT_MEMORY={"MAX_NOTES": 7}):
        assert memory_settings.MAX_NOTES == 7
        with override_settings(AGENT_MEMORY={"MAX_NOTES": 3, "MAX_BATCH": 2}):
            assert (memory_settings.MAX_NOTES, memory_settings.MAX_BATCH) == (3, 2)
        assert (memory_settings.MAX_NOTES, memory_settings.MAX_BATCH) == (7, 5)


def test_settings_fixture_changes_take_effect_too(settings):
    settings.AGENT_MEMORY = {"SEARCH_LIMIT": 2}
    assert LongTermMemory(store=InMemoryStore()).limits.search_limit == 2


def test_optimizer_options_merge_over_the_defaults_and_can_be_switched_off():
    memory = LongTermMemory(store=InMemoryStore())
    with override_settings(AGENT_MEMORY={"OPTIMIZER": {"interval_hours": 6}}):
        assert memory_settings.OPTIMIZER == {
            "interval_hours": 6,
            "lease_minutes": 10,
            "sweep_minutes": 15,
            "max_call_chars": 12_000,
        }
        assert memory.optimizer_options == memory_settings.OPTIMIZER
    with override_settings(AGENT_MEMORY={"OPTIMIZER": False}):
        assert memory_settings.OPTIMIZER is False
        assert memory.optimizer_options is None
    assert memory.optimizer_options is not None


@pytest.mark.parametrize("bad", [-1, 0, "5", 2.5, True, None])
def test_a_limit_of_the_wrong_kind_falls_back_to_the_default_instead_of_crashing(bad):
    # The system check agent_memory.E003 reports it; memory keeps working meanwhile.
    with override_settings(AGENT_MEMORY={"MAX_NOTES": bad, "SEARCH_LIMIT": bad}):
        assert memory_settings.MAX_NOTES == 200
        assert memory_settings.limits.search_limit == 10
        memory = LongTermMemory(store=InMemoryStore())
        assert len(memory.create_notes(1, [note("works")])) == 1


@pytest.mark.parametrize("bad", [True, "daily", ["interval_hours"]])
def test_an_optimizer_setting_of_the_wrong_kind_means_the_defaults(bad):
    with override_settings(AGENT_MEMORY={"OPTIMIZER": bad}):
        assert memory_settings.OPTIMIZER == DEFAULTS["OPTIMIZER"]
        assert LongTermMemory(store=InMemoryStore()).optimizer_options == DEFAULTS["OPTIMIZER"]


# --- the site's memory: one setting names its store -----------------------------------------

IN_MEMORY = {"BACKEND": "agent_memory.stores.in_memory.InMemoryStore"}


def test_the_site_s_memory_is_built_once_on_the_default_store():
    assert get_memory() is get_memory()
    assert type(get_memory().store) is DjangoStore


def test_the_store_setting_changes_the_site_s_memory_and_the_override_undoes_it():
    before = get_memory()
    with override_settings(AGENT_MEMORY={"STORE": IN_MEMORY}):
        memory = get_memory()
        assert isinstance(memory.store, InMemoryStore)
        assert get_memory() is memory  # an in-process store keeps its notes between requests
    assert type(get_memory().store) is DjangoStore
    assert get_memory() is not before


def test_store_options_are_the_store_s_arguments(settings):
    settings.AGENT_MEMORY = {
        "STORE": {"BACKEND": "agent_memory.stores.orm.DjangoStore", "OPTIONS": {"using": "other"}}
    }
    assert get_memory().store.using == "other"


@pytest.mark.parametrize(
    "bad", ["agent_memory.stores.in_memory.InMemoryStore", {"BACKEND": "no.such.Store"}]
)
def test_a_store_setting_that_cannot_be_used_means_the_default_store(bad):
    # The system check agent_memory.E012 reports it; memory keeps working meanwhile.
    with override_settings(AGENT_MEMORY={"STORE": bad}):
        assert type(get_memory().store) is DjangoStore


@pytest.mark.parametrize(
    ("key", "bad"),
    [
        ("ENABLED", "no"),
        ("RESOLVE_USER", "no.such.module.resolve"),
        ("OPTIMIZER", {"interval_hours": 0}),
        ("MODELS", {"default": {"BACKEND": "no.such.Backend"}}),
        ("MERGE_RETENTION_DAYS", "30"),
        ("ORIGIN_URL", 5),
        ("EMBEDDINGS", {"BACKEND": "no.such.Embeddings"}),
        ("BASE_TEMPLATE", "no/such/base.html"),
        ("STORE", {"BACKEND": "no.such.Store"}),
    ],
)
def test_every_value_the_check_reports_falls_back_to_the_default(key, bad):
    from agent_memory.checks import check_agent_memory_settings

    with override_settings(AGENT_MEMORY={key: bad}):
        (error,) = check_agent_memory_settings()
        assert getattr(memory_settings, key) == DEFAULTS[key]
    assert error.id == f"agent_memory.E{getattr(type(memory_settings), key).check_id:03d}"
    assert key in error.msg


def test_every_key_has_one_default_and_one_check_id():
    from agent_memory.conf import MemorySettings

    keys = list(MemorySettings.keys())
    assert [key.name for key in keys] == list(DEFAULTS)
    assert all(1 < key.check_id < 100 for key in keys)
