"""Settings are read plainly on every use: the value written or the key's default, nothing more.
override_settings takes effect without a restart; a value of the wrong kind is the system
check's to report; a store setting that names no store is a clear error, never the default."""

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


@pytest.mark.parametrize("bad", [-1, "5", 2.5, None])
def test_a_value_of_the_wrong_kind_is_read_as_written_and_the_check_reports_it(bad):
    from agent_memory.checks import check_agent_memory_settings

    with override_settings(AGENT_MEMORY={"MAX_NOTES": bad}):
        assert memory_settings.MAX_NOTES == bad
        (error,) = check_agent_memory_settings()
    assert error.id == "agent_memory.E003"
    assert repr(bad) in error.msg


def test_reading_a_dict_setting_gives_a_copy_of_its_default():
    with override_settings(AGENT_MEMORY={}):
        memory_settings.MODELS["default"] = {"BACKEND": "changed.by.a.caller"}
        memory_settings.STORE["BACKEND"] = "changed.by.a.caller"
        assert memory_settings.MODELS == {}
        assert memory_settings.STORE["BACKEND"] == "agent_memory.stores.orm.DjangoStore"


def test_the_package_defaults_cannot_be_changed():
    with pytest.raises(TypeError):
        DEFAULTS["MAX_NOTES"] = 5  # type: ignore[index]
    assert DEFAULTS["MAX_NOTES"] == 200


def test_reading_the_base_template_does_not_load_it(monkeypatch):
    # The system check loads it once (agent_memory.E010); a read gives the name as written.
    import django.template.loader

    def no_loading(*args, **kwargs):
        raise AssertionError("reading BASE_TEMPLATE loaded the template")

    monkeypatch.setattr(django.template.loader, "get_template", no_loading)
    with override_settings(AGENT_MEMORY={"BASE_TEMPLATE": "no/such/base.html"}):
        assert memory_settings.BASE_TEMPLATE == "no/such/base.html"


def test_a_settings_path_is_imported_once_until_the_settings_change(monkeypatch, rf):
    import agent_memory.conf
    from agent_memory.people import resolve_person

    paths: list[str] = []
    real = agent_memory.conf.import_string

    def counting(path: str):
        paths.append(path)
        return real(path)

    monkeypatch.setattr(agent_memory.conf, "import_string", counting)
    resolver = "tests.test_settings.person_from_header"
    with override_settings(AGENT_MEMORY={"RESOLVE_USER": resolver}):
        people = [resolve_person(rf.get("/", HTTP_X_PERSON=str(n))) for n in range(3)]
        assert people == ["0", "1", "2"]
        assert paths == [resolver]
    with override_settings(AGENT_MEMORY={"RESOLVE_USER": resolver, "MAX_NOTES": 3}):
        assert resolve_person(rf.get("/", HTTP_X_PERSON="4")) == "4"
        assert paths == [resolver, resolver]


def test_a_resolver_that_does_not_import_is_a_clear_error(rf):
    from django.core.exceptions import ImproperlyConfigured

    from agent_memory.people import resolve_person

    with override_settings(AGENT_MEMORY={"RESOLVE_USER": "tests.test_settings.no_such_resolver"}):
        with pytest.raises(ImproperlyConfigured, match=r'AGENT_MEMORY\["RESOLVE_USER"\] = '):
            resolve_person(rf.get("/"))


def person_from_header(request):
    """A ``RESOLVE_USER`` for the test above: the person the ``X-Person`` header names."""
    return request.headers.get("X-Person")


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


STORE_MISTAKES = [
    # (what was written, what the error says to do)
    (
        "agent_memory.stores.in_memory.InMemoryStore",
        'write {"BACKEND": "agent_memory.stores.in_memory.InMemoryStore", "OPTIONS": {}}',
    ),
    ({"BACKEND": "agent_memory.stores.orm.DjangoStor"}, "cannot be imported"),
    ({"OPTIONS": {"using": "default"}}, 'has no "BACKEND" dotted path'),
    (
        {"BACKEND": "agent_memory.stores.orm.DjangoStore", "using": "default"},
        'put the backend\'s arguments inside "OPTIONS"',
    ),
    ({"BACKEND": "agent_memory.stores.orm.DjangoStore", "OPTIONS": ["default"]}, "not a dict"),
    ({"BACKEND": "agent_memory.conf.DEFAULTS"}, "is not a class or function"),
]


@pytest.mark.parametrize(("bad", "says"), STORE_MISTAKES)
def test_a_mistyped_store_is_a_clear_error_when_the_memory_is_built(bad, says):
    from django.core.exceptions import ImproperlyConfigured

    with override_settings(AGENT_MEMORY={"STORE": bad}):
        for build in (get_memory, LongTermMemory):
            with pytest.raises(ImproperlyConfigured) as raised:
                build()
            assert 'AGENT_MEMORY["STORE"]' in str(raised.value)
            assert says in str(raised.value)
    assert type(get_memory().store) is DjangoStore


@pytest.mark.parametrize(("bad", "says"), STORE_MISTAKES)
def test_a_mistyped_store_is_the_check_e012_with_the_same_words(bad, says):
    from agent_memory.checks import check_agent_memory_settings

    with override_settings(AGENT_MEMORY={"STORE": bad}):
        (error,) = check_agent_memory_settings()
    assert error.id == "agent_memory.E012"
    assert says in error.msg


def test_long_term_memory_without_a_store_is_on_the_configured_store():
    with override_settings(AGENT_MEMORY={"STORE": IN_MEMORY}):
        assert isinstance(LongTermMemory().store, InMemoryStore)
        assert type(LongTermMemory().store) is type(get_memory().store)
    assert type(LongTermMemory().store) is DjangoStore


def test_every_key_has_one_default_and_one_check_rule():
    from agent_memory.checks import RULES
    from agent_memory.conf import MemorySettings

    keys = [key.name for key in MemorySettings.keys()]
    assert keys == list(DEFAULTS)
    assert set(RULES) == set(keys)
    assert all(1 < rule.check_id < 100 for rule in RULES.values())
