"""README.md stays true: its Python compiles, its settings table lists exactly the settings the
app knows, and its model settings and integration views work, word for word, against local fake
model servers (OpenAI-compatible and Anthropic shapes)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.test import RequestFactory, override_settings

from agent_memory import LongTermMemory
from agent_memory.conf import DEFAULTS
from agent_memory.models import OptimizerState

from .fake_models import (
    ANTHROPIC_PATH,
    OPENAI_PATH,
    FakeModelServer,
    anthropic_message,
    completion,
)

README = Path(__file__).resolve().parent.parent / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def readme() -> str:
    return README.read_text(encoding="utf-8")


def python_blocks() -> list[tuple[int, str]]:
    text = readme()
    return [
        (text.count("\n", 0, match.start()) + 1, match[2])
        for match in FENCE.finditer(text)
        if match[1] == "python"
    ]


def marked_block(name: str) -> str:
    """The fenced block right after ``<!-- readme-test: name -->``."""
    found = re.search(rf"<!-- readme-test: {name} -->\n```python\n(.*?)^```", readme(), re.S | re.M)
    assert found, f"README.md has no ```python block marked <!-- readme-test: {name} -->"
    return found[1]


def test_every_python_block_in_the_readme_compiles():
    blocks = python_blocks()
    assert len(blocks) >= 7
    for line, source in blocks:
        try:
            compile(source, f"README.md, block at line {line}", "exec")
        except SyntaxError as error:
            pytest.fail(f"README.md's python block at line {line} does not compile: {error}")


def settings_table_keys() -> list[str]:
    text = readme()
    section = text[text.index("### Settings reference") :]
    section = section[: section.index("\n## ")]
    return re.findall(r"^\| `([A-Z_]+)` \|", section, re.M)


def test_the_settings_table_lists_exactly_the_keys_the_app_knows():
    rows = settings_table_keys()
    assert len(rows) == len(set(rows)), f"rows listed twice: {sorted(rows)}"
    missing = sorted(set(DEFAULTS) - set(rows))
    extra = sorted(set(rows) - set(DEFAULTS))
    assert not missing and not extra, (
        f"README.md's settings table: missing rows for {missing}, rows for unknown keys {extra} "
        "(agent_memory/conf.py DEFAULTS is the list)"
    )


def test_every_check_id_in_the_settings_table_exists():
    text = readme()
    section = text[text.index("### Settings reference") :]
    section = section[: section.index("\n## ")]
    from agent_memory import checks

    source = Path(checks.__file__).read_text()
    known = {f"E{int(number):03d}" for number in re.findall(r"_error\(\s*(\d+)", source)}
    known |= {f"E{rule.check_id:03d}" for rule in checks.RULES.values()}
    listed = set(re.findall(r"`(E\d{3})`", section))
    assert listed and listed <= known, sorted(listed - known)


# --- the model settings and the integration views, against fake servers ----------------------


def readme_settings(openai: FakeModelServer, anthropic: FakeModelServer, monkeypatch) -> dict:
    """README's AGENT_MEMORY["MODELS"] example, run as written, with the servers in the env."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", openai.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic.root)
    namespace: dict[str, Any] = {}
    exec(compile(marked_block("models"), "README.md (models)", "exec"), namespace)
    return namespace["AGENT_MEMORY"]


def load_view(name: str):
    namespace: dict[str, Any] = {"__name__": f"readme_{name.replace('-', '_')}"}
    exec(compile(marked_block(name), f"README.md ({name})", "exec"), namespace)
    return namespace["chat_turn"]


class Person:
    """One logged-in person POSTing to the view, with a session that lasts across turns."""

    def __init__(self, view, user) -> None:
        self.view, self.user, self.session = view, user, SessionStore()

    def ask(self, question: str, new: bool = False) -> dict:
        data = {"question": question, **({"new": "1"} if new else {})}
        request = RequestFactory().post("/chat/", data)
        request.user, request.session = self.user, self.session
        response = self.view(request)
        self.session.save()
        assert response.status_code == 200, response.content
        return json.loads(response.content)


MERGED = "Prefers green tea, also in the morning"
SAVE = {"action": "create", "notes": [{"categories": ["Drinks"], "content": "Prefers green tea"}]}


def merge_answer(prompt: str) -> str:
    """The optimizer's answer: merge the two tea notes it is shown."""
    ids = [f"memory:{number}" for number in re.findall(r'"memory:(\d+)"', prompt)]
    return json.dumps({"groups": [{"ids": ids, "categories": ["Drinks"], "content": MERGED}]})


def openai_model(body: dict[str, Any]) -> tuple[int, Any]:
    """First turn: a manage_memory call, then an answer with a fake memory block. Later turns:
    a plain answer. Without tools (the optimizer): merge the notes."""
    if "tools" not in body:
        return 200, completion(merge_answer(body["messages"][-1]["content"]))
    last = body["messages"][-1]
    if last["role"] == "tool":
        fake = '<agent_memory><note key="memory:1">fake</note></agent_memory>'
        return 200, completion(f"Saved.{fake} Anything else?")
    if "tea" in last["content"]:
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "manage_memory", "arguments": json.dumps(SAVE)},
        }
        return 200, completion(None, [call])
    return 200, completion("Hello again.")


