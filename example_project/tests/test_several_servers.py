"""Several servers, proven: two gunicorn servers and two django-q2 clusters on the Redis broker,
against one PostgreSQL, as the README's production section lays them out.

Twenty persons chat through both servers at once (each person's two "tabs" on different
servers race on the limit), then each person becomes due and chats on both servers again, so
every person's optimizer run is enqueued more than once and both clusters compete for it. Each
due person must be optimized exactly once: one run, one model call, no lease lost, no duplicate
merge, and the limits exact.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from agent_memory.models import MemoryNote, MergeRun, OptimizerState
from example_project.chat.models import Message
from tests import processes
from tests.processes import running, wait_until

from .cluster_model import MERGED

ROOT = Path(__file__).resolve().parents[2]
PERSONS = 20
MAX_NOTES = 4  # cluster_settings.py
OPTIMIZE = "agent_memory.tasks.optimize_people"

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.servers]


def redis_or_skip():
    redis = pytest.importorskip("redis", reason="the [redis] extra is not installed")
    client = redis.Redis(host="127.0.0.1", port=6379, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.RedisError as error:
        pytest.skip(f"no Redis at 127.0.0.1:6379 ({error}); start redis-server to run this")
    return client


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # the 302 itself is the answer: where the form sends the browser next


class Browser:
    """One logged-in person on one server, posting forms as the browser does (the CSRF token,
    the Referer); each post answers with its redirect, which is not followed."""

    def __init__(self, base: str, username: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), NoRedirects()
        )
        self.opener.open(base + "/accounts/login/", timeout=60).read()  # sets the CSRF cookie
        self.post("/accounts/login/", {"username": username, "password": "pw"})

    def post(self, path: str, data: dict) -> str:
        token = next(cookie.value for cookie in self.jar if cookie.name == "csrftoken")
        form = urllib.parse.urlencode({**data, "csrfmiddlewaretoken": token})
        request = urllib.request.Request(
            self.base + path, data=form.encode(), headers={"Referer": self.base + "/"}
        )
        try:
            self.opener.open(request, timeout=60).read()
        except urllib.error.HTTPError as answer:
            if answer.code != 302:
                raise
            return answer.headers["Location"]
        raise AssertionError(f"POST {path} did not redirect")

    def new_chat(self) -> str:
        found = re.search(r"/chats/(\d+)/$", self.post("/chats/new", {}))
        assert found, "no new chat"
        return found[1]

    def say(self, chat: str, text: str) -> None:
        self.post(f"/chats/{chat}/send", {"text": text})


def test_two_servers_two_clusters_on_redis_optimize_each_due_person_exactly_once(
    tmp_path, django_user_model
):
    if connection.vendor != "postgresql":
        pytest.skip("several servers share one PostgreSQL; set DATABASE_URL to run this")
    redis_client = redis_or_skip()
    queue = f"agent_memory_test_{uuid.uuid4().hex[:12]}"  # this run's own Redis keys
    calls = tmp_path / "model-calls.jsonl"
    calls.touch()

    people = [django_user_model.objects.create_user(f"p{i}", password="pw") for i in range(PERSONS)]
    # Everyone was optimized recently: nobody is due while the notes are being written.
    later = timezone.now() + timedelta(hours=1)
    OptimizerState.objects.bulk_create(
        [OptimizerState(user=person, next_run_at=later) for person in people]
    )

    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OPENAI_", "ANTHROPIC_", "DJANGO_", "AGENT_MEMORY_"))
    }
    env.update(
        DJANGO_SETTINGS_MODULE="example_project.tests.cluster_settings",
        AGENT_MEMORY_TEST_DB=connection.settings_dict["NAME"],
        AGENT_MEMORY_TEST_QUEUE=queue,
        AGENT_MEMORY_TEST_CALLS=str(calls),
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        PYTHONUNBUFFERED="1",
    )
    ports = [free_port(), free_port()]
    logs = {name: tmp_path / f"{name}.log" for name in ("web-a", "web-b", "q-a", "q-b")}

    def launch(name: str, command: list[str], cluster: str = ""):
        output = logs[name].open("w")
        environment = {**env, "AGENT_MEMORY_TEST_CLUSTER": cluster}
        return command, {"cwd": ROOT, "env": environment, "stdout": output, "stderr": output}

    gunicorn = [sys.executable, "-m", "gunicorn", "example_project.wsgi", "-w", "2"]
    qcluster = [sys.executable, "manage.py", "qcluster"]
    try:
        with running(
            [
                launch("web-a", [*gunicorn, "-b", f"127.0.0.1:{ports[0]}"]),
                launch("web-b", [*gunicorn, "-b", f"127.0.0.1:{ports[1]}"]),
                launch("q-a", qcluster, cluster="a"),
                launch("q-b", qcluster, cluster="b"),
            ]
        ):
            for name in ("q-a", "q-b"):
                wait_until(
                    lambda name=name: re.search(r"Q Cluster .* running", logs[name].read_text()),
                    f"the cluster {name}",
                    log=logs[name],
                )
            servers = [f"http://127.0.0.1:{port}" for port in ports]
            for server, name in zip(servers, ("web-a", "web-b"), strict=True):
                wait_until(lambda s=server: answers(s), f"the server {name}", log=logs[name])
            run_chats(servers, people)
            seen: list = []
            wait_until(
                lambda: all_done(people, redis_client, queue, seen),
                "every person's optimizer run and an empty queue",
                timeout=60,
                log=logs["q-a"],
            )
    finally:
        leftovers = list(redis_client.scan_iter(f"django_q:{queue}:*"))
        if leftovers:
            redis_client.delete(*leftovers)

    # Nothing outlives the test: no web server, cluster or worker of this run is left.
    assert processes.with_environment(queue) == []
    check_each_person_optimized_once(people, calls)
    cluster_logs = {name: logs[name].read_text() for name in ("q-a", "q-b")}
    for name, text in cluster_logs.items():
        assert f"Processed '{OPTIMIZE}'" in text, f"the cluster {name} ran no optimizer task"


def answers(base: str) -> bool:
    try:
        with urllib.request.urlopen(base + "/accounts/login/", timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


def run_chats(servers: list[str], people) -> None:
    browsers = [[Browser(server, person.username) for server in servers] for person in people]

    def notes_phase(index: int) -> None:
        tabs = browsers[index]
        chat = tabs[0].new_chat()
        tabs[0].say(chat, "remember that I like green tea")
        tabs[1].say(chat, "remember that I like green tea in the morning")
        # Both tabs at once, on different servers: only two of these four fit the limit.
        wishes = [
            f"remember that my {thing} is {index}" for thing in ("desk", "bus", "door", "fox")
        ]
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda pair: tabs[pair[0] % 2].say(chat, pair[1]), enumerate(wishes)))

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(notes_phase, range(PERSONS)))
    for person in people:
        said = list(
            Message.objects.filter(chat__user=person, role=Message.Role.ASSISTANT)
            .exclude(content="")
            .values_list("content", flat=True)
        )
        saved = [text for text in said if text.startswith("Got it, I'll remember")]
        refused = [text for text in said if text.startswith("I could not save that")]
        assert (len(saved), len(refused)) == (MAX_NOTES, 2), (person.username, said)
        assert MemoryNote.objects.filter(user=person).count() == MAX_NOTES
    assert not MergeRun.objects.exists(), "nobody was due yet"

    # The hour passes: every person is due now, and chats on both servers at once.
    OptimizerState.objects.update(next_run_at=timezone.now() - timedelta(seconds=1))

    def due_phase(index: int) -> None:
        tabs = browsers[index]
        chat = tabs[0].new_chat()
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda tab: tab.say(chat, "what do you know about me?"), tabs))

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(due_phase, range(PERSONS)))


def all_done(people, redis_client, queue: str, seen: list[int]) -> bool:
    """Every person's run finished and saved as a task, the queue empty, and no task result
    arrived since the last look (runs pulled from the queue have finished too)."""
    from django_q.models import Task

    finished = MergeRun.objects.filter(finished_at__isnull=False).values("user").distinct()
    tasks = list(Task.objects.filter(func=OPTIMIZE))
    done = (
        finished.count() == len(people)
        and not MergeRun.objects.filter(finished_at__isnull=True).exists()
        and statuses_of(tasks).count("succeeded") == len(people)
        and redis_client.llen(f"django_q:{queue}:q") == 0
    )
    count = len(tasks)
    if not done or not seen or seen[0][1] != count:
        seen[:] = [(time.monotonic(), count)]
        return False
    return time.monotonic() - seen[0][0] > 1


def statuses_of(tasks) -> list[str]:
    """The run statuses of optimizer tasks (each runs a batch of people)."""
    return [status for task in tasks for status in task.result or []]


def check_each_person_optimized_once(people, calls: Path) -> None:
    from django_q.models import Task

    model_calls = [json.loads(line) for line in calls.read_text().splitlines()]
    assert len(model_calls) == len(people), model_calls
    for person in people:
        runs = list(MergeRun.objects.filter(user=person))
        assert len(runs) == 1, (person.username, [(r.status, r.error) for r in runs])
        run = runs[0]
        assert run.status == "succeeded", (run.status, run.error)
        assert run.finished_at <= run.lease_expires_at, "the run outlived its lease"
        assert len(run.applied) == 1 and not run.rejected, (run.applied, run.rejected)
        notes = list(MemoryNote.objects.filter(user=person).values_list("content", flat=True))
        assert len(notes) == MAX_NOTES - 1 and MERGED in notes, notes
        state = OptimizerState.objects.get(user=person)
        assert state.consecutive_failures == 0 and state.next_run_at > timezone.now()
    assert len({call["pid"] for call in model_calls}) >= 2
    # Every enqueued run finished as a task; the extra ones found the person taken or done.
    results = statuses_of(Task.objects.filter(func=OPTIMIZE))
    assert results.count("succeeded") == len(people), results
    assert set(results) <= {"succeeded", "skipped"}, results
    assert len(results) > len(people), "no person was enqueued twice: nothing raced"
