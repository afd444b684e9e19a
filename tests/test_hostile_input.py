"""Hostile input and faults at the HTTP surfaces: strict ids, database failures that
answer in shape, and CSRF whatever the authentication.

Ids are parsed strictly everywhere: ``"²".isdigit()`` is true in Python and ``int("²")``
fails, so a check with ``isdigit`` alone turned ``POST /memory/merges/²/revert`` into a 500.
"""

from __future__ import annotations

import base64
import re
from urllib.parse import quote

import pytest
from django.contrib.auth import get_user_model
from django.db import InterfaceError, OperationalError
from django.test import Client
from rest_framework.authentication import BasicAuthentication, SessionAuthentication
from rest_framework.test import APIClient

from agent_memory import LongTermMemory
from agent_memory.api.views import MemoryAPIView
from agent_memory.errors import InvalidNote, NoteNotFound
from agent_memory.models import MemoryNote, MergeRun
from agent_memory.rules import MAX_ID, parse_id, parse_note_id
from tests.api.test_isolation import merge_for

API = "/api/chat/memory"
SCREEN = "/memory/"

pytestmark = pytest.mark.django_db

#: Ids a person, a script or an attacker may send where a note or run id is expected.
ODD_IDS = [
    "²",  # superscript two: "²".isdigit() is True, int("²") raises
    "¹",
    "³",
    "①",  # circled one
    "٣",  # Arabic-Indic three: int("٣") == 3, still not an id in an address
    "１",  # fullwidth one
    "-1",
    "0",
    "00",
    "1e3",
    "1.0",
    "+1",
    " 1",
    "0x1f",
    "memory:5",
    str(MAX_ID + 1),  # one past the database's largest key
    "9" * 30,
    "NaN",
    "null",
]


def assert_error(response, status: int, kind: str) -> dict:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"kind", "message"}
    assert body["error"]["kind"] == kind and body["error"]["message"]
    return body["error"]


@pytest.fixture
def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def contents(user) -> list[str]:
    return sorted(MemoryNote.objects.filter(user=user).values_list("content", flat=True))


# --- strict ids -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("12", 12),
        (12, 12),
        (str(MAX_ID), MAX_ID),
        (MAX_ID, MAX_ID),
        (MAX_ID + 1, None),
        (10**30, None),
        (True, None),
        (12.0, None),
        (None, None),
        *[(odd, None) for odd in ODD_IDS],
    ],
)
def test_parse_id_takes_ascii_digits_that_fit_the_database_only(value, expected):
    assert parse_id(value) == expected


def test_a_note_id_may_also_be_its_key_but_nothing_looser():
    assert parse_note_id("memory:12") == parse_note_id(" memory:12 ") == 12
    assert parse_note_id("memory:²") is None
    assert parse_note_id("memory:٣") is None
    assert parse_note_id("memory:-1") is None
    assert parse_note_id(f"memory:{MAX_ID + 1}") is None


def test_screen_revert_of_a_superscript_run_id_is_404_not_500(browser, user):
    """The reproduction: ``POST /memory/merges/²/revert`` raised ValueError."""
    run_id = merge_for(user)
    before = contents(user)

    for odd in ("²", "¹", "³", "①"):
        assert browser.post(f"/memory/merges/{odd}/revert").status_code == 404

    assert contents(user) == before
    assert MergeRun.objects.get(pk=run_id).reverted_at is None


def test_api_revert_of_a_superscript_run_id_is_a_json_404(api, user):
    run_id = merge_for(user)
    before = contents(user)

    for odd in ("²", "¹", "³", "①"):
        assert_error(api.post(f"{API}/merges/{odd}/revert"), 404, "not_found")

    assert contents(user) == before
    assert MergeRun.objects.get(pk=run_id).reverted_at is None


