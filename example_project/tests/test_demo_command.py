"""The README's quick start: ``python manage.py demo`` migrates a fresh SQLite file, prints a
demo login, serves the site with the django-q2 cluster beside it, and Ctrl+C stops both."""

from __future__ import annotations

import html
import http.cookiejar
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests import processes

ROOT = Path(__file__).resolve().parents[2]

# The demo runs on a SQLite file of its own whatever the suite's database: once per CI is enough.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(os.environ.get("DATABASE_URL")),
        reason="the demo runs on SQLite; the SQLite run covers it",
    ),
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def clean_environment(tmp_path: Path) -> dict[str, str]:
    """The environment of a person who just cloned the project: no test settings, no model."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OPENAI_", "ANTHROPIC_", "DJANGO_", "AGENT_MEMORY_", "DATABASE_URL"))
    }
    # Only the database file moves, so the test never touches a real example.sqlite3.
    environment["DATABASE_URL"] = f"sqlite:///{tmp_path / 'example.sqlite3'}"
    environment["PYTHONUNBUFFERED"] = "1"
    return environment


def wait_for(predicate, what: str, log: Path, limit: float = 90) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.25)
    pytest.fail(f"gave up waiting for {what}; output:\n{log.read_text()}")


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


@dataclass
class DemoRun:
    """What one run of the README's demo showed (see :func:`demo_run`)."""

    folder: Path
    setup: subprocess.CompletedProcess
    base: str = ""
    log: str = ""
    home_status: int = 0
    home: str = ""
    chat_url: str = ""
    answer: str = ""
    memory_page: str = ""
    exit_code: int | None = None
    pids: list[int] = field(default_factory=list)
    #: The runner's SIGINT handling while the demo ran.
    runner_sigint: Any = None


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory) -> DemoRun:
    """The README's quick start run once, by a runner that ignores SIGINT the way ``nohup`` or
    a script's background job leaves it (every child inherits that): ``demo --no-serve``, then
    ``demo`` serving, a login and a chat turn through it, then Ctrl+C to its process group. The
    tests below check what this one run showed. The serving demo starts in a process group of
    its own with Ctrl+C's default action given back, so a runner that handles SIGINT normally
    would see the same run: the demo's tests share this one."""
    folder = tmp_path_factory.mktemp("demo")
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return run_the_demo(folder)
    finally:
        signal.signal(signal.SIGINT, previous)


