"""The published OpenAPI schema: valid, warning-free, and describing exactly the endpoint table."""

from __future__ import annotations

import pytest
import yaml
from django.core.management import call_command

BASE = "/api/chat/memory"

#: (path, method) -> (success status, error statuses beyond 401/403/404)
OPERATIONS = {
    (BASE, "get"): ("200", {"400"}),
    (BASE, "post"): ("201", {"400", "409", "415"}),
    (BASE, "delete"): ("200", set()),
    (f"{BASE}/{{id}}", "patch"): ("200", {"400", "409", "415"}),
    (f"{BASE}/{{id}}", "delete"): ("204", {"400", "409"}),
    (f"{BASE}/{{id}}/history", "get"): ("200", {"400"}),
    (f"{BASE}/merges", "get"): ("200", set()),
    (f"{BASE}/merges/{{run_id}}/revert", "post"): ("200", {"400", "409"}),
    (f"{BASE}/export", "get"): ("200", set()),
    (f"{BASE}/settings", "get"): ("200", set()),
    (f"{BASE}/settings", "patch"): ("200", {"400", "415"}),
    (f"{BASE}/import", "post"): ("200", {"400", "409", "415", "429"}),
}


@pytest.fixture(scope="module")
def schema(tmp_path_factory) -> dict:
    path = tmp_path_factory.mktemp("schema") / "schema.yml"
    # --fail-on-warn turns any warning of drf-spectacular into an error (SystemExit).
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    return yaml.safe_load(path.read_text())


def test_schema_has_exactly_the_endpoint_table(schema):
    operations = {
        (path, method)
        for path, item in schema["paths"].items()
        if path.startswith(BASE)
        for method in item
        if method != "parameters"
    }
    assert operations == set(OPERATIONS)


@pytest.mark.parametrize(("path", "method"), list(OPERATIONS))
def test_every_action_documents_its_success_and_error_bodies(schema, path, method):
    success, errors = OPERATIONS[(path, method)]
    responses = schema["paths"][path][method]["responses"]

    # Every action may answer 503 ``unavailable`` when the database fails.
    assert set(responses) == {success, "401", "403", "404", "503", *errors}
    for code in {"401", "403", "404", "503", *errors}:
        body = responses[code]["content"]["application/json"]["schema"]
        assert body == {"$ref": "#/components/schemas/MemoryError"}
    if success != "204":
        assert "$ref" in responses[success]["content"]["application/json"]["schema"]


def test_patch_body_requires_the_version_and_takes_the_whole_note_or_a_pin(schema):
    body = schema["components"]["schemas"]["NoteUpdate"]
    # categories and content go together (checked by the serializer), or only pinned is sent.
    assert body["required"] == ["version"]
    assert {"categories", "content", "pinned", "valid_until", "version"} == set(body["properties"])


def test_settings_body_requires_enabled(schema):
    body = schema["components"]["schemas"]["MemorySettings"]
    assert body["required"] == ["enabled"]
    assert body["properties"]["enabled"]["type"] == "boolean"
    assert schema["components"]["schemas"]["MemoryList"]["properties"]["counts"] == {
        "$ref": "#/components/schemas/MemoryCounts"
    }