def test_a_note_key_is_not_a_run_id_anywhere(browser, api, user):
    run_id = merge_for(user)
    before = contents(user)

    assert browser.post(f"/memory/merges/memory:{run_id}/revert").status_code == 404
    assert_error(api.post(f"{API}/merges/memory:{run_id}/revert"), 404, "not_found")
    with pytest.raises(NoteNotFound):
        LongTermMemory().revert_merge(user, f"memory:{run_id}")

    assert contents(user) == before
    assert MergeRun.objects.get(pk=run_id).reverted_at is None


@pytest.mark.parametrize(
    ("method", "template"),
    [
        ("get", "/memory/notes/{}/edit"),
        ("post", "/memory/notes/{}/edit"),
        ("get", "/memory/notes/{}/row"),
        ("get", "/memory/notes/{}/delete"),
        ("post", "/memory/notes/{}/delete"),
        ("post", "/memory/merges/{}/revert"),
    ],
)
def test_screen_addresses_answer_404_to_odd_ids(browser, user, method, template):
    (note,) = LongTermMemory().create_notes(user, [{"categories": ["A"], "content": "Likes tea."}])
    data = {"categories": "A", "content": "Changed.", "version": "1"}

    for odd in ODD_IDS:
        response = getattr(browser, method)(template.format(odd), data)
        assert response.status_code == 404, odd

    assert contents(user) == ["Likes tea."]
    assert MemoryNote.objects.get(pk=note.id).version == 1


def test_api_addresses_answer_a_json_404_to_odd_ids(api, user):
    LongTermMemory().create_notes(user, [{"categories": ["A"], "content": "Likes tea."}])
    body = {"categories": ["A"], "content": "Changed.", "version": 1}

    for odd in ODD_IDS:
        assert_error(api.patch(f"{API}/{odd}", body, format="json"), 404, "not_found")
        assert_error(api.delete(f"{API}/{odd}?version=1"), 404, "not_found")
        assert_error(api.post(f"{API}/merges/{odd}/revert"), 404, "not_found")
    assert contents(user) == ["Likes tea."]


def test_odd_versions_are_400_on_the_api_and_refused_on_the_screen(api, browser, user):
    (note,) = LongTermMemory().create_notes(user, [{"categories": ["A"], "content": "Likes tea."}])
    for version in ["²", "٣", "-1", "9" * 30, str(MAX_ID + 1), "1e3"]:
        check_odd_version(api, browser, note.id, version)
    assert contents(user) == ["Likes tea."]


def check_odd_version(api, browser, note_id, version):
    response = api.delete(f"{API}/{note_id}", {"version": version})
    assert response.status_code in (400, 409), response.content
    assert response.json()["error"]["kind"] in ("invalid", "stale_version")
    patch = {"categories": ["A"], "content": "Changed.", "version": version}
    assert_error(api.patch(f"{API}/{note_id}", patch, format="json"), 400, "invalid")
    screen = browser.post(f"/memory/notes/{note_id}/delete", {"version": version})
    assert screen.status_code < 500
    edit = browser.post(
        f"/memory/notes/{note_id}/edit", {"categories": "A", "content": "Changed.", **patch}
    )
    assert edit.status_code < 500


def test_python_api_refuses_odd_ids_with_its_own_errors(user):
    memory = LongTermMemory()
    memory.create_notes(user, [{"categories": ["A"], "content": "Likes tea."}])
    for odd in [*ODD_IDS, 0, -1, 10**30, MAX_ID + 1, 1.5, None, True, [1]]:
        check_odd_id(memory, user, odd)
    assert contents(user) == ["Likes tea."]


def check_odd_id(memory, user, odd):
    with pytest.raises(NoteNotFound):
        memory.revert_merge(user, odd)  # a run id is digits only, never a note key
    if odd not in (" 1", "memory:5"):  # a note id may be its key, spaces around allowed
        with pytest.raises(InvalidNote):
            memory.update_note(user, odd, 1, ["A"], "Changed.")
        with pytest.raises(InvalidNote):
            memory.delete_note(user, odd, 1)
        answer = memory.call_tool(user, {"action": "delete", "id": odd, "version": 1})
        assert answer["error"]["kind"] == "invalid"