def run_the_demo(folder: Path) -> DemoRun:
    environment = clean_environment(folder)
    # --no-serve: migrate a fresh database and create the login, then exit.
    setup = subprocess.run(
        [sys.executable, "manage.py", "demo", "--no-serve"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    run = DemoRun(folder=folder, setup=setup, runner_sigint=signal.getsignal(signal.SIGINT))
    if setup.returncode != 0:
        return run

    # The README's command: the same again, now serving.
    port = free_port()
    log = folder / "demo.log"
    base = run.base = f"http://127.0.0.1:{port}"
    with log.open("w") as output:
        # Its own process group with Ctrl+C acting, like a terminal's foreground job, even when
        # the runner ignores SIGINT.
        process = processes.start(
            [sys.executable, "manage.py", "demo", "--port", str(port)],
            cwd=ROOT,
            env=environment,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for(lambda: "Started:" in log.read_text(), "the children to start", log)
        wait_for(lambda: answers(f"{base}/accounts/login/"), "the login page", log)
        wait_for(lambda: re.search(r"Q Cluster .* running", log.read_text()), "the cluster", log)
        run.log = log.read_text()
        run.pids = [int(pid) for pid in re.findall(r"\(pid (\d+)\)", run.log)]
        login = re.search(r"username '([^']+)', password '([^']+)'", run.log)
        assert login, run.log

        # Log in with the printed login, as a person would.
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        page = opener.open(f"{base}/accounts/login/", timeout=10).read().decode()
        token = html.unescape(re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1])
        form = urllib.parse.urlencode(
            {"username": login[1], "password": login[2], "csrfmiddlewaretoken": token}
        ).encode()
        request = urllib.request.Request(
            f"{base}/accounts/login/", data=form, headers={"Referer": f"{base}/accounts/login/"}
        )
        home = opener.open(request, timeout=10)
        run.home_status, run.home = home.status, home.read().decode()

        # A chat turn: the note is saved, and after_turn's optimizer task reaches the cluster.
        chat = post(opener, base, "/chats/new", {}, token_from=f"{base}/")
        run.chat_url = chat.url
        answer = post(
            opener,
            base,
            chat.url.removeprefix(base) + "send",
            {"text": "remember that I prefer tea"},
            token_from=chat.url,
        )
        run.answer = answer.read().decode()
        run.memory_page = opener.open(f"{base}/memory/", timeout=10).read().decode()
        wait_for(
            lambda: "Processed 'agent_memory.tasks.optimize_people'" in log.read_text(),
            "the cluster to run the optimizer",
            log,
        )

        # Ctrl+C: SIGINT to the whole foreground process group.
        os.killpg(process.pid, signal.SIGINT)
        run.exit_code = process.wait(timeout=60)
    finally:
        # Whatever happened: stop the command, then kill what is left of its process group and
        # of its children's (each child leads a group of its own).
        processes.stop([process])
        for pid in run.pids:
            processes.kill_group(pid)
    run.log = log.read_text()
    return run


def test_demo_sets_up_serves_with_the_cluster_and_ctrl_c_stops_both(demo_run):
    setup = demo_run.setup
    assert setup.returncode == 0, setup.stderr
    assert "Created the demo login: username 'demo', password 'demo'" in setup.stdout
    assert "http://127.0.0.1:8000/" in setup.stdout
    assert "demo agent" in setup.stdout
    assert (demo_run.folder / "example.sqlite3").exists()

    text = demo_run.log
    assert "Reusing the demo login" in text
    assert re.search(r"username '([^']+)', password '([^']+)'", text), text
    assert f"Open {demo_run.base}/ and log in" in text
    assert len(demo_run.pids) == 2

    assert demo_run.home_status == 200
    body = demo_run.home
    assert "Demo agent" in body and "not a language model" in body
    assert "New chat" in body
    assert re.search(r"/chats/\d+/$", demo_run.chat_url)
    assert "Got it, I&#x27;ll remember: “Prefers tea”." in demo_run.answer
    assert "Prefers tea" in demo_run.memory_page
    assert "Processed 'agent_memory.tasks.optimize_people'" in text

    # Ctrl+C stopped the command cleanly, and with it the web server and the cluster.
    assert demo_run.exit_code == 0
    for pid in demo_run.pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    # Nothing is left running: no web server, no cluster, no cluster worker.
    assert processes.with_environment(str(demo_run.folder)) == []
    assert not answers(f"{demo_run.base}/accounts/login/")


def test_the_demo_test_passes_when_the_runner_ignores_sigint(demo_run):
    """A runner started with SIGINT ignored (``nohup``, a background job of a script) passes
    that on to every child. The demo must still stop on Ctrl+C and leave nothing running: the
    run above was made by such a runner."""
    assert demo_run.runner_sigint == signal.SIG_IGN
    assert demo_run.exit_code == 0, demo_run.log[-4000:]
    assert processes.with_environment(str(demo_run.folder)) == []


def post(opener, base: str, path: str, data: dict, *, token_from: str):
    """A form POST the way the browser sends it: CSRF token from the page, Referer set."""
    page = opener.open(token_from, timeout=10).read().decode()
    token = html.unescape(re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1])
    form = urllib.parse.urlencode({**data, "csrfmiddlewaretoken": token}).encode()
    request = urllib.request.Request(base + path, data=form, headers={"Referer": token_from})
    return opener.open(request, timeout=30)


@pytest.mark.django_db
def test_the_demo_login_is_an_ordinary_person(capsys):
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    # An earlier version made it a superuser: running the command again takes that back.
    get_user_model().objects.create_superuser("demo", "demo@example.com", "old")
    call_command("demo", "--no-serve")
    user = get_user_model().objects.get(username="demo")
    assert not user.is_superuser and not user.is_staff
    assert user.check_password("demo")
    assert "createsuperuser" in capsys.readouterr().out
