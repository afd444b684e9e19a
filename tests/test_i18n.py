"""Russian and English ship complete: every UI string of the app has a Russian translation."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_memory import LongTermMemory

PACKAGE = Path(__file__).resolve().parents[1] / "agent_memory"
LOCALE = PACKAGE / "locale"


def read_po(path: Path) -> list[dict]:
    """The entries of a .po file: msgid, msgid_plural, msgstr forms and flags."""
    entries: list[dict] = []
    entry: dict = {}
    key: tuple[str, int | None] | None = None

    def finish() -> None:
        if "msgid" in entry:
            entries.append(dict(entry))
        entry.clear()

    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            finish()
            key = None
            continue
        if line.startswith("#,"):
            entry.setdefault("flags", set()).update(flag.strip() for flag in line[2:].split(","))
            continue
        if line.startswith("#"):
            continue
        match = re.match(r"^(msgctxt|msgid_plural|msgid|msgstr)(?:\[(\d+)\])?\s+(\".*\")$", line)
        if match:
            name, index, value = match.group(1), match.group(2), ast.literal_eval(match.group(3))
            if name == "msgstr":
                key = ("msgstr", int(index) if index is not None else None)
                entry.setdefault("msgstr", {})[key[1]] = value
            else:
                key = (name, None)
                entry[name] = value
        elif line.startswith('"') and key is not None:
            value = ast.literal_eval(line)
            if key[0] == "msgstr":
                entry["msgstr"][key[1]] += value
            else:
                entry[key[0]] += value
    finish()
    return entries


def untranslated(path: Path) -> list[str]:
    """msgids with an empty or fuzzy translation (the header excepted)."""
    return [
        entry["msgid"]
        for entry in read_po(path)
        if entry["msgid"]
        and (
            "fuzzy" in entry.get("flags", set())
            or not all(entry.get("msgstr", {None: ""}).values())
        )
    ]


def test_both_languages_ship_a_catalogue_and_its_compiled_file():
    for language in ("ru", "en"):
        folder = LOCALE / language / "LC_MESSAGES"
        assert (folder / "django.po").is_file()
        assert (folder / "django.mo").is_file()


def test_every_msgid_has_a_russian_translation():
    assert untranslated(LOCALE / "ru" / "LC_MESSAGES" / "django.po") == []


def test_russian_plurals_have_every_form():
    entries = read_po(LOCALE / "ru" / "LC_MESSAGES" / "django.po")
    plurals = [entry for entry in entries if "msgid_plural" in entry]
    assert plurals
    for entry in plurals:
        assert sorted(entry["msgstr"]) == [0, 1, 2, 3], entry["msgid"]


def test_placeholders_survive_translation():
    for entry in read_po(LOCALE / "ru" / "LC_MESSAGES" / "django.po"):
        if not entry["msgid"]:
            continue
        wanted = set(re.findall(r"%\(\w+\)[sd]|\{\w+\}", entry["msgid"]))
        for form in entry["msgstr"].values():
            assert set(re.findall(r"%\(\w+\)[sd]|\{\w+\}", form)) == wanted, entry["msgid"]


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("xgettext"), reason="gettext tools are not installed")
def test_catalogue_holds_every_ui_string_of_the_source(tmp_path):
    """Extract the strings again from a copy of the package: none may lack a translation."""
    copy = tmp_path / "agent_memory"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "static"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "PYTHONPATH": str(PACKAGE.parent),
    }
    subprocess.run(
        [sys.executable, "-m", "django", "makemessages", "-l", "ru", "-v", "0"],
        cwd=copy,
        env=env,
        check=True,
    )
    missing = untranslated(copy / "locale" / "ru" / "LC_MESSAGES" / "django.po")
    assert missing == [], "run makemessages in agent_memory/ and translate these"


def test_the_screen_speaks_russian(client, user):
    client.force_login(user)
    LongTermMemory().create_notes(user, [{"categories": ["Еда"], "content": "Любит чай"}])
    page = client.get("/memory/", HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert "Что агент помнит о вас" in page
    assert "1 из 200 заметок" in page
    assert "Изменено" in page and "агентом" in page
    assert '<html lang="ru">' in page


def test_core_error_messages_speak_russian_with_the_figures_filled_in():
    from datetime import UTC, datetime

    from django.utils import translation

    from agent_memory import rules
    from agent_memory.conf import Limits
    from agent_memory.errors import DuplicateNote, InvalidNote, LimitReached, StaleVersion
    from agent_memory.notes import NewNote, Note

    moment = datetime(2026, 1, 1, tzinfo=UTC)
    saved = [
        Note(7, 1, ("Еда",), "Любит чай", 1, "agent", moment, moment),
        Note(8, 1, ("Работа",), "Пишет на Python", 1, "agent", moment, moment),
    ]
    limits = Limits(
        max_notes=2, max_total_chars=5000, max_batch=20, max_block_chars=4000, search_limit=10
    )
    with translation.override("ru"):
        with pytest.raises(DuplicateNote) as duplicate:
            rules.check_create(saved, [NewNote(("еда",), "любит  ЧАЙ")], limits)
        with pytest.raises(LimitReached) as full:
            rules.check_create(saved, [NewNote(("Еда",), "Любит кофе")], limits)
        with pytest.raises(InvalidNote) as invalid:
            rules.clean_content("x" * 501)
        with pytest.raises(InvalidNote) as secret:
            rules.clean_content("Пароль: hunter2")
        stale = StaleVersion.for_note(7, sent=1, current=3)
    assert duplicate.value.message == (
        "Этот текст уже сохранён как memory:7 (категории: Еда). "
        "Измените memory:7 вместо того, чтобы создавать новую заметку."
    )
    assert full.value.message.startswith(
        "Память заполнена: сохранено заметок — 2 из 2, а это добавит ещё 1."
    )
    assert invalid.value.message.startswith(
        "Текст слишком длинный (символов: 501), а предел — 500."
    )
    assert "в этом тексте есть пароль." in secret.value.message
    assert "(вы отправили версию 1, а сейчас это версия 3)" in stale.message
    # Outside the override the same call answers in English, byte for byte as before.
    with pytest.raises(LimitReached) as english:
        rules.check_create(saved, [NewNote(("Еда",), "Любит кофе")], limits)
    assert english.value.message.startswith(
        "Memory is full: 2 of 2 notes are saved and this adds 1."
    )


def test_the_tools_own_messages_speak_russian():
    from django.utils import translation

    from agent_memory.stores.in_memory import InMemoryStore

    memory = LongTermMemory(store=InMemoryStore())
    with translation.override("ru"):
        answers = [
            memory.call_tool(1, {"action": "forget"}),
            memory.call_tool(1, {"action": "delete"}),
            memory.call_tool(1, {"action": "create", "notes": "tea"}),
            memory.call_tool(1, "{not json"),
            memory.call_tool(1, b"\xff"),
        ]
    messages = [answer["error"]["message"] for answer in answers]
    assert messages[0].startswith("action должно быть одним из")
    assert messages[1].startswith("Для delete нужны id, version; не хватает: id, version.")
    assert "списком из 1–5 объектов" in messages[2]
    assert messages[3].startswith("Аргументы — не корректный JSON.")
    assert messages[4].startswith("Аргументы — не текст в UTF-8.")