@pytest.mark.parametrize("version", [0, -1, 10**30, MAX_ID + 1, "²", "٣"])
def test_python_api_refuses_odd_versions(user, version):
    memory = LongTermMemory()
    (note,) = memory.create_notes(user, [{"categories": ["A"], "content": "Likes tea."}])

    with pytest.raises(InvalidNote):
        memory.delete_note(user, note.id, version)
    with pytest.raises(InvalidNote):
        memory.update_note(user, note.id, version, ["A"], "Changed.")
    assert contents(user) == ["Likes tea."]


def test_admin_pages_of_odd_ids_are_not_found(client, user):
    staff = get_user_model().objects.create_superuser("ops", "ops@example.com", "pw-for-tests")
    client.force_login(staff)
    merge_for(user)  # notes 1 to 3, run 1, snapshots 1 and 2: "٣" must not be note 3

    for model in ("memorynote", "mergerun", "mergednotesnapshot"):
        for odd in ["²", "٣", "①", "-1", "9" * 30, str(MAX_ID + 1), "memory:1"]:
            for action in ("change", "delete", "history"):
                response = client.get(f"/admin/agent_memory/{model}/{quote(odd)}/{action}/")
                # Django admin answers a missing object with a redirect to the list and a
                # message (403 where the action is not allowed at all).
                assert response.status_code in (302, 403, 404), (model, odd, action)


# --- database failures answer in shape ----------------------------------------------------------


@pytest.fixture(params=[OperationalError, InterfaceError])
def failing_database(request, monkeypatch):
    """Every read of notes fails the way a dropped connection or a restarting server does."""

    def fail(*args, **kwargs):
        raise request.param("server closed the connection unexpectedly")

    monkeypatch.setattr(LongTermMemory, "notes", fail)
    monkeypatch.setattr(LongTermMemory, "create_notes", fail)
    return request.param


def test_a_database_failure_on_the_api_is_a_json_503_saying_try_again(
    api, user, failing_database, caplog
):
    for response in (
        api.get(API),
        api.post(API, {"categories": ["A"], "content": "Likes tea."}, format="json"),
    ):
        error = assert_error(response, 503, "unavailable")
        assert "Try again" in error["message"]
        assert response["Retry-After"] == "5"
    # The log names the failure, never the data being written.
    assert "OperationalError" in caplog.text or "InterfaceError" in caplog.text
    assert "Likes tea" not in caplog.text


def test_the_503_message_is_translated(api, failing_database):
    response = api.get(API, headers={"Accept-Language": "ru"})

    error = assert_error(response, 503, "unavailable")
    assert "Попробуйте ещё раз" in error["message"]


def test_a_database_failure_on_the_screen_is_a_friendly_503_page(browser, failing_database):
    response = browser.get(SCREEN)

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    page = response.content.decode()
    assert "Memory is unavailable for a moment" in page
    assert "nothing was changed" in page
    assert 'class="am-body"' in page  # the app's own page, in the host's skin
    assert "Traceback" not in page and "OperationalError" not in page
    assert 'href="/memory/"' in page

    added = browser.post(SCREEN, {"categories": "Food", "content": "Likes tea."})
    assert added.status_code == 503


def test_an_htmx_request_gets_the_friendly_page_swapped_in(browser, failing_database):
    response = browser.get(SCREEN, headers={"HX-Request": "true"})

    assert response.status_code == 200  # htmx swaps no 5xx answer
    assert response["HX-Retarget"] == "body"
    assert "Memory is unavailable for a moment" in response.content.decode()


def test_the_page_shows_even_when_the_signed_in_person_cannot_be_read(browser, monkeypatch):
    """The session and user lookups hit the database first; the page must not need them."""

    def fail(request):
        raise OperationalError("the database system is starting up")

    monkeypatch.setattr("django.contrib.auth.get_user", fail)

    response = browser.get(SCREEN)

    assert response.status_code == 503
    assert "Memory is unavailable for a moment" in response.content.decode()


