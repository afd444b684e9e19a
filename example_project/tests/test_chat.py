"""The example chat: each turn follows the integration recipe, with the offline demo agent."""

from __future__ import annotations

import json

import pytest

from agent_memory import LongTermMemory
from example_project.chat import agent
from example_project.chat.models import Chat, Message

pytestmark = pytest.mark.usefixtures("demo_agent")


@pytest.fixture
def chat(user):
    return Chat.objects.create(user=user)


def ask(chat: Chat, text: str, **kwargs) -> Message:
    return agent.run_turn(chat, text, **kwargs)


def questions(chat: Chat) -> list[Message]:
    return list(chat.messages.filter(role=Message.Role.USER).order_by("id"))


def test_remember_saves_a_note_through_the_tool_loop(chat, user):
    answer = ask(chat, "remember that I prefer tea")

    notes = LongTermMemory().notes(user)
    # Written about the person, so it never reads as the agent's own taste.
    assert [note.content for note in notes] == ["Prefers tea"]
    assert notes[0].source == "agent"
    call = chat.messages.get(role=Message.Role.ASSISTANT, tool_calls__isnull=False)
    assert call.tool_calls[0]["name"] == "manage_memory"
    assert json.loads(call.tool_calls[0]["arguments"])["action"] == "create"
    result = chat.messages.get(role=Message.Role.TOOL)
    assert json.loads(result.content)["notes"][0]["content"] == "Prefers tea"
    assert "Prefers tea" in answer.content
    assert answer.state is not None


def full_block(user) -> str:
    memory = LongTermMemory()
    from agent_memory.prompt import render

    return render(memory.notes(user), memory.limits.max_block_chars)


def note_line(note) -> str:
    from agent_memory.prompt import note_line

    return note_line(note)


def note_line_of(note) -> str:
    return f'<note key="memory:{note.id}" version="{note.version}"'


def test_a_new_chat_gets_the_block_and_the_demo_answers_from_it(chat, user):
    ask(chat, "remember that I prefer tea")
    other = Chat.objects.create(user=user)

    answer = ask(other, "what do you know about me?")

    question = questions(other)[0]
    note = LongTermMemory().notes(user)[0]
    assert question.memory_text.startswith("<agent_memory>\n")
    assert question.memory_text.endswith("\n</agent_memory>")
    assert note_line_of(note) in question.memory_text
    assert question.memory_text == full_block(user)
    assert "Prefers tea" in answer.content
    # The demo read it from the question: nothing was searched.
    assert not other.messages.filter(role=Message.Role.TOOL).exists()


def test_memory_is_read_once_per_chat(chat, user):
    ask(chat, "remember that I prefer tea")
    ask(chat, "remember that my name is Ann")
    ask(chat, "what do you know about me?")

    first, second, third = questions(chat)
    assert first.memory_text.startswith("<agent_memory>")  # the (empty) block
    assert second.memory_text == ""
    assert third.memory_text == ""
    # The demo still knows both notes: from its own tool results in the conversation.
    answer = chat.messages.filter(role=Message.Role.ASSISTANT).last()
    assert "Prefers tea" in answer.content and "Name is Ann" in answer.content


def test_russian_phrases_work_the_same(chat, user):
    ask(chat, "запомни, что я люблю чай")
    assert [note.content for note in LongTermMemory().notes(user)] == ["Любит чай"]
    other = Chat.objects.create(user=user)
    answer = ask(other, "Что ты обо мне знаешь?")
    assert "Любит чай" in answer.content
    answer = ask(other, "забудь про чай")
    assert LongTermMemory().notes(user) == []
    assert "чай" in answer.content


def test_forget_searches_then_deletes(chat, user):
    memory = LongTermMemory()
    memory.create_notes(user, [{"categories": ["Food"], "content": "I prefer tea"}])
    memory.create_notes(user, [{"categories": ["Work"], "content": "I write Django"}])

    answer = ask(chat, "forget that I prefer tea")

    assert [note.content for note in memory.notes(user)] == ["I write Django"]
    actions = [
        json.loads(call["arguments"])["action"]
        for message in chat.messages.filter(tool_calls__isnull=False)
        for call in message.tool_calls
    ]
    assert actions == ["search", "delete"]
    assert "I prefer tea" in answer.content


