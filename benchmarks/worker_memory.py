"""A worker's memory: RSS after ``django.setup()``, after ``warm_up()`` and after 100 and 1,000
searches (the default embeddings, 40 people with 100 notes each, on SQLite).

Run in a process of its own, so that nothing else the benchmarks loaded counts
(``python -m benchmarks.worker_memory FOLDER [SEARCHES PEOPLE]``); it prints one JSON object.
:mod:`benchmarks.scale` runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

SEARCHES = 1_000
PEOPLE = 40
NOTES = 100
QUERIES = (
    "billing service",
    "spanish lessons",
    "peanuts allergy",
    "conference in lisbon",
    "reading list",
    "pull requests after lunch",
)


def rss() -> dict[str, float]:
    """This process's resident memory in MB: the total, and its anonymous and file parts."""
    values = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("VmRSS", "RssAnon", "RssFile"):
            values[name] = round(int(rest.split()[0]) / 1024, 1)
    return values


def measure(folder: str, searches: int = SEARCHES, people: int = PEOPLE) -> dict[str, Any]:
    os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.settings"
    os.environ["AGENT_MEMORY_BENCH_SQLITE"] = os.path.join(folder, "worker.sqlite3")
    os.environ.pop("AGENT_MEMORY_BENCH_POSTGRES", None)
    import django

    django.setup()
    figures: dict[str, Any] = {"setup": rss()}
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from agent_memory import LongTermMemory, embeddings
    from agent_memory.stores.orm import DjangoStore

    from .people import fill, make_person, notes

    embeddings.warm_up()
    figures["warm_up"] = rss()
    memory = LongTermMemory(store=DjangoStore(), optimizer=False)
    persons = []
    for number in range(people):
        person = make_person("default", f"worker-{number}")
        fill(memory, person.pk, notes(NOTES, 150, seed=number))
        memory.search(person, "first search embeds the notes")
        persons.append(person)
    figures["filled"] = rss()
    for number in range(1, searches + 1):
        memory.search(persons[number % people], f"{QUERIES[number % len(QUERIES)]} {number}")
        if number in (100, searches):
            figures[f"after {number} searches"] = rss()
    return figures


def run_in_process(folder: str, searches: int = SEARCHES, people: int = PEOPLE) -> dict[str, Any]:
    """:func:`measure` in a new Python process."""
    root = Path(__file__).resolve().parent.parent
    answer = subprocess.run(
        [sys.executable, "-m", "benchmarks.worker_memory", folder, str(searches), str(people)],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        timeout=1800,
    )
    figures: dict[str, Any] = json.loads(answer.stdout.strip().splitlines()[-1])
    return figures


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1], *(int(value) for value in sys.argv[2:4]))))
