"""The README's "Installing into your project", followed to the letter in a fresh
``django-admin startproject``: the optimizer runs through django-q2 (a real ``qcluster`` on the
ORM broker), and a project without a broker gets ``agent_memory.W001`` from ``manage.py check``.

Only the model is swapped for an offline one that merges the notes it is shown (the README's
points at OpenAI). Subprocesses on the machine's Python, where this checkout is importable.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests import processes

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(os.environ.get("DATABASE_URL")),
        reason="the fresh projects use their own SQLite database; the SQLite run covers this",
    ),
]

ROOT = Path(__file__).resolve().parent.parent

#: An offline model for the fresh project: merges every note it is shown into the longest one.
MERGING_MODEL = """
import json

class MergingModel:
    def complete(self, messages):
        notes = [json.loads(line) for line in messages[-1]["content"].splitlines()
                 if line.startswith("{")]
        longest = max(notes, key=lambda note: len(note["content"]))
        return json.dumps({"groups": [{"ids": [note["id"] for note in notes],
                                       "categories": longest["categories"],
                                       "content": longest["content"]}]})
"""

#: Two duplicate notes, then the turn's end: after_turn() enqueues the person's run.
A_TURN = """
from django.contrib.auth import get_user_model
from agent_memory import get_memory
person = get_user_model().objects.create_user("ann", password="x")
memory = get_memory()
memory.create_notes(person, [{"categories": ["Drinks"], "content": "Drinks tea"},
                             {"categories": ["Drinks"], "content": "Drinks green tea"}])
memory.after_turn(person)
"""

#: Hides an installed package from the project's processes, as if it were not installed.
HIDE_REDIS = """
import sys

class Hide:
    def find_spec(self, name, path=None, target=None):
        if name == "redis" or name.startswith("redis."):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None

sys.meta_path.insert(0, Hide())
"""


def readme_snippets() -> dict[str, str]:
    """The ``# settings.py`` and ``# urls.py`` blocks of "Installing into your project"."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Installing into your project", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    found = {block.splitlines()[0].removeprefix("# "): block for block in blocks}
    assert {"settings.py", "urls.py"} <= set(found), "the README lost its settings or urls block"
    return found


def run(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done


def fresh_project(where: Path, settings_block: str, extra: str = "") -> tuple[Path, dict]:
    """``django-admin startproject mysite`` with the README's lines added, nothing else."""
    where.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "AGENT_MEMORY_", "DATABASE_URL"))
    }
    env["PYTHONPATH"] = os.pathsep.join([str(where), str(ROOT)])
    run([sys.executable, "-m", "django", "startproject", "mysite", str(where)], where, env)
    snippets = readme_snippets()
    with (where / "mysite" / "settings.py").open("a") as settings:
        settings.write("\n" + settings_block + "\n" + extra)
    with (where / "mysite" / "urls.py").open("a") as urls:
        urls.write("\n" + snippets["urls.py"])
    return where, env


def test_a_fresh_project_following_the_readme_runs_the_optimizer_through_django_q2(tmp_path):
    offline_model = textwrap.dedent(
        """
        AGENT_MEMORY["MODELS"] = {"default": {"BACKEND": "merging_model.MergingModel"}}
        """
    )
    project, env = fresh_project(tmp_path / "site", readme_snippets()["settings.py"], offline_model)
    (project / "merging_model.py").write_text(MERGING_MODEL)
    manage = [sys.executable, "manage.py"]

    checked = run([*manage, "check"], project, env)
    assert "agent_memory.W" not in checked.stdout + checked.stderr
    assert "Retry and timeout are misconfigured" not in checked.stdout + checked.stderr
    run([*manage, "migrate", "--noinput"], project, env)
    run([*manage, "shell", "-c", A_TURN], project, env)

    database = project / "db.sqlite3"
    assert queued(database) == 1, "after_turn() queued nothing on the ORM broker"
    log = tmp_path / "qcluster.log"
    cluster = processes.start(
        [*manage, "qcluster"], cwd=project, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT
    )
    try:
        processes.wait_until(lambda: runs(database), "the optimizer's run", timeout=180, log=log)
    finally:
        processes.stop([cluster], grace=20)
    assert runs(database) == [("succeeded", 1)]
    with sqlite3.connect(database) as db:
        notes = db.execute("SELECT content FROM agent_memory_memorynote").fetchall()
    assert notes == [("Drinks green tea",)]


def queued(database: Path) -> int:
    with sqlite3.connect(database) as db:
        return db.execute("SELECT count(*) FROM django_q_ormq").fetchone()[0]


def runs(database: Path) -> list[tuple[str, int]]:
    """The finished optimizer runs: status and how many merge groups each applied."""
    with sqlite3.connect(database) as db:
        found = db.execute(
            "SELECT status, applied FROM agent_memory_mergerun WHERE status != 'running'"
        ).fetchall()
    return [(status, len(json.loads(applied))) for status, applied in found]


def test_a_project_without_a_broker_is_warned_by_manage_py_check(tmp_path):
    settings_block = "\n".join(
        line for line in readme_snippets()["settings.py"].splitlines() if "Q_CLUSTER" not in line
    )
    project, env = fresh_project(tmp_path / "site", settings_block)
    (tmp_path / "hide").mkdir()
    (tmp_path / "hide" / "sitecustomize.py").write_text(HIDE_REDIS)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "hide"), env["PYTHONPATH"]])

    checked = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    said = checked.stdout + checked.stderr
    assert "agent_memory.W001" in said and "redis package is not installed" in said
    assert "agent_memory.W002" not in said
