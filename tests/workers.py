"""Worker processes for the race tests: real OS processes writing one person's memory at once.

A test module starts :class:`Racers` once: one process (``python -m tests.workers``) that sets
Django up on the test database (``AGENT_MEMORY_TEST_DB``) and imports the app, then forks the
workers of each race. Forking after the setup spares every worker a fresh interpreter and its
own ``django.setup()``; the forking process never opens a database connection, so each worker
opens its own. Workers lead process groups of their own, say they are ready, wait for the start
file, then write as fast as they can and leave one JSON report: how many writes were saved and
how many were refused, by error kind.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from django.conf import settings

from tests import processes

ROOT = Path(__file__).resolve().parent.parent

#: Seconds the parent waits for the workers to connect, then to finish.
READY_TIMEOUT = 60
FINISH_TIMEOUT = 120


class Racers:
    """The process that forks the race workers: ``with Racers(database) as racers:``, then
    ``racers.race(...)`` or ``with racers.start(...) as running: running.reports()``."""

    def __init__(self, database: str) -> None:
        env = {
            **os.environ,
            # The children run on the settings of the tests that start them.
            "DJANGO_SETTINGS_MODULE": settings.SETTINGS_MODULE,
            "AGENT_MEMORY_TEST_DB": database,
            # numpy's BLAS would start threads at import; a process that forks keeps to one.
            "OPENBLAS_NUM_THREADS": "1",
        }
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        self.process = processes.start(
            [sys.executable, "-m", "tests.workers"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            self._answer()  # "ready": Django is set up
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Racers:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        processes.stop([self.process], grace=5)

    def race(
        self, job: str, workers: int, *, settings: dict[str, Any], params: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """Run ``workers`` processes of ``job`` at once; return each one's report (a dict).

        ``settings`` becomes ``AGENT_MEMORY`` inside the workers (through ``override_settings``);
        ``params`` is passed to the job as is. Every worker gets its index as ``params["worker"]``
        and the folder the workers share as ``params["gate"]``.
        """
        with self.start(job, workers, settings=settings, params=params) as running:
            return running.reports()

    def start(
        self, job: str, workers: int, *, settings: dict[str, Any], params: dict[str, Any]
    ) -> Race:
        """Workers of ``job`` started together, for ``with``: see :meth:`race`."""
        return Race(self, job, workers, settings=settings, params=params)

    def fork(self, request: dict[str, Any]) -> list[int]:
        """Ask for the workers of ``request``; return their process ids."""
        assert self.process.stdin is not None
        # A person's key that JSON has no type for (a UUID) goes as its text.
        self.process.stdin.write(json.dumps(request, default=str) + "\n")
        self.process.stdin.flush()
        return list(self._answer()["pids"])

    def _answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            _, err = self.process.communicate(timeout=10)
            code = self.process.returncode
            raise AssertionError(f"the race workers' parent exited ({code}):\n{err}")
        return dict(json.loads(line))


class Race:
    """Worker processes started together; ``with racers.start(...) as running:
    running.reports()``."""

    def __init__(
        self,
        racers: Racers,
        job: str,
        workers: int,
        *,
        settings: dict[str, Any],
        params: dict[str, Any],
    ) -> None:
        self.racers, self.job, self.workers = racers, job, workers
        self.settings, self.params = settings, params
        self.pids: list[int] = []

    def __enter__(self) -> Race:
        self._gate = tempfile.TemporaryDirectory(prefix="agent-memory-race-")
        self.gate = Path(self._gate.name)
        try:
            self.pids = self.racers.fork(
                {
                    "job": self.job,
                    "workers": self.workers,
                    "gate": str(self.gate),
                    "settings": self.settings,
                    "params": self.params,
                }
            )
            self._wait_until_ready()
            (self.gate / "go").touch()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def reports(self, timeout: float = FINISH_TIMEOUT) -> list[dict[str, Any]]:
        """Wait for every worker (at most ``timeout`` seconds in all) and return their reports."""
        deadline = time.monotonic() + timeout
        reports = []
        for index, pid in enumerate(self.pids):
            report = self.gate / f"report-{index}.json"
            while not report.exists():
                if not _alive(pid) and not report.exists():
                    raise AssertionError(f"worker failed:\n{self._output(index)}")
                if time.monotonic() > deadline:
                    raise AssertionError(f"worker still running after {timeout} s")
                time.sleep(0.01)
            reports.append(json.loads(report.read_text()))
        return reports

    def __exit__(self, *exc_info: object) -> None:
        for pid in self.pids:
            processes.kill_group(pid)  # each worker leads its own process group
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)  # in case it had not set up its group yet
        self._gate.cleanup()

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        while len(list(self.gate.glob("ready-*"))) < len(self.pids):
            for index, pid in enumerate(self.pids):
                if not _alive(pid) and not (self.gate / f"ready-{index}").exists():
                    raise AssertionError(f"worker exited before the start:\n{self._output(index)}")
            if time.monotonic() > deadline:
                raise AssertionError("workers did not get ready in time")
            time.sleep(0.01)

    def _output(self, index: int) -> str:
        output = self.gate / f"output-{index}.txt"
        return output.read_text() if output.exists() else "(no output)"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# --- inside a worker -----------------------------------------------------------------------


def _wait_for_start(gate: Path, worker: int) -> None:
    (gate / f"ready-{worker}").touch()
    deadline = time.monotonic() + READY_TIMEOUT
    while not (gate / "go").exists():
        if time.monotonic() > deadline:
            raise SystemExit("no start signal")
        time.sleep(0.001)


def _attempt(report: dict[str, Any], write: Any) -> None:
    from agent_memory.errors import AgentMemoryError

    try:
        write()
    except AgentMemoryError as error:
        report["refused"][error.kind] = report["refused"].get(error.kind, 0) + 1
        report["messages"].append(error.message)
    except Exception as error:  # anything else (e.g. "database is locked") fails the test
        report["errors"].append(f"{type(error).__name__}: {error}")
    else:
        report["saved"] += 1


def job_create(memory: Any, params: dict[str, Any], report: dict[str, Any]) -> None:
    """Create notes for ``params["user"]``: ``attempts`` batches of ``batch`` notes each.

    With ``same`` every worker sends the very same note; otherwise every note's text is unique.
    With ``other_user`` the first attempt is followed by one note for that person.
    """
    worker = params["worker"]
    text = params.get("text", "note {worker}-{attempt}-{index} " + "x" * params.get("pad", 0))
    for attempt in range(params["attempts"]):
        notes = [
            {
                "categories": params.get("categories", ["Race"]),
                "content": text.format(worker=worker, attempt=attempt, index=index),
            }
            for index in range(params.get("batch", 1))
        ]
        _attempt(report, lambda notes=notes: memory.create_notes(params["user"], notes))
        if params.get("other_user") and attempt == 0:
            other = [{"categories": ["Other"], "content": f"other {worker}-{attempt}"}]
            _attempt(
                report["other"],
                lambda other=other: memory.create_notes(params["other_user"], other),
            )


def job_grow(memory: Any, params: dict[str, Any], report: dict[str, Any]) -> None:
    """Grow this worker's own note (``params["notes"][worker]``) step by step with updates."""
    note_id = params["notes"][params["worker"]]
    for step in range(1, params["attempts"] + 1):
        content = f"grown {params['worker']} " + "y" * (params["step"] * step)

        def write(content: str = content) -> None:
            current = next(n for n in memory.notes(params["user"]) if n.id == note_id)
            memory.update_note(params["user"], note_id, current.version, ["Race"], content)

        _attempt(report, write)