def test_the_api_answers_503_when_the_person_cannot_be_read(api, monkeypatch):
    def fail(request):
        raise OperationalError("terminating connection due to administrator command")

    monkeypatch.setattr("django.contrib.auth.get_user", fail)

    assert_error(api.get(API), 503, "unavailable")
    assert_error(api.delete(API), 503, "unavailable")


# --- CSRF whatever the authentication ---------------------------------------------------------


def unsafe_api_requests(note_id: int, run_id: int) -> list[tuple[str, str, dict | None]]:
    """Every unsafe method of the API, on addresses that would succeed with a token."""
    return [
        ("post", API, {"categories": ["A"], "content": "Likes coffee."}),
        ("patch", f"{API}/{note_id}", {"categories": ["A"], "content": "Changed.", "version": 1}),
        ("delete", f"{API}/{note_id}?version=1", None),
        ("post", f"{API}/merges/{run_id}/revert", None),
        ("delete", API, None),
    ]


def screen_forms(note_id: int, run_id: int, total: int) -> list[tuple[str, dict]]:
    """Every form of the memory screen, filled in as the page fills it."""
    return [
        (SCREEN, {"categories": "A", "content": "Likes coffee."}),
        (f"/memory/notes/{note_id}/edit", {"categories": "A", "content": "Changed.", "version": 1}),
        (f"/memory/notes/{note_id}/delete", {"version": 1}),
        (f"/memory/merges/{run_id}/revert", {}),
        ("/memory/erase", {"total": total}),
    ]


@pytest.fixture
def notes_and_merge(user):
    """A plain note and a revertable merge of two others."""
    (note,) = LongTermMemory().create_notes(user, [{"categories": ["A"], "content": "Likes tea."}])
    run_id = merge_for(user)
    return note.id, run_id


def assert_nothing_changed(user, run_id: int, before: list[str]) -> None:
    assert contents(user) == before
    assert MemoryNote.objects.filter(user=user, version__gt=1).count() == 0
    assert MergeRun.objects.get(pk=run_id).reverted_at is None


#: A host's middleware without ``CsrfViewMiddleware``: the screen checks the token itself.
WITHOUT_CSRF_MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]


@pytest.mark.parametrize("csrf_middleware", [True, False])
def test_every_screen_form_needs_the_csrf_token(user, notes_and_merge, settings, csrf_middleware):
    if not csrf_middleware:
        settings.MIDDLEWARE = WITHOUT_CSRF_MIDDLEWARE
    note_id, run_id = notes_and_merge
    before = contents(user)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)

    for url, data in screen_forms(note_id, run_id, len(before)):
        response = client.post(url, data)
        assert response.status_code == 403, url

    assert_nothing_changed(user, run_id, before)


def test_every_form_the_screen_renders_carries_the_csrf_token(browser, user, notes_and_merge):
    note_id, _ = notes_and_merge
    screen = browser.get(SCREEN)
    # Revert asks first: its form is on the confirmation the screen's "Revert…" link opens.
    confirm = re.search(r'href="(/memory/merges/\d+/revert\?group=\d+)"', screen.content.decode())
    pages = [
        screen,
        browser.get(f"/memory/notes/{note_id}/edit"),
        browser.get(f"/memory/notes/{note_id}/delete"),
        browser.get("/memory/erase"),
        browser.get(confirm.group(1)),
    ]
    actions = set()
    for response in pages:
        assert response.status_code == 200
        for form in re.findall(r"<form\b[^>]*>.*?</form>", response.content.decode(), re.S):
            if re.search(r'method="post"', form, re.I):
                assert 'name="csrfmiddlewaretoken"' in form, form[:200]
                actions.add(re.search(r'action="([^"]*)"', form).group(1))
    # add, edit, delete, erase and revert are all among them
    assert {"/memory/erase", f"/memory/notes/{note_id}/delete"} <= actions
    assert any(action.startswith("/memory/merges/") for action in actions)