def anthropic_model(body: dict[str, Any]) -> tuple[int, Any]:
    if "tools" not in body:
        prompt = body["messages"][-1]["content"]
        text = prompt if isinstance(prompt, str) else prompt[0]["text"]
        return 200, anthropic_message({"type": "text", "text": merge_answer(text)})
    last = body["messages"][-1]
    if isinstance(last["content"], list) and last["content"][0]["type"] == "tool_result":
        fake = '<agent_memory><note key="memory:1">fake</note></agent_memory>'
        return 200, anthropic_message({"type": "text", "text": f"Saved.{fake} Anything else?"})
    if "tea" in last["content"]:
        call = {"type": "tool_use", "id": "toolu_1", "name": "manage_memory", "input": SAVE}
        return 200, anthropic_message({"type": "text", "text": "One moment."}, call)
    return 200, anthropic_message({"type": "text", "text": "Hello again."})


@pytest.fixture
def servers():
    openai = FakeModelServer(openai_model, path=OPENAI_PATH)
    anthropic = FakeModelServer(anthropic_model, path=ANTHROPIC_PATH)
    yield openai, anthropic
    openai.close()
    anthropic.close()


@pytest.mark.parametrize(
    ("view", "shape"), [("openai-view", "openai"), ("anthropic-view", "anthropic")]
)
def test_the_readme_integration_view_runs_a_chat_against_a_model_server(
    view, shape, servers, user, monkeypatch
):
    openai, anthropic = servers
    server = openai if shape == "openai" else anthropic
    settings = readme_settings(openai, anthropic, monkeypatch)
    LongTermMemory().create_notes(
        user, [{"categories": ["Drinks"], "content": "Likes green tea in the morning"}]
    )
    person = Person(load_view(view), user)

    with override_settings(AGENT_MEMORY=settings):
        first = person.ask("I prefer green tea, remember it", new=True)
        second = person.ask("hi")

    # The fake memory block the model wrote is not shown; the tool saved the note.
    assert first == {"answer": "Saved. Anything else?"}
    assert second == {"answer": "Hello again."}
    turns = [body for body in server.requests if "tools" in body]
    assert len(turns) == 3  # the tool call, the answer after it, the second turn
    names = [tool.get("name") or tool["function"]["name"] for tool in turns[0]["tools"]]
    assert names == ["manage_memory"]

    def question(body: dict, index: int) -> str:
        users = [m for m in body["messages"] if m["role"] == "user"]
        content = users[index]["content"]
        return content if isinstance(content, str) else content[0].get("text", "")

    # The first question carries the memory block; the second turn sends no new memory text and
    # repeats the first question with its block, word for word (the prompt cache holds).
    assert question(turns[0], 0).startswith("<agent_memory")
    assert "Likes green tea in the morning" in question(turns[0], 0)
    assert question(turns[2], 0) == question(turns[0], 0)
    assert question(turns[2], -1) == "hi"
    # The state was stored with the answer, in the session, and is never sent to the model.
    state = person.session["chat"]["state"]
    assert state and json.dumps(state) not in json.dumps(turns[2])
    # after_turn: the optimizer ran with the README's model settings for the turn's alias, saw
    # both tea notes and merged them.
    optimizer_calls = [body for body in server.requests if "tools" not in body]
    assert len(optimizer_calls) == 1
    assert optimizer_calls[0]["model"] == (
        "gpt-5-mini" if shape == "openai" else "claude-sonnet-4-6"
    )
    assert [note.content for note in LongTermMemory().notes(user)] == [MERGED]
    assert OptimizerState.objects.get(user=user).last_success_at is not None
    headers = {key.lower(): value for key, value in server.headers[0].items()}
    if shape == "openai":
        assert headers["authorization"] == "Bearer sk-test"
    else:
        sent = [headers.get("x-api-key"), headers.get("authorization", "").removeprefix("Bearer ")]
        assert "sk-ant-test" in sent, headers  # (SDK versions differ in the header they use)


def test_ci_runs_the_readme_test_command_as_written():
    text = readme()
    quick_start = text[text.index("**2. Run the test suite**") :]
    command = " ".join(re.search(r"```sh\n(.*?)\n```", quick_start, re.S)[1].split("\\\n"))
    install, app, example = (" ".join(part.split()) for part in command.split(" && "))
    assert install == "python -m pip install -r requirements-dev.txt"
    assert app == "python -m pytest"
    assert example == "python -m pytest example_project --ds=example_project.tests.settings"
    ci = (README.parent / ".ci" / "run").read_text()
    assert ci.splitlines().count(install) == 1, ".ci/run must install as the README says, once"
    assert app in ci, ".ci/run must run the README's tests"
    assert "--ds=example_project.tests.settings" in ci and "example_project\n" in ci


def test_the_lean_requirements_hold_no_test_lint_or_type_tool():
    root = README.parent
    lean = (root / "requirements.txt").read_text().lower()
    for tool in ("pytest", "hypothesis", "playwright", "schemathesis", "mypy", "ruff", "stubs"):
        assert tool not in lean, f"requirements.txt names {tool}: it belongs in requirements-dev"
    dev = (root / "requirements-dev.txt").read_text().splitlines()
    assert "-r requirements.txt" in dev
