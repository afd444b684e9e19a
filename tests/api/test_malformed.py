"""No malformed request makes the API fail: every one answers 400/415 with the error body."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_memory.models import MemoryNote
from tests.budgets import examples

BASE = "/api/chat/memory"

pytestmark = pytest.mark.django_db

NOTE = {"categories": ["Preferences"], "content": "Likes tea."}

#: Bodies sent as ``application/json``; none of them is a valid note (or edit).
BODIES: dict[str, bytes] = {
    "invalid JSON": b'{"categories": ["A"], "content": "x"',
    "not JSON at all": b"categories=A&content=x",
    "trailing garbage": b'{"categories": ["A"], "content": "x"} x',
    "single quotes": b"{'categories': ['A'], 'content': 'x'}",
    "NaN": b'{"categories": ["A"], "content": NaN}',
    "Infinity version": b'{"categories": ["A"], "content": "x", "version": Infinity}',
    "invalid UTF-8": b'{"categories": ["A"], "content": "\xff\xfe"}',
    "empty body": b"",
    "whitespace": b"   \n",
    "null": b"null",
    "true": b"true",
    "number": b"42",
    "string": b'"Likes tea."',
    "empty array": b"[]",
    "array of notes": json.dumps([NOTE, NOTE]).encode(),
    "empty object": b"{}",
    "null fields": b'{"categories": null, "content": null, "version": null}',
    "null category": b'{"categories": [null], "content": "x", "version": 1}',
    "numbers for text": b'{"categories": [1, 2], "content": 3, "version": 1}',
    "booleans": b'{"categories": [true], "content": false, "version": true}',
    "object for categories": b'{"categories": {"A": 1}, "content": "x", "version": 1}',
    "string for categories": b'{"categories": "A", "content": "x", "version": 1}',
    "nested lists": b'{"categories": [["A"]], "content": ["x"], "version": [1]}',
    "object for content": b'{"categories": ["A"], "content": {"text": "x"}, "version": 1}',
    "string version": b'{"categories": ["A"], "content": "x", "version": "one"}',
    "float version": b'{"categories": ["A"], "content": "x", "version": 1.5}',
    "huge version": b'{"categories": ["A"], "content": "x", "version": 1' + b"0" * 400 + b"}",
    "huge content": json.dumps({"categories": ["A"], "content": "x" * 1_000_000}).encode(),
    "huge category": json.dumps({"categories": ["A" * 200_000], "content": "x"}).encode(),
    "many categories": json.dumps({"categories": ["A"] * 50_000, "content": "x"}).encode(),
    "deep nesting": b"[" * 100_000 + b"]" * 100_000,
    "deep object": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    "NUL in text": b'{"categories": ["A\\u0000"], "content": "x\\u0000y", "version": 1}',
    "lone surrogate": b'{"categories": ["A"], "content": "\\ud800", "version": 1}',
}

#: Malformed only where a version is expected: POST ignores the field.
PATCH_ONLY = {"string version", "float version", "huge version"}

CONTENT_TYPES = [
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=xyz",
    "application/xml",
    "application/octet-stream",
]


@pytest.fixture
def note(user) -> dict[str, Any]:
    from agent_memory import LongTermMemory

    (saved,) = LongTermMemory().create_notes(user, [{"categories": ["Home"], "content": "Porto."}])
    return saved.as_dict()


def assert_refused(response: Any, status: int = 400, kind: str = "invalid") -> None:
    assert response.status_code == status, response.content[:300]
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["kind"] == kind
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]


def unchanged(note: dict[str, Any]) -> bool:
    row = MemoryNote.objects.get(pk=note["id"])
    return MemoryNote.objects.count() == 1 and (row.version, row.content) == (1, "Porto.")


@pytest.mark.parametrize("name", [name for name in BODIES if name not in PATCH_ONLY])
def test_malformed_post_body_is_invalid(api, note, name):
    assert_refused(api.post(BASE, BODIES[name], content_type="application/json"))
    assert unchanged(note)


@pytest.mark.parametrize("name", list(BODIES))
def test_malformed_patch_body_is_invalid(api, note, name):
    assert_refused(api.patch(f"{BASE}/{note['id']}", BODIES[name], content_type="application/json"))
    assert unchanged(note)


@pytest.mark.parametrize("content_type", CONTENT_TYPES)
def test_a_body_that_is_not_json_is_unsupported_media_type(api, note, content_type):
    body = b"categories=A&content=x"

    assert_refused(api.post(BASE, body, content_type=content_type), 415, "unsupported_media_type")
    assert_refused(
        api.patch(f"{BASE}/{note['id']}", body, content_type=content_type),
        415,
        "unsupported_media_type",
    )
    assert unchanged(note)


def test_a_body_larger_than_django_accepts_is_invalid(api, note, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    body = json.dumps({"categories": ["A"], "content": "x" * 20_000}).encode()

    assert_refused(api.post(BASE, body, content_type="application/json"))
    assert unchanged(note)


@pytest.mark.parametrize(
    "query",
    [
        "?version=",
        "?version=x",
        "?version=-",
        "?version=1e3",
        "?version=" + "9" * 400,
        "?version=[1]",
    ],
)
def test_malformed_version_in_the_query_is_invalid(api, note, query):
    assert_refused(api.delete(f"{BASE}/{note['id']}{query}"))
    assert unchanged(note)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(["categories", "content", "version", "id", "x"]), children, max_size=4
        )
    ),
    max_leaves=12,
)


@pytest.mark.long_properties
@settings(
    max_examples=examples(quick=15, long=60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(body=json_values)
def test_any_json_body_is_answered_without_a_server_error(api, note, body):
    for response in (
        api.post(BASE, body, format="json"),
        api.patch(f"{BASE}/{note['id']}", body, format="json"),
    ):
        assert response.status_code in (200, 201, 400, 409), response.content[:300]
        if response.status_code >= 400:
            assert set(response.json()["error"]) == {"kind", "message"}


@pytest.mark.parametrize("charset", ["rot13", "base64", "zlib", "utf-16", "undefined", "nope"])
def test_a_strange_charset_is_not_a_server_error(api, note, charset):
    response = api.post(
        BASE,
        b'{"categories": ["A"], "content": "x"}',
        content_type=f"application/json; charset={charset}",
    )

    assert response.status_code in (201, 400), response.content[:300]
    if response.status_code == 400:
        assert response.json()["error"]["kind"] == "invalid"
