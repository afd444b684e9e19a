"""HTTP clients of a real server for the fault tests: plain ``http.client``, no Django inside.

:class:`Session` signs a person in through the login form (session cookie and CSRF token, as a
browser does) and sends API requests, recording each answer with :func:`check_answer`'s verdict
on its shape. Run as ``python -m tests.http_clients <json params>`` it is one client process of a
burst: it signs in, says it is ready (a file in ``gate``), waits for ``gate/go``, then writes
notes as fast as it can (deleting every fourth note it saved) and prints one JSON report line.
"""

from __future__ import annotations

import http.client
import json
import re
import sys
import time
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

API = "/api/chat/memory"
#: Kinds the API may answer during a burst of writes under faults, with their status.
EXPECTED_KINDS = {
    "unavailable": 503,
    "limit_reached": 409,
    "duplicate": 409,
    "stale_version": 409,
    "not_found": 404,
}
TIMEOUT = 15


class Session:
    """One signed-in browser-like client of ``host:port``."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.cookies: dict[str, str] = {}

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        """One request on a fresh connection: ``(status, headers, body)``."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=TIMEOUT)
        try:
            sent = {"Host": f"{self.host}:{self.port}", **(headers or {})}
            if self.cookies:
                sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
            connection.request(method, path, body=body, headers=sent)
            response = connection.getresponse()
            data = response.read()
            for value in response.headers.get_all("Set-Cookie") or []:
                for name, morsel in SimpleCookie(value).items():
                    self.cookies[name] = morsel.value
            return response.status, {k.lower(): v for k, v in response.getheaders()}, data
        finally:
            connection.close()

    def login(self, username: str, password: str) -> None:
        status, _, page = self.request("GET", "/accounts/login/")
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert status == 200 and token, f"no login form ({status})"
        form = urlencode(
            {"username": username, "password": password, "csrfmiddlewaretoken": token.group(1)}
        ).encode()
        status, _, _ = self.request(
            "POST",
            "/accounts/login/",
            form,
            {"Content-Type": "application/x-www-form-urlencoded"},
        )
        assert status == 302 and "sessionid" in self.cookies, f"login failed ({status})"

    def api(self, method: str, path: str, payload: Any = None) -> dict[str, Any]:
        """An API request with the CSRF token; the answer as a record (see check_answer)."""
        body = None if payload is None else json.dumps(payload).encode()
        headers = {"X-CSRFToken": self.cookies.get("csrftoken", ""), "Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        try:
            status, answer_headers, data = self.request(method, path, body, headers)
        except (OSError, http.client.HTTPException) as error:
            return {"status": None, "problem": f"no answer: {type(error).__name__}: {error}"}
        return check_answer(method, status, answer_headers, data)


def check_answer(method: str, status: int, headers: dict[str, str], data: bytes) -> dict[str, Any]:
    """The answer as a record ``{status, body, problem}``; ``problem`` names what is wrong with
    its shape (``None`` if it is one of the documented answers)."""
    record: dict[str, Any] = {"status": status, "body": None, "problem": None}
    if status == 204:
        if data:
            record["problem"] = "204 with a body"
        return record
    if not headers.get("content-type", "").startswith("application/json"):
        record["problem"] = f"{status} not JSON: {data[:120]!r}"
        return record
    try:
        body = json.loads(data)
    except ValueError:
        record["problem"] = f"{status} invalid JSON: {data[:120]!r}"
        return record
    record["body"] = body
    if status >= 500 and status != 503:
        record["problem"] = f"server error {status}"
    elif status >= 400:
        error = body.get("error") if isinstance(body, dict) else None
        if not (isinstance(error, dict) and set(error) == {"kind", "message"} and error["message"]):
            record["problem"] = f"{status} without the error shape: {body!r:.120}"
        elif EXPECTED_KINDS.get(error["kind"]) != status:
            record["problem"] = f"{status} with kind {error['kind']!r}"
        elif status == 503 and not headers.get("retry-after"):
            record["problem"] = "503 without Retry-After"
    elif method == "POST" and not (status == 201 and isinstance(body.get("note"), dict)):
        record["problem"] = f"{status} is not a created note: {body!r:.120}"
    elif method == "GET" and not (status == 200 and {"notes", "counts"} <= set(body)):
        record["problem"] = f"{status} is not the list: {body!r:.120}"
    return record


def burst(session: Session, client: int, count: int, categories: list[str]) -> list[dict]:
    """Write ``count`` notes; delete every fourth one saved; read the list now and then."""
    records = []
    for index in range(count):
        content = f"Client {client} remembers fact {index}: likes tea from shop {client}-{index}."
        record = session.api("POST", API, {"categories": categories, "content": content})
        record.update(op="create", content=content)
        records.append(record)
        if record["status"] == 201 and index % 4 == 3:
            note = record["body"]["note"]
            deleted = session.api("DELETE", f"{API}/{note['id']}?version={note['version']}")
            deleted.update(op="delete", content=content)
            records.append(deleted)
        if index % 5 == 0:
            listed = session.api("GET", API)
            listed.update(op="list", body=None)
            records.append(listed)
    return records


def main(params: dict[str, Any]) -> None:
    session = Session("127.0.0.1", params["port"])
    session.login(params["username"], params["password"])
    gate = Path(params["gate"])
    (gate / f"ready-{params['client']}").touch()
    deadline = time.monotonic() + 60
    while not (gate / "go").exists():
        if time.monotonic() > deadline:
            raise SystemExit("no start signal")
        time.sleep(0.005)
    records = burst(session, params["client"], params["count"], params["categories"])
    print(json.dumps(records))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