def job_rewrite(memory: Any, params: dict[str, Any], report: dict[str, Any]) -> None:
    """Rewrite this worker's own note (``params["notes"][worker]``) to ``params["text"]``."""
    note_id = params["notes"][params["worker"]]
    _attempt(
        report,
        lambda: memory.update_note(params["user"], note_id, 1, ["Race"], params["text"]),
    )


def job_churn(memory: Any, params: dict[str, Any], report: dict[str, Any]) -> None:
    """Save two notes, then delete the first of them if it was saved; ``attempts`` times.

    ``report["deleted"]`` counts the deletes; their failures go to ``report["errors"]``.
    """
    worker, user = params["worker"], params["user"]
    deletes = _empty_report()
    for attempt in range(params["attempts"]):
        kept: list[Any] = []
        for index in range(2):
            text = f"churn {worker}-{attempt}-{index} " + "z" * (10 * index + attempt)
            note = {"categories": ["Race"], "content": text}
            _attempt(
                report, lambda note=note, kept=kept: kept.extend(memory.create_notes(user, [note]))
            )
        if kept:
            first = kept[0]
            _attempt(deletes, lambda first=first: memory.delete_note(user, first.id, first.version))
    report["deleted"] = deletes["saved"]
    report["errors"].extend(deletes["errors"])
    report["errors"].extend(f"delete refused: {message}" for message in deletes["messages"])


