"""Starting and stopping the servers, clusters and workers that tests run as real processes.

Every child leads a process group of its own, so whatever it starts (gunicorn's workers,
qcluster's sentinel and workers) can be stopped together. The test sends its own signal to the
group (it does not rely on a Ctrl+C reaching it: a runner started with SIGINT ignored passes
that on to its children), and :func:`stop_group` kills whatever is left of the group, whatever
happened, so no server or cluster outlives its test.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _default_sigint() -> None:
    # In the child, before exec: Ctrl+C acts as it does in a terminal's foreground job even if
    # the test runner was started with SIGINT ignored (an ignored signal is inherited).
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(command: list[str], **popen: Any) -> subprocess.Popen:
    """Start ``command`` as the leader of a new process group (a new session)."""
    return subprocess.Popen(command, start_new_session=True, preexec_fn=_default_sigint, **popen)


def stop(
    processes: list[subprocess.Popen], signum: int = signal.SIGTERM, grace: float = 20
) -> list[int | None]:
    """Send ``signum`` to each process that still runs (the leader only, so that it stops its
    own children in order), wait up to ``grace`` seconds for all of them together, then SIGKILL
    whatever is left of each one's process group. Returns the exit codes (``None``: killed)."""
    for process in processes:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signum)
    deadline = time.monotonic() + grace
    codes: list[int | None] = []
    for process in processes:
        try:
            codes.append(process.wait(timeout=max(0.1, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            codes.append(None)
    for process in processes:
        kill_group(process.pid)  # leftovers only: a clean stop leaves none
        process.wait()
    return codes


def kill_group(group: int) -> None:
    """SIGKILL every process still in ``group`` (a no-op once the group is gone)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)


@contextlib.contextmanager
def running(
    commands: list[tuple[list[str], dict[str, Any]]], signum: int = signal.SIGTERM
) -> Iterator[list[subprocess.Popen]]:
    """``with running([(command, popen_kwargs), ...]) as processes:`` children in process groups
    of their own, all stopped with ``signum`` and then killed group by group when the block
    ends, however it ends (also when starting one of them fails)."""
    processes: list[subprocess.Popen] = []
    try:
        for command, popen in commands:
            processes.append(start(command, **popen))
        yield processes
    finally:
        stop(processes, signum)


def with_environment(marker: str) -> list[int]:
    """Processes whose environment contains ``marker`` (a test's own temporary path or queue
    name), to prove none outlived the test. Empty where ``/proc`` does not exist."""
    found: list[int] = []
    if not Path("/proc").is_dir():
        return found
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environment = (entry / "environ").read_bytes()
            except OSError:
                continue
            if marker.encode() in environment:
                found.append(int(entry.name))
    return found


def wait_until(condition: Any, what: str, timeout: float = 60, log: Any = None) -> None:
    """Poll ``condition()`` until it is true; fail saying ``what`` did not happen."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            detail = f"; output:\n{log.read_text()[-4000:]}" if log is not None else ""
            raise AssertionError(f"gave up after {timeout:.0f} s waiting for {what}{detail}")
        time.sleep(0.1)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def launch(command: list[str], env: dict[str, str], log: Path | None = None) -> subprocess.Popen:
    """``command`` in the project's root, leading a process group of its own: its output goes
    to ``log`` (stdout and stderr together) or to pipes the caller reads."""
    output: dict[str, Any] = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    if log is not None:
        output = {"stdout": log.open("w"), "stderr": subprocess.STDOUT}
    return start(command, cwd=ROOT, env=env, text=True, **output)


@contextlib.contextmanager
def gunicorn(
    env: dict[str, str],
    log: Path,
    ready: Any,
    *,
    timeout: int = 60,
    options: tuple[str, ...] = (),
) -> Iterator[int]:
    """``with gunicorn(env, log, ready) as port:`` gunicorn with two sync workers on a free
    loopback port, serving Django's WSGI application for ``env``'s ``DJANGO_SETTINGS_MODULE``
    (and so its ``ROOT_URLCONF``). The block starts once ``ready(port)`` is true; the server's
    process group is stopped when it ends, however it ends."""
    port = free_port()
    process = launch(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "django.core.wsgi:get_wsgi_application()",
            f"--bind=127.0.0.1:{port}",
            "--workers=2",
            f"--timeout={timeout}",
            "--graceful-timeout=2",
            *options,
        ],
        env,
        log,
    )

    def up() -> bool:
        assert process.poll() is None, f"the server exited; output:\n{log.read_text()[-4000:]}"
        try:
            return bool(ready(port))
        except OSError:
            return False

    try:
        wait_until(up, "the server", 120, log)
        yield port
    finally:
        stop([process], grace=5)