def test_group_turns_get_no_memory_and_the_next_personal_turn_gets_the_block(chat, user):
    LongTermMemory().create_notes(user, [{"categories": ["Food"], "content": "I prefer tea"}])
    ask(chat, "hello")
    chat.is_group = True
    chat.save()
    answer = ask(chat, "what do you know about me?")
    chat.is_group = False
    chat.save()
    ask(chat, "what do you know about me?")

    first, group_turn, personal = questions(chat)
    assert first.memory_text == full_block(user)
    assert group_turn.memory_text == "" and group_turn.group
    assert answer.state.get("group") is True
    assert personal.memory_text == full_block(user)


def test_edit_first_message_sends_the_full_block_again(chat, user):
    memory = LongTermMemory()
    memory.create_notes(user, [{"categories": ["Food"], "content": "I prefer tea"}])
    ask(chat, "hello")
    ask(chat, "how are you?")
    memory.create_notes(user, [{"categories": ["Work"], "content": "I write Django"}])

    agent.edit_first_message(chat, "what do you know about me?")

    (question,) = questions(chat)
    assert question.content == "what do you know about me?"
    assert question.memory_reason == "first_message_edited"
    assert question.memory_text == full_block(user)
    assert "I write Django" in question.memory_text
    answer = chat.messages.filter(role=Message.Role.ASSISTANT).last()
    assert "I write Django" in answer.content and "I prefer tea" in answer.content


def test_regenerate_first_answer_sends_the_full_block_again(chat, user):
    memory = LongTermMemory()
    ask(chat, "what do you know about me?")
    memory.create_notes(user, [{"categories": ["Food"], "content": "I prefer tea"}])

    agent.regenerate_first_answer(chat)

    (question,) = questions(chat)
    assert question.content == "what do you know about me?"
    assert question.memory_reason == "first_answer_regenerated"
    assert question.memory_text == full_block(user)
    answer = chat.messages.filter(role=Message.Role.ASSISTANT).last()
    assert "I prefer tea" in answer.content


def test_compaction_keeping_a_turn_sends_only_the_difference(chat, user):
    memory = LongTermMemory()
    (home,) = memory.create_notes(user, [{"categories": ["Home"], "content": "I live in Lisbon"}])
    (tea,) = memory.create_notes(user, [{"categories": ["Food"], "content": "I prefer tea"}])
    (django,) = memory.create_notes(user, [{"categories": ["Work"], "content": "I write Django"}])
    ask(chat, "hello")
    ask(chat, "how are you?")
    block_seen = questions(chat)[0].memory_text
    memory.update_note(user, tea.id, tea.version, ["Food"], "I prefer green tea", source="person")
    memory.delete_note(user, django.id, django.version)

    assert agent.compact_history(chat, keep_turns=1) == 1
    answer = ask(chat, "what do you know about me?")

    chat.refresh_from_db()
    assert "hello" in chat.summary.lower()
    kept, question = questions(chat)
    assert kept.content == "how are you?"
    # The block the model was given moved, word for word, to the first question kept.
    assert kept.memory_text == block_seen
    assert question.memory_reason == "compacted"
    fresh = {note.id: note for note in memory.notes(user)}
    assert question.memory_text.split("\n")[2:] == [
        note_line(fresh[tea.id]),  # the changed note, version 2
        f'[No longer valid: "memory:{django.id}"]',
        "</agent_memory>",
    ]
    assert question.memory_text.startswith("<agent_memory>\n")
    assert f"memory:{home.id}" not in question.memory_text  # unchanged: not sent again
    # The model still knows the unchanged note, from the block carried over.
    assert "I live in Lisbon" in answer.content and "I prefer green tea" in answer.content
    assert "I write Django" not in answer.content
    # The reason is used once: the turn after is an ordinary one.
    ask(chat, "thanks")
    assert questions(chat)[-1].memory_text == ""


def test_compaction_with_nothing_changed_sends_nothing(chat, user):
    LongTermMemory().create_notes(user, [{"categories": ["Food"], "content": "I prefer tea"}])
    ask(chat, "hello")
    ask(chat, "how are you?")
    agent.compact_history(chat, keep_turns=1)
    ask(chat, "thanks")
    question = questions(chat)[-1]
    assert question.memory_reason == "compacted"
    assert question.memory_text == ""


def test_compaction_keeping_nothing_sends_the_full_block(chat, user):
    LongTermMemory().create_notes(user, [{"categories": ["Food"], "content": "I prefer tea"}])
    ask(chat, "hello")
    agent.compact_history(chat, keep_turns=0)
    assert not chat.messages.exists()
    answer = ask(chat, "what do you know about me?")
    (question,) = questions(chat)
    assert question.memory_text == full_block(user)
    assert "I prefer tea" in answer.content


