"""The warnings for an optimizer that could never run: ``agent_memory.W001`` (django-q2 has no
usable broker) and ``W002`` (``MODELS`` lacks the ``"default"`` alias)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings

from agent_memory import checks

MODELS = {"default": {"BACKEND": "collections.OrderedDict", "OPTIONS": {}}}


def warnings(monkeypatch: Any, cluster: Any, *, redis: bool = True, **memory: Any) -> list[str]:
    real = checks._importable
    monkeypatch.setattr(
        checks, "_importable", lambda name: redis if name == "redis" else real(name)
    )
    overrides: dict[str, Any] = {"AGENT_MEMORY": {"MODELS": MODELS, **memory}}
    if cluster is not None:
        overrides["Q_CLUSTER"] = cluster
    with override_settings(**overrides):
        if cluster is None:
            from django.conf import settings

            del settings.Q_CLUSTER
        return [warning.id for warning in checks.check_optimizer_queue()]


def test_the_orm_broker_and_a_default_model_pass(monkeypatch):
    assert warnings(monkeypatch, {"name": "x", "orm": "default"}, redis=False) == []


@pytest.mark.parametrize("cluster", [None, {"name": "x", "timeout": 60, "retry": 90}])
def test_no_broker_without_the_redis_package_is_w001(monkeypatch, cluster):
    assert warnings(monkeypatch, cluster, redis=False) == ["agent_memory.W001"]
    assert warnings(monkeypatch, cluster, redis=True) == []  # django-q2's Redis default


def test_a_broker_that_cannot_work_is_w001(monkeypatch):
    assert warnings(monkeypatch, {"orm": "nowhere"}) == ["agent_memory.W001"]
    assert warnings(monkeypatch, {"broker_class": "no.such.Broker"}) == ["agent_memory.W001"]
    assert warnings(monkeypatch, {"mongo": {"host": "x"}}) == ["agent_memory.W001"]


def test_w001_says_what_to_set(monkeypatch):
    monkeypatch.setattr(checks, "_importable", lambda name: False)
    with override_settings(Q_CLUSTER={}, AGENT_MEMORY={"MODELS": MODELS}):
        (warning,) = checks.check_optimizer_queue()
    assert "redis package is not installed" in warning.msg
    assert '"orm": "default"' in warning.hint and "[redis]" in warning.hint


def test_a_missing_default_model_is_w002(monkeypatch):
    cluster = {"orm": "default"}
    found = warnings(monkeypatch, cluster, MODELS={"gpt": MODELS["default"]})
    assert found == ["agent_memory.W002"]


def test_no_warning_while_the_optimizer_or_memory_is_off(monkeypatch):
    assert warnings(monkeypatch, {}, redis=False, MODELS={}, OPTIMIZER=False) == []
    assert warnings(monkeypatch, {}, redis=False, MODELS={}, ENABLED=False) == []