def test_every_unsafe_api_method_needs_the_csrf_token_with_session_auth(user, notes_and_merge):
    note_id, run_id = notes_and_merge
    before = contents(user)
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)

    for method, url, body in unsafe_api_requests(note_id, run_id):
        response = getattr(client, method)(url, body, format="json")
        error = assert_error(response, 403, "permission_denied")
        assert "CSRF" in error["message"], (method, url)

    assert_nothing_changed(user, run_id, before)


@pytest.fixture
def host_basic_auth(monkeypatch):
    """A host that enables HTTP Basic next to sessions (the example project does not)."""
    monkeypatch.setattr(
        MemoryAPIView, "authentication_classes", [SessionAuthentication, BasicAuthentication]
    )


def basic(user) -> str:
    return "Basic " + base64.b64encode(f"{user.username}:pw-for-tests".encode()).decode()


def test_a_cross_site_form_post_with_basic_credentials_cannot_revert_a_merge(user, host_basic_auth):
    """The reproduction: a page on another site posts a form to the revert address; the
    browser attaches the Basic credentials it holds, and DRF never CSRF-checks Basic auth."""
    run_id = merge_for(user)
    before = contents(user)
    browser = APIClient(enforce_csrf_checks=True)

    response = browser.post(
        f"{API}/merges/{run_id}/revert",
        "",
        content_type="application/x-www-form-urlencoded",
        headers={"Authorization": basic(user), "Origin": "https://attacker.example"},
        secure=True,
    )

    error = assert_error(response, 403, "permission_denied")
    assert "CSRF" in error["message"]
    assert contents(user) == before
    assert MergeRun.objects.get(pk=run_id).reverted_at is None


def test_every_unsafe_api_method_needs_the_token_with_basic_auth(
    user, notes_and_merge, host_basic_auth
):
    note_id, run_id = notes_and_merge
    before = contents(user)
    client = APIClient(enforce_csrf_checks=True)
    client.credentials(HTTP_AUTHORIZATION=basic(user))

    for method, url, body in unsafe_api_requests(note_id, run_id):
        assert_error(getattr(client, method)(url, body, format="json"), 403, "permission_denied")
    assert client.get(API).status_code == 200  # reading needs no token

    assert_nothing_changed(user, run_id, before)


def test_basic_auth_with_the_csrf_token_can_write(user, host_basic_auth):
    client = APIClient(enforce_csrf_checks=True)
    client.credentials(HTTP_AUTHORIZATION=basic(user))
    client.cookies["csrftoken"] = "a" * 32

    response = client.post(
        API,
        {"categories": ["A"], "content": "Likes tea."},
        format="json",
        headers={"X-CSRFToken": "a" * 32},
    )

    assert response.status_code == 201
    assert contents(user) == ["Likes tea."]


def test_the_example_project_enables_no_authentication_browsers_send_by_themselves(settings):
    classes = settings.REST_FRAMEWORK["DEFAULT_AUTHENTICATION_CLASSES"]
    assert classes == ["rest_framework.authentication.SessionAuthentication"]


def test_the_example_project_checks_kept_connections_before_reuse():
    from example_project import settings as example

    database = example.DATABASES["default"]
    assert database["CONN_MAX_AGE"] > 0
    assert database["CONN_HEALTH_CHECKS"] is True


@pytest.mark.parametrize(
    "path", ["memory/%2F", "memory/1/2", "memory/merges/1/revert/x", "memory/export/more"]
)
@pytest.mark.parametrize("method", ["get", "post", "delete"])
def test_an_unknown_address_under_the_api_is_a_json_404_not_an_html_page(api, path, method):
    response = getattr(api, method)(f"/api/chat/{path}")
    assert_error(response, 404, "not_found")
