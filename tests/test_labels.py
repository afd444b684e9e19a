from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from django.template import Context, Template
from django.utils import translation

from agent_memory.labels import (
    MEMORY_TOOL_TITLE,
    memory_tool_title,
    tool_title,
    with_memory_tool_titles,
)


def test_labels_import_without_django():
    code = (
        "import sys; import agent_memory.labels as labels; "
        "assert not [m for m in sys.modules if m == 'django' or m.startswith('django.')], "
        "sorted(m for m in sys.modules if m.startswith('django')); "
        "print(labels.memory_tool_title('ru'), labels.memory_action_title('create', 'ru'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        env={},
        cwd=Path(__file__).resolve().parents[1],
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Работа с памятью Сохранил заметку"


def test_titles_in_english_and_russian():
    assert MEMORY_TOOL_TITLE == "Working with memory"
    assert memory_tool_title("en") == "Working with memory"
    assert memory_tool_title("ru") == "Работа с памятью"
    assert memory_tool_title("ru-RU") == "Работа с памятью"
    assert memory_tool_title("ru_RU") == "Работа с памятью"
    assert memory_tool_title("en-GB") == "Working with memory"


def test_unknown_language_falls_back_to_english():
    assert memory_tool_title("de") == "Working with memory"
    assert memory_tool_title(None) == "Working with memory"


def test_tool_title_leaves_other_tools_alone():
    assert tool_title("manage_memory", "ru") == "Работа с памятью"
    assert tool_title("search_web", "ru") == "search_web"


def test_with_memory_tool_titles_adds_to_host_labels_without_changing_them():
    host = {"search_web": "Поиск в интернете"}
    labels = with_memory_tool_titles(host, language="ru")
    assert labels == {"search_web": "Поиск в интернете", "manage_memory": "Работа с памятью"}
    assert host == {"search_web": "Поиск в интернете"}
    assert with_memory_tool_titles(language="en") == {"manage_memory": "Working with memory"}


def test_with_memory_tool_titles_keeps_the_hosts_own_title():
    assert with_memory_tool_titles({"manage_memory": "Memory"}, language="ru") == {
        "manage_memory": "Memory"
    }


def test_template_filter_uses_the_active_language():
    template = Template(
        "{% load agent_memory_labels %}{{ name|tool_title }}|{{ other|tool_title }}"
    )
    context = Context({"name": "manage_memory", "other": "search_web"})
    with translation.override("ru"):
        assert template.render(context) == "Работа с памятью|search_web"
    with translation.override("en"):
        assert template.render(context) == "Working with memory|search_web"


def test_template_filter_takes_an_explicit_language():
    template = Template('{% load agent_memory_labels %}{{ "manage_memory"|tool_title:"ru" }}')
    with translation.override("en"):
        assert template.render(Context()) == "Работа с памятью"


def test_memory_actions_in_a_persons_words():
    from agent_memory.labels import memory_action_title

    assert memory_action_title("create", "en") == "Saved a note"
    assert memory_action_title("update", "en") == "Updated a note"
    assert memory_action_title("delete", "en") == "Deleted a note"
    assert memory_action_title("search", "en") == "Searched memory"
    assert memory_action_title("create", "ru-RU") == "Сохранил заметку"
    assert memory_action_title("search", "ru") == "Поискал в памяти"


@pytest.mark.parametrize(
    ("count", "english", "russian"),
    [
        (2, "Saved 2 notes", "Сохранил 2 заметки"),
        (5, "Saved 5 notes", "Сохранил 5 заметок"),
        (11, "Saved 11 notes", "Сохранил 11 заметок"),
        (21, "Saved 21 notes", "Сохранил 21 заметку"),
        (22, "Saved 22 notes", "Сохранил 22 заметки"),
    ],
)
def test_memory_action_counts_use_each_languages_plurals(count, english, russian):
    from agent_memory.labels import memory_action_title

    assert memory_action_title("create", "en", count) == english
    assert memory_action_title("create", "ru", count) == russian


def test_a_refused_or_unknown_action_is_still_in_words():
    from agent_memory.labels import memory_action_title

    assert memory_action_title("create", "en", failed=True) == "Could not save the note"
    assert memory_action_title("delete", "ru", failed=True) == "Не удалось удалить заметку"
    assert memory_action_title("dance", "ru") == "Работа с памятью"
    assert memory_action_title(None, "de") == "Working with memory"


def test_memory_action_filter_uses_the_active_language():
    template = Template('{% load agent_memory_labels %}{{ "create"|memory_action:3 }}')
    with translation.override("ru"):
        assert template.render(Context()) == "Сохранил 3 заметки"
    with translation.override("en"):
        assert template.render(Context()) == "Saved 3 notes"


def test_the_titles_come_from_the_packages_catalogue_as_django_reads_it():
    from agent_memory import labels

    titles = [
        labels.MEMORY_TOOL_TITLE,
        *labels.MEMORY_ACTION_TITLES.values(),
        *labels.MEMORY_ACTION_FAILED_TITLES.values(),
    ]
    for title in titles:
        russian = labels.catalogue("ru").gettext(title)
        assert russian != title
        with translation.override("ru"):
            assert translation.gettext(title) == russian
    with translation.override("ru"):
        assert translation.ngettext("Saved %(count)s note", "Saved %(count)s notes", 5) % {
            "count": 5
        } == labels.memory_action_title("create", "ru", 5)
