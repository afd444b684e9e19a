"""System checks for ``settings.AGENT_MEMORY``: one test per id, ``agent_memory.E001``…``E013``.

The warnings ``W001`` and ``W002`` are tested in ``test_checks_queue.py``."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.checks import run_checks
from django.test import override_settings

from agent_memory.checks import check_agent_memory_settings


def ids(value: Any) -> list[str]:
    with override_settings(AGENT_MEMORY=value):
        return [error.id for error in check_agent_memory_settings()]


def test_defaults_and_a_full_valid_configuration_pass():
    assert ids({}) == []
    assert (
        ids(
            {
                "ENABLED": False,
                "MAX_NOTES": 50,
                "MAX_TOTAL_CHARS": 10_000,
                "MAX_BATCH": 3,
                "MAX_BLOCK_CHARS": 4_000,
                "SEARCH_LIMIT": 5,
                "RESOLVE_USER": "django.contrib.auth.get_user",
                "OPTIMIZER": {"interval_hours": 12, "lease_minutes": 5, "sweep_minutes": 0.5},
                "MODELS": {"default": {"BACKEND": "collections.OrderedDict", "OPTIONS": {}}},
                "MERGE_RETENTION_DAYS": 7,
                "MAX_CONCURRENT_IMPORTS": 4,
            }
        )
        == []
    )
    assert ids({"OPTIMIZER": False}) == []


@pytest.mark.parametrize("value", [["MAX_NOTES", 5], "MAX_NOTES=5", 5])
def test_e001_agent_memory_must_be_a_dict(value):
    assert ids(value) == ["agent_memory.E001"]


def test_e002_unknown_keys_are_named():
    with override_settings(AGENT_MEMORY={"MAX_NOTE": 5, "ENABLED": True}):
        (error,) = check_agent_memory_settings()
    assert error.id == "agent_memory.E002"
    assert "MAX_NOTE" in error.msg
    assert "MAX_NOTES" in error.hint


@pytest.mark.parametrize(
    "limits",
    [
        {"MAX_NOTES": -1},
        {"MAX_TOTAL_CHARS": 0},
        {"MAX_BATCH": "5"},
        {"MAX_BLOCK_CHARS": 1.5},
        {"SEARCH_LIMIT": True},
    ],
)
def test_e003_limits_must_be_whole_numbers_of_one_or_more(limits):
    assert ids(limits) == ["agent_memory.E003"]


def test_e003_names_each_bad_limit():
    with override_settings(AGENT_MEMORY={"MAX_NOTES": -1, "SEARCH_LIMIT": 0}):
        errors = check_agent_memory_settings()
    assert [error.id for error in errors] == ["agent_memory.E003"] * 2
    assert "MAX_NOTES" in errors[0].msg and "SEARCH_LIMIT" in errors[1].msg


@pytest.mark.parametrize("enabled", ["yes", 1, None])
def test_e004_enabled_must_be_a_boolean(enabled):
    assert ids({"ENABLED": enabled}) == ["agent_memory.E004"]


@pytest.mark.parametrize(
    "path",
    [
        "no.such.module.resolve",
        "agent_memory.conf.nothing",
        "agent_memory.conf.DEFAULTS",  # importable, but not callable
        "x",
        5,
    ],
)
def test_e005_resolve_user_must_be_an_importable_dotted_path(path):
    assert ids({"RESOLVE_USER": path}) == ["agent_memory.E005"]


@pytest.mark.parametrize(
    "optimizer",
    [True, "daily", {"interval": 24}, {"interval_hours": 0}, {"lease_minutes": "10"}],
)
def test_e006_optimizer_must_be_false_or_a_dict_of_positive_known_numbers(optimizer):
    assert ids({"OPTIMIZER": optimizer}) == ["agent_memory.E006"]


@pytest.mark.parametrize(
    "models",
    [
        ["default"],
        {"default": "openai"},
        {"default": {"OPTIONS": {}}},
        {"default": {"BACKEND": "no.such.Backend"}},
        {"default": {"BACKEND": "agent_memory.conf.OPTIMIZER_DEFAULTS"}},
        {"default": {"BACKEND": "collections.OrderedDict", "OPTIONS": ["model"]}},
    ],
)
def test_e007_models_need_an_importable_backend_and_dict_options(models):
    assert ids({"MODELS": models}) == ["agent_memory.E007"]


@pytest.mark.parametrize("days", [0, -5, "30", 2.5, False])
def test_e008_merge_retention_days_must_be_a_whole_number_of_one_or_more(days):
    assert ids({"MERGE_RETENTION_DAYS": days}) == ["agent_memory.E008"]


def test_checks_are_registered_and_run_by_manage_py_check():
    with override_settings(AGENT_MEMORY={"MAX_NOTES": 0}):
        found = [message.id for message in run_checks()]
    assert "agent_memory.E003" in found


@pytest.mark.parametrize("path", ["no.such.module.chat_url", "agent_memory.conf.DEFAULTS", 5])
def test_e011_origin_url_must_be_an_importable_dotted_path(path):
    assert ids({"ORIGIN_URL": path}) == ["agent_memory.E011"]


def test_origin_url_of_the_example_project_passes():
    assert ids({"ORIGIN_URL": "example_project.chat.origins.chat_url"}) == []


@pytest.mark.parametrize("name", ["", 42, "no/such/base.html"])
def test_base_template_that_cannot_be_loaded_is_e010(name):
    assert ids({"BASE_TEMPLATE": name}) == ["agent_memory.E010"]


@pytest.mark.parametrize(
    "store",
    [
        "agent_memory.stores.orm.DjangoStore",
        {"OPTIONS": {}},
        {"BACKEND": "no.such.Store"},
        {"BACKEND": "agent_memory.conf.OPTIMIZER_DEFAULTS"},
        {"BACKEND": "agent_memory.stores.orm.DjangoStore", "OPTIONS": ["default"]},
        {"BACKEND": "agent_memory.stores.orm.DjangoStore", "using": "default"},
    ],
)
def test_e012_store_needs_an_importable_backend_and_dict_options(store):
    assert ids({"STORE": store}) == ["agent_memory.E012"]


def test_the_in_memory_store_passes():
    assert ids({"STORE": {"BACKEND": "agent_memory.stores.in_memory.InMemoryStore"}}) == []


@pytest.mark.parametrize(
    "embeddings",
    [
        True,
        "agent_memory.embeddings.CombinedEmbeddings",
        {"BACKEND": "no.such.Embeddings"},
        {"BACKEND": "agent_memory.embeddings.CombinedEmbeddings", "OPTIONS": "fast"},
    ],
)
def test_e009_embeddings_need_an_importable_backend_or_false(embeddings):
    assert ids({"EMBEDDINGS": embeddings}) == ["agent_memory.E009"]


def test_embeddings_off_and_the_default_backend_pass():
    assert ids({"EMBEDDINGS": False}) == []
    default = {"BACKEND": "agent_memory.embeddings.CombinedEmbeddings", "OPTIONS": {}}
    assert ids({"EMBEDDINGS": default}) == []


def test_e012_says_what_to_write():
    with override_settings(AGENT_MEMORY={"STORE": {"BACKEND": "agent_memory.stores.orm.Django"}}):
        (error,) = check_agent_memory_settings()
    assert "agent_memory.stores.orm.Django" in error.msg and "cannot be imported" in error.msg
    assert '{"BACKEND": "agent_memory.stores.orm.DjangoStore", "OPTIONS": {}}' in error.msg
    assert "InMemoryStore" in error.hint


@pytest.mark.parametrize("slots", [0, -2, 1.5, "2", True, None])
def test_e013_max_concurrent_imports_must_be_a_whole_number_of_1_or_more(slots):
    with override_settings(AGENT_MEMORY={"MAX_CONCURRENT_IMPORTS": slots}):
        (error,) = check_agent_memory_settings()
    assert error.id == "agent_memory.E013"
    assert f'AGENT_MEMORY["MAX_CONCURRENT_IMPORTS"] = {slots!r}' in error.msg
    assert "imports the site runs at once" in error.hint


def test_any_whole_number_of_import_slots_passes():
    assert ids({"MAX_CONCURRENT_IMPORTS": 1}) == ids({"MAX_CONCURRENT_IMPORTS": 16}) == []


def test_base_template_that_exists_passes():
    assert ids({"BASE_TEMPLATE": "agent_memory/base.html"}) == []