def test_compaction_input_never_holds_memory_text_or_state(chat, user, monkeypatch):
    LongTermMemory().create_notes(user, [{"categories": ["Hobby"], "content": "I keep bees"}])
    ask(chat, "hello")
    ask(chat, "how are you?")
    seen = []
    from example_project.chat.demo_agent import DemoAgent

    monkeypatch.setattr(
        DemoAgent, "summarize", lambda self, transcript: seen.append(transcript) or "s"
    )
    agent.compact_history(chat, keep_turns=1)
    text = json.dumps(seen)
    assert "hello" in text
    assert "agent_memory" not in text and '"seen"' not in text and "I keep bees" not in text


def test_a_chat_without_older_turns_cannot_be_compacted(chat):
    ask(chat, "hello")
    with pytest.raises(agent.CannotDoThat):
        agent.compact_history(chat, keep_turns=1)


def test_secrets_are_refused_and_the_demo_says_why(chat, user):
    answer = ask(chat, "remember that my password: hunter2hunter2")
    assert LongTermMemory().notes(user) == []
    assert "could not save" in answer.content


def test_demo_as_optimizer_model_merges_only_equal_ignoring_case_and_spaces():
    from example_project.chat.demo_agent import DemoAgent

    line = '<note key="memory:{}" version="1" categories="{}" updated="2026-01-01">{}</note>'
    prompt = "\n".join(
        [
            line.format(1, "Food", "I prefer tea"),
            line.format(2, "Food / Drinks", "i  PREFER tea"),
            line.format(3, "Food", "I prefer green tea"),
            line.format(4, "Food", "I prefer coffee"),
        ]
    )
    answer = json.loads(DemoAgent().complete([{"role": "user", "content": prompt}]))
    assert answer == {
        "groups": [
            {
                "ids": ["memory:1", "memory:2"],
                "categories": ["Food", "Drinks"],
                "content": "I prefer tea",
            }
        ]
    }
    nothing = json.loads(DemoAgent().complete([{"role": "user", "content": prompt.split("\n")[0]}]))
    assert nothing == {"groups": []}


def test_demo_agent_runs_the_optimizer_as_the_default_model(user):
    memory = LongTermMemory()
    memory.create_notes(user, [{"categories": ["Food"], "content": "I prefer tea"}])
    memory.create_notes(user, [{"categories": ["Drinks"], "content": "i prefer  TEA"}])
    memory.create_notes(user, [{"categories": ["Drinks"], "content": "I prefer green tea"}])

    result = memory.optimize(user, model="default", force=True)

    assert result.status == "succeeded"
    contents = sorted((note.content, note.categories) for note in memory.notes(user))
    assert contents == [("I prefer green tea", ("Drinks",)), ("I prefer tea", ("Food", "Drinks"))]


# --- the pages ------------------------------------------------------------------------------


def test_pages_need_a_login(client, chat):
    for url in ["/", f"/chats/{chat.pk}/", f"/chats/{chat.pk}/memory-log.json"]:
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_another_persons_chat_is_not_found(client, chat, other_user):
    client.force_login(other_user)
    assert client.get(f"/chats/{chat.pk}/").status_code == 404
    assert client.get(f"/chats/{chat.pk}/memory-log.json").status_code == 404
    assert client.post(f"/chats/{chat.pk}/send", {"text": "hi"}).status_code == 404
    assert client.post(f"/chats/{chat.pk}/delete").status_code == 404
    assert not chat.messages.exists()


