"""A fuzz of the memory screen's and the API's addresses, methods, forms and bodies.

Hypothesis picks an address of each surface with an odd id (any Unicode, digits of other
scripts, signs, huge numbers, raw percent-encoded bytes, real ids), a method, a form or body of
any shape and content type, and htmx headers. Whatever it sends: no 500 (the test client
re-raises any exception a view lets through), and the API always answers JSON, errors in the
``{"error": {"kind", "message"}}`` shape, never an HTML page.
"""

from __future__ import annotations

import json
from urllib.parse import quote, quote_from_bytes, urlencode

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_memory import LongTermMemory
from agent_memory.models import MemoryNote
from tests.api.test_isolation import merge_for
from tests.budgets import examples
from tests.test_hostile_input import ODD_IDS

pytestmark = [pytest.mark.django_db, pytest.mark.long_properties]

FUZZ = settings(
    max_examples=examples(quick=5, long=20),  # per address (tests marked long_properties)
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
CONTENT_TYPES = [
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=BoUnDaRy",
    "multipart/form-data",
    "application/json",
    "application/json; charset=latin-1",
    "text/plain",
    "application/xml",
    "",
]

text = st.text(st.characters(codec="utf-8"), max_size=40)
odd_text = st.text(max_size=12).filter(lambda value: "/" not in value and "?" not in value)


@st.composite
def ids(draw, real: list[int]) -> str:
    """An id segment of an address, already percent-encoded."""
    kind = draw(st.sampled_from(["real", "odd", "numerals", "numerals", "number", "text", "bytes"]))
    if kind == "real" and real:
        return str(draw(st.sampled_from(real)))
    if kind == "odd":
        return quote(draw(st.sampled_from(ODD_IDS)), safe="")
    if kind == "numerals":
        # Digits of other scripts (int() reads them), superscript and circled digits (isdigit()
        # is true, int() fails), fractions and Roman numerals.
        other_digits = st.characters(categories=["Nd"])
        odd_digits = st.characters(categories=["No"]).filter(str.isdigit)
        numerals = st.characters(categories=["No", "Nl"])
        alphabet = draw(st.sampled_from([odd_digits, other_digits, numerals]))
        return quote(draw(st.text(alphabet, min_size=1, max_size=3)), safe="")
    if kind == "number":
        return str(draw(st.integers(min_value=-(10**30), max_value=10**30)))
    if kind == "bytes":
        return quote_from_bytes(draw(st.binary(min_size=1, max_size=8)), safe="")
    return quote(draw(odd_text), safe="") or "x"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(text, children, max_size=4),
    max_leaves=12,
)


@st.composite
def bodies(draw) -> tuple[bytes, str]:
    """A request body and its content type: a form, JSON of any shape, or raw bytes."""
    content_type = draw(st.sampled_from(CONTENT_TYPES))
    kind = draw(st.sampled_from(["form", "json", "note", "bytes"]))
    if kind == "form":
        fields = draw(
            st.dictionaries(
                st.sampled_from(["categories", "content", "version", "total", "q", "group"]),
                text | st.sampled_from(ODD_IDS),
                max_size=4,
            )
        )
        return urlencode(fields).encode(), content_type
    if kind == "json":
        return json.dumps(draw(json_values)).encode(), content_type
    if kind == "note":
        note = {
            "categories": draw(st.lists(text, max_size=4)),
            "content": draw(text),
            "version": draw(st.integers(min_value=-(2**70), max_value=2**70) | text),
        }
        return json.dumps(note).encode(), content_type
    return draw(st.binary(max_size=60)), content_type


@pytest.fixture
def world(user):
    """A signed-in person with notes and a revertable merge; their ids."""
    LongTermMemory().create_notes(user, [{"categories": ["Food"], "content": "Prefers tea."}])
    run_id = merge_for(user)
    client = Client()
    client.force_login(user)
    note_ids = list(MemoryNote.objects.filter(user=user).values_list("pk", flat=True))
    return client, [*note_ids, run_id]


def send(client: Client, method: str, path: str, body: bytes, content_type: str, headers: dict):
    return client.generic(method, path, body, content_type=content_type, headers=headers)


SCREEN_ADDRESSES = [
    "/memory/",
    "/memory/notes/{note}/edit",
    "/memory/notes/{note}/row",
    "/memory/notes/{note}/delete",
    "/memory/erase",
    "/memory/merges/{run}/revert",
]
API_ADDRESSES = [
    "/api/chat/memory",
    "/api/chat/memory/{note}",
    "/api/chat/memory/merges",
    "/api/chat/memory/merges/{run}/revert",
]


@st.composite
def requests(draw, address: str, real: list[int], headers: st.SearchStrategy):
    """``(method, path, body, content_type, headers)`` for one of the addresses."""
    path = address.format(note=draw(ids(real)), run=draw(ids(real)))
    if draw(st.booleans()):
        path += "?" + urlencode({"q": draw(text), "version": draw(text | st.sampled_from(ODD_IDS))})
    # Mostly what forms and pages send, sometimes anything.
    method = draw(st.sampled_from(["POST", "GET"] if draw(st.integers(0, 3)) else METHODS))
    return method, path, *draw(bodies()), draw(headers)


HTMX_HEADERS = st.sampled_from(
    [{}, {"HX-Request": "true"}, {"HX-Request": "true", "HX-Boosted": "true"}]
)
ACCEPT_HEADERS = st.sampled_from([{}, {"Accept": "application/json"}, {"Accept": "*/*"}])


def fuzz(client: Client, strategy: st.SearchStrategy, check_answer) -> None:
    """Send every request hypothesis draws from ``strategy``; ``check_answer(method, path,
    response)`` judges each answer."""

    @FUZZ
    @given(request=strategy)
    def run(request):
        method, path, body, content_type, headers = request
        response = send(client, method, path, body, content_type, headers)
        assert response.status_code < 500, (method, path, response.status_code)
        check_answer(method, path, response)

    run()


@pytest.mark.parametrize("address", SCREEN_ADDRESSES)
def test_fuzzed_screen_requests_never_fail(world, address):
    client, real = world
    fuzz(client, requests(address, real, HTMX_HEADERS), lambda *answer: None)


def api_answer_in_shape(method: str, path: str, response) -> None:
    status = response.status_code
    if method == "HEAD" or status == 204:
        return
    assert response["Content-Type"] == "application/json", (method, path, status)
    answer = json.loads(response.content)
    if status >= 400:
        assert set(answer) == {"error"}, answer
        assert set(answer["error"]) == {"kind", "message"}, answer
        assert answer["error"]["kind"] and answer["error"]["message"], answer


@pytest.mark.parametrize("address", API_ADDRESSES)
def test_fuzzed_api_requests_answer_json_in_shape(world, address):
    client, real = world
    fuzz(client, requests(address, real, ACCEPT_HEADERS), api_answer_in_shape)
