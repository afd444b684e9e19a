"""The scripted model of ``test_several_servers.py`` beside it: no network, the same in every
process.

In the chat it is the example's demo agent ("remember that …"). As the optimizer's model it
proposes merging the person's notes about green tea, takes a moment as a real model does (so
other runs for the person arrive while this one holds the lease), and appends one line per call
to the file ``calls``: which cluster asked (``AGENT_MEMORY_TEST_CLUSTER``), for which notes.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from example_project.chat.demo_agent import DemoAgent
from tests.scripted_model import notes_in

MERGED = "I like green tea in the morning"


class ClusterModel(DemoAgent):
    def __init__(self, calls: str = os.devnull, **options: Any) -> None:
        super().__init__(**options)
        self.calls = calls

    def complete(self, messages: list[dict[str, Any]]) -> str:
        notes = notes_in(messages)
        line = {
            "cluster": os.environ.get("AGENT_MEMORY_TEST_CLUSTER", ""),
            "pid": os.getpid(),
            "notes": sorted(note["id"] for note in notes),
        }
        with open(self.calls, "a") as calls:  # one short append per call: lines never interleave
            calls.write(json.dumps(line) + "\n")
        time.sleep(0.5)
        tea = [note for note in notes if "green tea" in note["content"]]
        groups = (
            [
                {
                    "ids": [note["id"] for note in tea],
                    "categories": tea[0]["categories"],
                    "content": MERGED,
                }
            ]
            if len(tea) > 1
            else []
        )
        return json.dumps({"groups": groups})