def test_the_chat_page_in_russian(client, chat, user):
    client.force_login(user)
    client.post(f"/chats/{chat.pk}/send", {"text": "запомни, что я люблю чай"})
    page = client.get(f"/chats/{chat.pk}/", HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert "Сохранил заметку" in page and "Память обновлена" in page
    assert "Память использована в этом чате" in page
    assert "Новый чат" in page and "Демо-агент" in page and "не языковая модель" in page
    assert "Понял, запомню: «Любит чай»." in page


def test_memory_log_shows_what_the_model_received(client, chat, user):
    LongTermMemory().create_notes(user, [{"categories": ["Food"], "content": "I prefer tea"}])
    client.force_login(user)
    client.post(f"/chats/{chat.pk}/send", {"text": "hello"})
    client.post(f"/chats/{chat.pk}/send", {"text": "what do you know about me?"})
    turns = client.get(f"/chats/{chat.pk}/memory-log.json").json()["turns"]
    assert [turn["memory_text"] for turn in turns] == [full_block(user), ""]
    assert [turn["reason"] for turn in turns] == [None, None]


def test_an_empty_message_is_refused_with_a_message(client, chat, user):
    client.force_login(user)
    response = client.post(f"/chats/{chat.pk}/send", {"text": "   "})
    assert response.status_code == 200
    assert "This field is required." in response.content.decode()
    assert not chat.messages.exists()


def test_deleting_a_chat_keeps_memory(client, chat, user):
    client.force_login(user)
    client.post(f"/chats/{chat.pk}/send", {"text": "remember that I prefer tea"})
    client.post(f"/chats/{chat.pk}/delete")
    assert not Chat.objects.filter(pk=chat.pk).exists()
    assert [note.content for note in LongTermMemory().notes(user)] == ["Prefers tea"]


def test_an_unexpected_failure_is_shown_not_a_server_error(client, chat, user, monkeypatch):
    from example_project.chat.demo_agent import DemoAgent

    def broken(self, messages, tools=()):
        raise RuntimeError("bug")

    monkeypatch.setattr(DemoAgent, "chat", broken)
    client.force_login(user)
    response = client.post(f"/chats/{chat.pk}/send", {"text": "hello"}, follow=True)
    assert response.status_code == 200
    assert "The agent failed unexpectedly (RuntimeError)" in response.content.decode()
    assert chat.messages.filter(failed=False).count() == 0


def test_the_admin_lists_chats(client, chat, user):
    user.is_staff = user.is_superuser = True
    user.save()
    client.force_login(user)
    ask(chat, "remember that I prefer tea")
    assert client.get("/admin/chat/chat/").status_code == 200
    page = client.get(f"/admin/chat/chat/{chat.pk}/change/")
    assert page.status_code == 200 and "remember that I prefer tea" in page.content.decode()


# --- what the person sees --------------------------------------------------------------------


def test_memory_work_is_titled_in_the_persons_words(client, chat, user):
    client.force_login(user)
    client.post(f"/chats/{chat.pk}/send", {"text": "remember that I prefer tea"})
    client.post(f"/chats/{chat.pk}/send", {"text": "forget tea"})
    english = client.get(f"/chats/{chat.pk}/").content.decode()
    assert "Saved a note" in english and "Searched memory" in english
    assert "Deleted a note" in english
    assert "· create" not in english and "· search" not in english
    russian = client.get(f"/chats/{chat.pk}/", HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert "Сохранил заметку" in russian and "Поискал в памяти" in russian
    assert "Удалил заметку" in russian
    assert "Работа с памятью · create" not in russian


def test_memory_updated_links_to_the_note_written_on_the_memory_screen(client, chat, user):
    client.force_login(user)
    client.post(f"/chats/{chat.pk}/send", {"text": "remember that I prefer tea"})
    (note,) = LongTermMemory().notes(user)
    page = client.get(f"/chats/{chat.pk}/").content.decode()
    assert f'href="/memory/#note-{note.id}" class="memory-updated"' in page


def test_a_refused_memory_call_says_it_could_not(client, chat, user, settings):
    settings.AGENT_MEMORY = {**settings.AGENT_MEMORY, "MAX_NOTES": 1}
    LongTermMemory().create_notes(user, [{"categories": ["Food"], "content": "Likes soup"}])
    client.force_login(user)
    client.post(f"/chats/{chat.pk}/send", {"text": "remember that I prefer tea"})
    page = client.get(f"/chats/{chat.pk}/").content.decode()
    assert "Could not save the note" in page and "Memory updated" not in page


def test_the_hint_shows_only_when_memory_took_part(client, user):
    client.force_login(user)
    empty = Chat.objects.create(user=user)
    client.post(f"/chats/{empty.pk}/send", {"text": "hello"})
    assert "Memory used in this chat" not in client.get(f"/chats/{empty.pk}/").content.decode()

    LongTermMemory().create_notes(user, [{"categories": ["Food"], "content": "Likes soup"}])
    used = Chat.objects.create(user=user)
    client.post(f"/chats/{used.pk}/send", {"text": "hello"})
    page = client.get(f"/chats/{used.pk}/").content.decode()
    assert 'id="memory-hint"><a href="/memory/"' in page and "Memory used in this chat" in page

    group = Chat.objects.create(user=user, is_group=True)
    client.post(f"/chats/{group.pk}/send", {"text": "hello"})
    assert "Memory used in this chat" not in client.get(f"/chats/{group.pk}/").content.decode()


@pytest.mark.parametrize(
    ("question", "title"),
    [
        ("hello there", "hello there"),
        (
            "please remember that my favourite breakfast is porridge with blueberries and honey",
            "please remember that my favourite breakfast is porridge…",
        ),
        ("a" * 80, "a" * 59 + "…"),
        ("  lots   of\nspace  ", "lots of space"),
    ],
)
def test_chat_titles_are_cut_at_a_word_with_an_ellipsis(chat, question, title):
    ask(chat, question)
    chat.refresh_from_db()
    assert chat.title == title
    assert len(chat.title) <= agent.TITLE_CHARS


# --- the demo agent ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "saved"),
    [
        ("remember that I prefer tea", "Prefers tea"),
        ("remember that I don't like coffee", "Doesn't like coffee"),
        ("remember I'm a vegetarian", "Is a vegetarian"),
        ("remember that I live in Lisbon", "Lives in Lisbon"),
        ("remember that I watch football on Sundays", "Watches football on Sundays"),
        ("remember that my birthday is 12 May", "Birthday is 12 May"),
        ("запомни, что я люблю чай", "Любит чай"),
        ("запомни, что я не пью кофе", "Не пьёт кофе"),
        ("запомни, что я живу в Казани", "Живёт в Казани"),
        ("запомни: у меня есть собака", "Есть собака"),
        ("запомни, что я думаю, что мне нужен отпуск", "Говорит: «Я думаю, что мне нужен отпуск»"),
    ],
)
def test_the_demo_writes_notes_in_the_third_person(chat, user, said, saved):
    ask(chat, said)
    assert [note.content for note in LongTermMemory().notes(user)] == [saved]


@pytest.mark.parametrize(
    ("first", "second", "saved", "answer"),
    [
        ("call me Sasha", "call me Alex", "Wants to be called Alex", "Nice to meet you, Alex"),
        ("зови меня Саша", "Зовите меня Шура", "Просит называть себя: Шура", "Шура"),
    ],
)
def test_the_demo_understands_call_me_and_keeps_one_name(chat, user, first, second, saved, answer):
    ask(chat, first)
    assert len(LongTermMemory().notes(user)) == 1
    other = Chat.objects.create(user=user)  # a new chat: the name comes from the block
    reply = ask(other, second)
    notes = LongTermMemory().notes(user)
    assert [note.content for note in notes] == [saved]
    assert notes[0].version == 2
    assert answer in reply.content


def test_the_demo_agent_says_how_many_more_notes_with_the_right_plural():
    from example_project.chat.demo_agent import PHRASES, plural_key

    russian = {count: PHRASES["ru"][plural_key(count, PHRASES["ru"])] for count in (1, 3, 5, 21)}
    assert russian[21].format(count=21) == "…и ещё 21 заметка, её можно найти поиском."
    assert russian[3].format(count=3) == "…и ещё 3 заметки, их можно найти поиском."
    assert russian[5].format(count=5) == "…и ещё 5 заметок, их можно найти поиском."
    assert plural_key(12, PHRASES["ru"]) == "more" and plural_key(22, PHRASES["ru"]) == "more_few"
    assert PHRASES["en"][plural_key(1, PHRASES["en"])].format(count=1) == (
        "…and 1 more note I can look up with a search."
    )
    assert plural_key(2, PHRASES["en"]) == "more"


def test_the_memory_panel_lists_the_notes_sent_in_words_with_the_block_one_click_further(
    client, chat, user
):
    LongTermMemory().create_notes(user, [{"categories": ["Food"], "content": "Likes <b>soup</b>"}])
    client.force_login(user)
    client.post(f"/chats/{chat.pk}/send", {"text": "hello"})
    page = client.get(f"/chats/{chat.pk}/").content.decode()
    notes = page[page.index('<ul class="memory-notes">') :]
    notes = notes[: notes.index("</ul>")]
    assert "Food:</span> Likes &lt;b&gt;soup&lt;/b&gt;" in notes
    assert "memory:" not in notes and "manage_memory" not in notes
    raw = page[page.index('<details class="memory-raw">') :]
    assert "Exactly as sent to the model" in raw and "&lt;agent_memory&gt;" in raw
