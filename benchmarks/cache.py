"""cache: characters a provider's prompt cache must recompute over a scripted 60-turn chat.

A prompt cache reuses the longest byte-identical prefix of the previous request; everything
after the first changed character is computed again. The same chat (60 turns, 12 memory changes
made through ``call_tool``, 2 compactions) is replayed as three prompt sequences:

- **ours**: memory block once in the first question; later turns add nothing; a turn after a
  compaction adds only the difference (``begin_turn(..., reason="compacted")``);
- **system prompt**: the common alternative, the current memory rendered into the system prompt
  on every turn;
- **no memory**: the same conversation with no memory at all, the baseline both share.

What a design *re-sends* is what it makes the cache recompute beyond the baseline, over turns
2–60 (turn 1 sends memory once in every design). The floor is the characters of the changed
notes themselves: no design can tell the model about a change in less.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from .environment import Environment
from .people import note_categories, note_text
from .report import Row

TARGET = 0.05
TURNS = 60
#: Turns whose answer changes memory, and how.
CHANGES = {
    3: "create",
    6: "update",
    9: "create",
    13: "delete",
    17: "update",
    21: "create",
    27: "update",
    31: "create",
    36: "delete",
    42: "update",
    50: "create",
    57: "update",
}
#: Turns that start on a compacted history: head (first exchange) + summary + tail.
COMPACTIONS = (24, 46)
TAIL_TURNS = 2
START_NOTES = 50


@dataclass
class Message:
    role: str
    content: str
    turn: int
    question: bool = False


@dataclass
class Replay:
    """The chat so far and, per design, the memory text each question carries."""

    history: list[Message] = field(default_factory=list)
    ours_text: dict[int, str] = field(default_factory=dict)


def serialise(system: str, messages: list[Message], question_prefix: dict[int, str]) -> str:
    """One request as the provider sees it: system prompt, then every message, in order."""
    parts = [f"<|system|>\n{system}\n<|end|>\n"]
    for message in messages:
        content = message.content
        if message.question and question_prefix.get(message.turn):
            content = f"{question_prefix[message.turn]}\n\n{content}"
        parts.append(f"<|{message.role}|>\n{content}\n<|end|>\n")
    return "".join(parts)


def recomputed(previous: str | None, prompt: str) -> int:
    """Characters of ``prompt`` after its longest common prefix with ``previous``."""
    if previous is None:
        return len(prompt)
    limit = min(len(previous), len(prompt))
    same = 0
    while same < limit and previous[same] == prompt[same]:
        same += 1
    return len(prompt) - same


def _sentence(rng: random.Random, low: int, high: int) -> str:
    words = (
        "the deploy pipeline needs a second review step before Friday and the staging database "
        "should be refreshed from last night's backup so the report numbers match what finance "
        "expects while the team keeps the old endpoint alive for two more weeks"
    ).split()
    length = rng.randint(low, high)
    out: list[str] = []
    while sum(len(word) + 1 for word in out) < length:
        out.append(rng.choice(words))
    return (" ".join(out)[:length].rstrip() + ".").capitalize()


def run(env: Environment, *, smoke: bool = False) -> list[Row]:
    from agent_memory import LongTermMemory
    from agent_memory.stores.in_memory import InMemoryStore

    rng = random.Random(2026)
    memory = LongTermMemory(store=InMemoryStore(), optimizer=False)
    person = 1
    start = [
        {"categories": note_categories(rng), "content": note_text(i, rng.randint(80, 220), rng)}
        for i in range(START_NOTES)
    ]
    for first in range(0, len(start), memory.limits.max_batch):
        memory.create_notes(person, start[first : first + memory.limits.max_batch])

    base_system = memory.instructions + "\n\nTools:\n" + json.dumps(memory.tools([], "openai"))
    designs = ("ours", "system", "none")
    previous: dict[str, str | None] = dict.fromkeys(designs)
    totals = dict.fromkeys(designs, 0)
    per_turn: dict[str, list[int]] = {design: [] for design in designs}
    replay = Replay()
    state: dict[str, Any] | None = None
    states: dict[int, dict[str, Any]] = {}
    floor = 0
    changed_by_turn: dict[int, int] = {}

    for turn in range(1, TURNS + 1):
        reason = None
        if turn in COMPACTIONS:
            head = [m for m in replay.history if m.turn == 1]
            tail = [m for m in replay.history if m.turn >= turn - TAIL_TURNS]
            summary = "Summary of the earlier conversation: " + " ".join(
                _sentence(rng, 60, 120) for _ in range(12)
            )
            replay.history = [*head, Message("user", summary, turn - TAIL_TURNS - 1), *tail]
            reason = "compacted"
            state = states[turn - 1]
        ours = memory.begin_turn(person, state, reason=reason)
        replay.ours_text[turn] = ours.text
        question = Message("user", _sentence(rng, 80, 320), turn, question=True)
        replay.history.append(question)

        current_block = memory.begin_turn(person, None).text
        prompts = {
            "ours": serialise(base_system, replay.history, replay.ours_text),
            "system": serialise(f"{base_system}\n\n{current_block}", replay.history, {}),
            "none": serialise(base_system, replay.history, {}),
        }
        for design, prompt in prompts.items():
            cost = recomputed(previous[design], prompt)
            per_turn[design].append(cost)
            if turn > 1:
                totals[design] += cost
            previous[design] = prompt

        # The answer, with a tool call and its result when this turn changes memory.
        if turn in CHANGES:
            arguments = _change(memory, person, CHANGES[turn], turn, rng)
            result = memory.call_tool(person, arguments)
            assert "error" not in result, result
            changed_by_turn[turn] = _floor_of(arguments)
            floor += changed_by_turn[turn]
            replay.history.append(Message("assistant", json.dumps({"tool_call": arguments}), turn))
            replay.history.append(Message("tool", json.dumps(result), turn))
        replay.history.append(Message("assistant", _sentence(rng, 300, 900), turn))
        state = ours.state
        states[turn] = state

    resent = {design: totals[design] - totals["none"] for design in ("ours", "system")}
    ratio = resent["ours"] / resent["system"]
    figures = {
        "turns": TURNS,
        "memory_changes": len(CHANGES),
        "compactions": list(COMPACTIONS),
        "start_notes": START_NOTES,
        "first_block_chars": len(replay.ours_text[1]),
        "recomputed_turns_2_on": totals,
        "resent": resent,
        "ratio": ratio,
        "floor_changed_note_chars": floor,
        "ours_compaction_texts": {t: len(replay.ours_text[t]) for t in COMPACTIONS},
        "per_turn": per_turn,
    }
    return [
        Row(
            "cache",
            f"{TURNS}-turn chat, {len(CHANGES)} changes, {len(COMPACTIONS)} compactions: "
            "re-sent chars",
            f"{resent['ours']:,}",
            f"{resent['system']:,} (memory in system prompt)",
            f"{ratio:.2%}",
            f"< {TARGET:.0%}",
            ratio < TARGET,
            figures,
        ),
        Row(
            "cache",
            "floor: characters of the changed notes",
            f"{floor:,}",
            "",
            f"ours {resent['ours'] / floor:.2f}x floor" if floor else "",
        ),
        Row(
            "cache",
            "all recomputed chars, turns 2-60 (conversation included)",
            f"{totals['ours']:,}",
            f"{totals['system']:,} (no memory: {totals['none']:,})",
            f"{totals['ours'] / totals['system']:.2%}",
        ),
    ]


def _change(memory: Any, person: int, kind: str, turn: int, rng: random.Random) -> dict:
    notes = memory.notes(person)
    if kind == "create":
        return {
            "action": "create",
            "notes": [
                {
                    "categories": note_categories(rng),
                    "content": note_text(1000 + turn, rng.randint(80, 200), rng),
                }
            ],
        }
    # Change an older note, as a person correcting something said long ago would.
    note = notes[len(notes) // 2 + turn % 7]
    if kind == "delete":
        return {"action": "delete", "id": note.key, "version": note.version}
    return {
        "action": "update",
        "id": note.key,
        "version": note.version,
        "categories": list(note.categories),
        "content": note_text(2000 + turn, rng.randint(80, 200), rng),
    }


def _floor_of(arguments: dict) -> int:
    if arguments["action"] == "create":
        return sum(len(note["content"]) for note in arguments["notes"])
    if arguments["action"] == "update":
        return len(arguments["content"])
    return len(arguments["id"])
