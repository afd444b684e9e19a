from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from django.template import Context, Template
from django.utils import translation

from agent_memory.labels import (
    MEMORY_TOOL_TITLES,
    memory_tool_title,
    tool_title,
    with_memory_tool_titles,
)


def test_labels_import_without_django():
    code = (
        "import sys; import agent_memory.labels as labels; "
        "assert not [m for m in sys.modules if m == 'django' or m.startswith('django.')], "
        "sorted(m for m in sys.modules if m.startswith('django')); "
        "print(labels.memory_tool_title('ru'))"
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
    assert done.stdout.strip() == "Работа с памятью"


def test_titles_in_english_and_russian():
    assert MEMORY_TOOL_TITLES == {"en": "Working with memory", "ru": "Работа с памятью"}
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
