"""Made-up people and notes for the benchmarks: deterministic, valid, and varied like real ones."""

from __future__ import annotations

import random
from typing import Any

CATEGORIES = (
    "Preferences",
    "Work",
    "Projects",
    "Family",
    "Health",
    "Travel",
    "Food",
    "Tools",
    "Language",
    "Schedule",
    "Hobbies",
    "Learning",
)

_SUBJECTS = (
    "prefers short answers with code first",
    "works on the billing service in Go and Python",
    "has a daughter who starts school in September",
    "is learning Spanish on weekday mornings",
    "uses PostgreSQL for everything, never MongoDB",
    "travels to Lisbon twice a year for a conference",
    "does not eat peanuts and avoids spicy food",
    "runs on Tuesdays and Saturdays before breakfast",
    "keeps a reading list of books about distributed systems",
    "asked to be addressed informally",
    "reviews pull requests after lunch, never in the evening",
    "is migrating the reports module from cron jobs to a queue",
)

_DETAILS = (
    "Mentioned it again when we planned the week",
    "This came up while discussing the release",
    "Said it matters for every suggestion about tooling",
    "Confirmed it after the last retrospective",
    "Wants reminders about it only when asked",
    "Brought it up together with the team offsite",
    "Added that the deadline moved to the end of the quarter",
    "Noted that the old approach caused two incidents",
)


def note_text(index: int, length: int, rng: random.Random) -> str:
    """A note of exactly ``length`` characters (at least 40), unique by its ``index``."""
    parts = [f"Item {index}: the person {rng.choice(_SUBJECTS)}."]
    while sum(len(part) + 1 for part in parts) < length + 20:
        parts.append(f"{rng.choice(_DETAILS)} (week {rng.randint(1, 52)}).")
    text = " ".join(parts)[:length]
    return text[:-1] + "." if text.endswith(" ") else text


def note_categories(rng: random.Random) -> list[str]:
    return rng.sample(CATEGORIES, rng.choice((1, 1, 2, 2, 3)))


def notes(count: int, length: int, seed: int = 7, start: int = 0) -> list[dict[str, Any]]:
    """``count`` notes of ``length`` characters each, as ``{"categories", "content"}``."""
    rng = random.Random(seed)
    return [
        {"categories": note_categories(rng), "content": note_text(start + index, length, rng)}
        for index in range(count)
    ]


def make_person(alias: str, username: str) -> Any:
    """A saved user on database ``alias`` (no usable password: nobody logs in with it)."""
    from django.contrib.auth import get_user_model

    model = get_user_model()
    user = model(username=username)
    user.set_unusable_password()
    user.save(using=alias)
    return user


def fill(memory: Any, user: Any, items: list[dict[str, Any]]) -> None:
    """Save ``items`` through the app itself, ``MAX_BATCH`` at a time."""
    batch = memory.limits.max_batch
    for start in range(0, len(items), batch):
        memory.create_notes(user, items[start : start + batch])


def stored_note(row: Any) -> Any:
    """A ``MemoryNote`` row as the core's ``Note``."""
    from agent_memory.stores.orm_notes import to_note

    return to_note(row)
