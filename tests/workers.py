"""Worker processes for the race tests: real OS processes writing one person's memory at once.

The parent test calls :func:`race`; each worker is ``python -m tests.workers <job>`` with its own
Django setup and its own database connection to the test database (``AGENT_MEMORY_TEST_DB``).
Workers connect, say they are ready, wait for the start file, then write as fast as they can and
print one JSON line: how many writes were saved and how many were refused, by error kind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests import processes

ROOT = Path(__file__).resolve().parent.parent

#: Seconds the parent waits for the workers to connect, then to finish.
READY_TIMEOUT = 60
FINISH_TIMEOUT = 120


def race(
    job: str,
    workers: int,
    *,
    database: str,
    settings: dict[str, Any],
    params: dict[str, Any],
) -> list[dict[str, Any]]:
    """Run ``workers`` processes of ``job`` at once; return each one's report (a dict).

    ``settings`` becomes ``AGENT_MEMORY`` inside the workers (through ``override_settings``);
    ``params`` is passed to the job as is. Every worker gets its index as ``params["worker"]``.
    """
    with Race(job, workers, database=database, settings=settings, params=params) as running:
        return running.reports()


class Race:
    """Worker processes started together; ``with Race(...) as running: running.reports()``."""

    def __init__(
        self,
        job: str,
        workers: int,
        *,
        database: str,
        settings: dict[str, Any],
        params: dict[str, Any],
    ) -> None:
        self.job, self.workers = job, workers
        self.database, self.settings, self.params = database, settings, params
        self.processes: list[subprocess.Popen[str]] = []

    def __enter__(self) -> Race:
        self._gate = tempfile.TemporaryDirectory(prefix="agent-memory-race-")
        gate = Path(self._gate.name)
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "AGENT_MEMORY_TEST_DB": self.database,
            "RACE_GATE": str(gate),
            "RACE_SETTINGS": json.dumps(self.settings),
        }
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        try:
            for index in range(self.workers):
                arguments = json.dumps({**self.params, "worker": index})
                self.processes.append(
                    processes.start(
                        [sys.executable, "-m", "tests.workers", self.job, arguments],
                        cwd=ROOT,
                        env=env,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        text=True,
                    )
                )
            _wait_until_ready(gate, self.processes)
            (gate / "go").touch()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def reports(self, timeout: float = FINISH_TIMEOUT) -> list[dict[str, Any]]:
        """Wait for every worker (at most ``timeout`` seconds each) and return their reports."""
        reports = []
        for process in self.processes:
            try:
                out, err = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                raise AssertionError(f"worker still running after {timeout} s") from None
            if process.returncode != 0:
                raise AssertionError(f"worker failed ({process.returncode}):\n{err}")
            reports.append(json.loads(out.strip().splitlines()[-1]))
        return reports

    def __exit__(self, *exc_info: object) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
                process.communicate()
            processes.kill_group(process.pid)  # each worker leads its own process group
        self._gate.cleanup()


def _wait_until_ready(gate: Path, processes: list[subprocess.Popen[str]]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while len(list(gate.glob("ready-*"))) < len(processes):
        for process in processes:
            if process.poll() is not None:
                _, err = process.communicate()
                raise AssertionError(f"worker exited before the start:\n{err}")
        if time.monotonic() > deadline:
            raise AssertionError("workers did not get ready in time")
        time.sleep(0.02)


# --- inside a worker -----------------------------------------------------------------------


def _wait_for_start(worker: int) -> None:
    gate = Path(os.environ["RACE_GATE"])
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
    gate, worker = Path(os.environ["RACE_GATE"]), params["worker"]

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


def main(job: str, raw_params: str) -> None:
    import django

    django.setup()

    from django.db import connection
    from django.test.utils import override_settings

    from agent_memory import LongTermMemory

    params = json.loads(raw_params)
    report = {**_empty_report(), "other": _empty_report()}
    with override_settings(AGENT_MEMORY=json.loads(os.environ["RACE_SETTINGS"])):
        memory = LongTermMemory()
        connection.ensure_connection()
        _wait_for_start(params["worker"])
        JOBS[job](memory, params, report)
    connection.close()
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
