"""Child processes for the optimizer's process tests: ``python -m tests.optimizer_workers <job>``.

Each child sets Django up on the parent's test database (``AGENT_MEMORY_TEST_DB``), with a scripted
model whose answer merges the person's notes, prints JSON lines to talk to the parent, and exits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings

from tests import processes

ROOT = Path(__file__).resolve().parent.parent
MERGED = "Likes green tea, especially in the morning"


def start(job: str, database: str, gate: Path | None = None, **params: Any) -> subprocess.Popen:
    """Start one child running ``job`` with ``params``."""
    env = {
        **os.environ,
        # The children run on the settings of the tests that start them.
        "DJANGO_SETTINGS_MODULE": settings.SETTINGS_MODULE,
        "AGENT_MEMORY_TEST_DB": database,
        "OPTIMIZER_GATE": str(gate or ""),
    }
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    # A process group of its own: the test kills the whole group in its ``finally``.
    return processes.start(
        [sys.executable, "-m", "tests.optimizer_workers", job, json.dumps(params, default=str)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def read_line(process: subprocess.Popen, timeout: float = 60) -> dict[str, Any]:
    """The next JSON line the child prints (fails if it exits first)."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    line = process.stdout.readline()
    if not line:
        _, err = process.communicate(timeout=max(deadline - time.monotonic(), 1))
        raise AssertionError(f"the child exited ({process.returncode}):\n{err}")
    return json.loads(line)


# --- inside a child ---------------------------------------------------------------------------


def say(**message: Any) -> None:
    print(json.dumps(message), flush=True)


def _merge_answer(notes: list[dict[str, Any]]) -> str:
    return json.dumps(
        {
            "groups": [
                {
                    "ids": [note["id"] for note in notes],
                    "categories": ["Drinks"],
                    "content": MERGED,
                }
            ]
        }
    )


def _wait_for_gate() -> None:
    gate = Path(os.environ["OPTIMIZER_GATE"])
    (gate / f"ready-{os.getpid()}").touch()
    deadline = time.monotonic() + 60
    while not (gate / "go").exists():
        if time.monotonic() > deadline:
            raise SystemExit("no start signal")
        time.sleep(0.001)


def job_optimize(params: dict[str, Any]) -> None:
    """Wait at the gate, then run the optimizer for ``params["user"]``; report the result."""
    from django.db import connection
    from django.test import override_settings

    from agent_memory import LongTermMemory

    from . import scripted_model

    gate = Path(os.environ["OPTIMIZER_GATE"])

    def think_until_the_other_runner_is_done(notes: list[dict[str, Any]]) -> str:
        # The winner holds its lease while "thinking" until the other runner has tried to
        # claim; if both won, both wait here until the timeout and the test fails.
        deadline = time.monotonic() + 20
        while not [done for done in gate.glob("done-*") if done.name != f"done-{os.getpid()}"]:
            if time.monotonic() > deadline:
                break
            time.sleep(0.01)
        return _merge_answer(notes)

    connection.ensure_connection()
    models = {"default": scripted_model.configure("race", think_until_the_other_runner_is_done)}
    with override_settings(AGENT_MEMORY={"MODELS": models}):
        memory = LongTermMemory()
        say(pid=_backend_pid())
        _wait_for_gate()
        result = memory.optimize(params["user"], force=True)
    (gate / f"done-{os.getpid()}").touch()
    say(status=result.status, run_id=result.run_id, applied=result.applied)


def job_apply_and_hang(params: dict[str, Any]) -> None:
    """Run the optimizer; in the middle of applying the merge (sources deleted, merged note
    inserted, snapshot about to be written) announce it and sleep until killed."""
    from django.db.models.signals import pre_save
    from django.test import override_settings

    from agent_memory import LongTermMemory
    from agent_memory.models import MergedNoteSnapshot

    from . import scripted_model

    def hang(**kwargs: Any) -> None:
        say(mid_apply=True, pid=_backend_pid())
        time.sleep(600)

    pre_save.connect(hang, sender=MergedNoteSnapshot, weak=False)
    models = {"default": scripted_model.configure("hang", _merge_answer)}
    with override_settings(AGENT_MEMORY={"MODELS": models}):
        LongTermMemory().optimize(params["user"], force=True)
    say(finished=True)


def _backend_pid() -> int | None:
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


JOBS = {"optimize": job_optimize, "apply_and_hang": job_apply_and_hang}


def main(job: str, raw_params: str) -> None:
    import django

    django.setup()
    JOBS[job](json.loads(raw_params))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