def job_import(memory: Any, params: dict[str, Any], report: dict[str, Any]) -> None:
    """Import ``params["lines"]`` (one note per line, ``{worker}`` filled in) once."""
    text = "\n".join(params["lines"]).format(worker=params["worker"])
    report["created"] = 0

    def write() -> None:
        result = memory.import_notes(params["user"], text, categories=["Race"])
        report["created"] += len(result.created)

    _attempt(report, write)


def job_slot(memory: Any, params: dict[str, Any], report: dict[str, Any]) -> None:
    """Take one of the site's import slots. A worker that gets one holds it until every one of
    ``params["workers"]`` workers has tried (their ``tried-<n>`` files at the gate), or, with
    ``hold``, until it is killed (``held-<n>`` says it holds it)."""
    gate, worker = Path(params["gate"]), params["worker"]

    def hold() -> None:
        with memory.import_slot():
            (gate / f"tried-{worker}").touch()
            if params.get("hold"):
                (gate / f"held-{worker}").touch()
                time.sleep(FINISH_TIMEOUT)
            deadline = time.monotonic() + FINISH_TIMEOUT
            while len(list(gate.glob("tried-*"))) < params["workers"]:
                if time.monotonic() > deadline:
                    raise SystemExit("the other workers never tried")
                time.sleep(0.005)

    try:
        _attempt(report, hold)
    finally:
        (gate / f"tried-{worker}").touch()


JOBS = {
    "create": job_create,
    "slot": job_slot,
    "grow": job_grow,
    "rewrite": job_rewrite,
    "import": job_import,
    "churn": job_churn,
}


def _empty_report() -> dict[str, Any]:
    return {"saved": 0, "refused": {}, "messages": [], "errors": []}


def _work(request: dict[str, Any], worker: int) -> None:
    """One worker, in the forked child: connect, wait for the start, run the job, report."""
    from django.db import connection
    from django.test.utils import override_settings

    from agent_memory import LongTermMemory

    gate = Path(request["gate"])
    params = {**request["params"], "worker": worker, "gate": request["gate"]}
    report = {**_empty_report(), "other": _empty_report()}
    with override_settings(AGENT_MEMORY=request["settings"]):
        memory = LongTermMemory()
        connection.ensure_connection()
        _wait_for_start(gate, worker)
        JOBS[request["job"]](memory, params, report)
    connection.close()
    written = gate / f"report-{worker}.tmp"
    written.write_text(json.dumps(report))
    written.rename(gate / f"report-{worker}.json")  # whole, or not there yet


def _fork(request: dict[str, Any], worker: int) -> int:
    pid = os.fork()
    if pid:
        return pid
    status = 1
    try:
        os.setsid()  # a process group of its own, as every child of the tests leads
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        output = os.open(
            Path(request["gate"]) / f"output-{worker}.txt", os.O_WRONLY | os.O_CREAT, 0o644
        )
        os.dup2(output, 1)
        os.dup2(output, 2)
        os.close(output)
        _work(request, worker)
        status = 0
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


def _reap(signum: int, frame: Any) -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def main() -> None:
    """Set Django up, then fork the workers of each request read from stdin (a JSON line);
    answer each with the workers' process ids."""
    import django

    django.setup()

    from django.db import connections

    import agent_memory.errors  # noqa: F401 (imported once here, not in every worker)
    from agent_memory import LongTermMemory  # noqa: F401

    # Reap each worker as it ends (the test sees its report, or its output if it failed).
    signal.signal(signal.SIGCHLD, _reap)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        connections.close_all()  # nothing to share with the workers
        pids = [_fork(request, worker) for worker in range(request["workers"])]
        print(json.dumps({"pids": pids}), flush=True)


if __name__ == "__main__":
    main()
