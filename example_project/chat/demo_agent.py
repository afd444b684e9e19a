"""The offline demo agent: a scripted stand-in for a language model.

It is **not** a language model. It understands four kinds of request, in English and Russian:
"remember that …" / «запомни, что …», "call me …" / «зови меня …», "forget …" / «забудь …» and
"what do you know about me?" / «что ты обо мне знаешь?». Notes are written about the person, in
the third person, as a model is told to write them: "I prefer tea" is saved as "Prefers tea",
«я люблю чай» as «Любит чай». It speaks the same protocol as :class:`~.llm.OpenAICompatibleModel`:
it reads chat-completions messages and answers with text or with ``manage_memory`` tool calls,
so the chat's tool loop runs exactly as with a real model. What it knows about the person comes
only from the conversation: the memory block in the question and its own tool results.

It is also a model backend for the memory optimizer: ``complete(messages)`` proposes merging
notes whose text is equal ignoring case and spaces, and nothing else.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from itertools import count
from typing import Any

from .llm import Reply, ToolCall

TOOL = "manage_memory"

# The person's phrases, as data: (language, pattern).
REMEMBER = [
    ("en", re.compile(r"^(?:please[,\s]+)?remember(?:\s+that)?[\s,:]+(?P<text>.+)$", re.I | re.S)),
    (
        "ru",
        re.compile(
            r"^(?:пожалуйста[,\s]+)?запомни(?:[,\s]+(?:что|это))?[\s,:]+(?P<text>.+)$",
            re.I | re.S,
        ),
    ),
]
FORGET = [
    (
        "en",
        re.compile(
            r"^(?:please[,\s]+)?forget(?:\s+(?:that|about))?[\s,:]+(?P<text>.+)$", re.I | re.S
        ),
    ),
    (
        "ru",
        re.compile(
            r"^(?:пожалуйста[,\s]+)?забудь(?:[,\s]+(?:что|про|о|об|это))?[\s,:]+(?P<text>.+)$",
            re.I | re.S,
        ),
    ),
]
CALL_ME = [
    (
        "en",
        re.compile(
            r"^(?:please[,\s]+)?(?:call\s+me|my\s+name\s+is|i'?m\s+called)[\s,:]+(?P<name>.+)$",
            re.I | re.S,
        ),
    ),
    (
        "ru",
        re.compile(
            r"^(?:пожалуйста[,\s]+)?(?:зови(?:те)?\s+меня|называй(?:те)?\s+меня|меня\s+зовут)"
            r"[\s,:]+(?P<name>.+)$",
            re.I | re.S,
        ),
    ),
]
WHAT_DO_YOU_KNOW = [
    ("en", re.compile(r"what\s+do\s+you\s+know\s+about\s+me", re.I)),
    ("en", re.compile(r"what\s+do\s+you\s+remember\s+about\s+me", re.I)),
    ("ru", re.compile(r"что\s+ты\s+(?:обо|о|про)\s+мне\s+знаешь", re.I)),
    ("ru", re.compile(r"что\s+ты\s+знаешь\s+(?:обо|о|про)\s+мне", re.I)),
    ("ru", re.compile(r"что\s+ты\s+(?:обо|о|про)\s+мне\s+помнишь", re.I)),
]
PREFERENCE_WORDS = re.compile(
    r"\b(prefer\w*|like\w*|love\w*|hate\w*|don'?t|never|always|"
    r"предпочита\w*|любл\w*|люби\w*|не\s+\w+|никогда|всегда)",
    re.I,
)


def plural_key(count: int, say: dict[str, str]) -> str:
    """``"more_one"``, ``"more_few"`` or ``"more"`` for ``count``, by the phrases' language's
    rule: English has one and many; Russian one (1, 21…), few (2–4, 22–24…) and many."""
    if "more_few" not in say:
        return "more_one" if count == 1 else "more"
    if count % 10 == 1 and count % 100 != 11:
        return "more_one"
    if 2 <= count % 10 <= 4 and not 12 <= count % 100 <= 14:
        return "more_few"
    return "more"


PHRASES = {
    "en": {
        "about_me": "About me",
        "preferences": "Preferences",
        "name": "Name",
        "says": "Says: “{text}”",
        "call_me": "Wants to be called {name}",
        "called": "Nice to meet you, {name}! I'll call you that.",
        "saved": "Got it, I'll remember: “{content}”.",
        "not_saved": "I could not save that: {message}",
        "nothing_to_forget": "I have nothing about “{query}” in memory.",
        "forgot": "Done, I forgot: {contents}.",
        "not_forgotten": "I could not forget that: {message}",
        "known": "Here is what I know about you:",
        "more": "…and {count} more notes I can look up with a search.",
        "more_one": "…and {count} more note I can look up with a search.",
        "nothing_known": (
            "I don't know anything about you yet. Tell me “remember that …” and I will."
        ),
        "help": (
            "I am a scripted demo, not a language model. Try: “remember that I prefer tea”, "
            "“call me Sasha”, “what do you know about me?” or “forget tea”."
        ),
        "summary": "Earlier in this chat: {points}.",
    },
    "ru": {
        "about_me": "Обо мне",
        "preferences": "Предпочтения",
        "name": "Имя",
        "says": "Говорит: «{text}»",
        "call_me": "Просит называть себя: {name}",
        "called": "Приятно познакомиться, {name}! Буду так вас называть.",
        "saved": "Понял, запомню: «{content}».",
        "not_saved": "Не получилось сохранить: {message}",
        "nothing_to_forget": "В памяти нет ничего про «{query}».",
        "forgot": "Готово, забыл: {contents}.",
        "not_forgotten": "Не получилось забыть: {message}",
        "known": "Вот что я о вас знаю:",
        "more": "…и ещё {count} заметок, их можно найти поиском.",
        "more_one": "…и ещё {count} заметка, её можно найти поиском.",
        "more_few": "…и ещё {count} заметки, их можно найти поиском.",
        "nothing_known": "Я пока ничего о вас не знаю. Скажите «запомни, что …», и я запомню.",
        "help": (
            "Я сценарий для демонстрации, а не языковая модель. Попробуйте: «запомни, что я "
            "люблю чай», «зови меня Саша», «что ты обо мне знаешь?» или «забудь про чай»."
        ),
        "summary": "Ранее в этом чате: {points}.",
    },
}

# How the notes this agent writes for "call me …" begin, in either language: a new name
# replaces the old note instead of piling up beside it.
CALLED_PREFIXES = tuple(phrases["call_me"].split("{name}")[0] for phrases in PHRASES.values())

SERVICE_BLOCK = re.compile(r"<agent_memory>.*?(?:</agent_memory>|\Z)", re.S)
NOTE_LINE = re.compile(
    r'<note\s+key="memory:(?P<id>\d+)"(?P<attrs>[^>]*)>(?P<text>.*?)</note>', re.S
)
GONE_LINE = re.compile(r'\[No longer valid: "memory:(?P<id>\d+)"\]')
MORE_LINE = re.compile(r"\[(?P<count>\d+) more notes? not shown")
ATTRIBUTE = re.compile(r'(\w+)="([^"]*)"')

_call_numbers = count(1)


def language_of(text: str) -> str:
    return "ru" if re.search(r"[а-яё]", text, re.I) else "en"


def question_text(content: str) -> str:
    """The person's own words: the message without the memory text added to it."""
    text = SERVICE_BLOCK.sub("", content)
    lines = [
        line
        for line in text.splitlines()
        if not line.lstrip().startswith(("<note ", "[No longer valid", "[Not shown"))
    ]
    return "\n".join(lines).strip()


def tidy(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip().rstrip(".!?…").strip()
    return text[:1].upper() + text[1:]


# --- notes about the person, in the third person ----------------------------------------------

# English: what follows "I" at the start, and what it becomes ("I prefer tea" → "Prefers tea").
EN_IRREGULAR = {
    "am": "is",
    "'m": "is",
    "have": "has",
    "'ve": "has",
    "do": "does",
    "go": "goes",
    "was": "was",
    "'d": "would",
    "'ll": "will",
}
EN_MODALS = {"can", "could", "will", "would", "should", "must", "may", "might", "shall"}
EN_PAST = {
    "went",
    "had",
    "did",
    "got",
    "made",
    "took",
    "saw",
    "came",
    "left",
    "bought",
    "met",
    "grew",
    "became",
    "began",
    "wrote",
    "lost",
    "won",
    "gave",
    "found",
    "thought",
    "told",
    "ran",
    "spent",
}
EN_ADVERBS = {"really", "usually", "always", "never", "often", "sometimes", "also", "still", "just"}
EN_OBJECTS = [
    (re.compile(r"\bI'm\b"), "they're"),
    (re.compile(r"\bI am\b"), "they are"),
    (re.compile(r"\bI was\b"), "they were"),
    (re.compile(r"\bI\b"), "they"),
    (re.compile(r"\bmyself\b", re.I), "themselves"),
    (re.compile(r"\bmy\b", re.I), "their"),
    (re.compile(r"\bmine\b", re.I), "theirs"),
    (re.compile(r"\bme\b", re.I), "them"),
]

# Russian verbs in the first person that do not follow the regular endings below.
RU_IRREGULAR = {
    "хочу": "хочет",
    "могу": "может",
    "живу": "живёт",
    "пью": "пьёт",
    "ем": "ест",
    "иду": "идёт",
    "хожу": "ходит",
    "езжу": "ездит",
    "вожу": "водит",
    "сижу": "сидит",
    "вижу": "видит",
    "пишу": "пишет",
    "ношу": "носит",
    "прошу": "просит",
    "сплю": "спит",
    "учусь": "учится",
    "жду": "ждёт",
    "беру": "берёт",
    "даю": "даёт",
    "встаю": "встаёт",
    "еду": "едет",
    "плыву": "плывёт",
    "несу": "несёт",
    "веду": "ведёт",
    "пеку": "печёт",
    "буду": "будет",
}
RU_ENDINGS = [  # (first person, third person), longest first
    ("аюсь", "ается"),
    ("яюсь", "яется"),
    ("уюсь", "уется"),
    ("юсь", "ится"),
    ("усь", "ится"),
    ("аю", "ает"),
    ("яю", "яет"),
    ("ею", "еет"),
    ("ую", "ует"),
    ("блю", "бит"),
    ("плю", "пит"),
    ("влю", "вит"),
    ("млю", "мит"),
    ("флю", "фит"),
    ("лю", "лит"),
    ("рю", "рит"),
    ("ню", "нит"),
]
RU_ADVERBS = {
    "очень",
    "всегда",
    "никогда",
    "обычно",
    "часто",
    "иногда",
    "тоже",
    "также",
    "не",
    "ещё",
}
# "у меня есть собака" → "Есть собака": the person is the note's subject, so "у меня" goes.
RU_LEADS = re.compile(r"^(?:у\s+меня|мне)\s+", re.I)
# First-person words left inside the text (their third-person form would need a gender).
RU_FIRST_PERSON = re.compile(
    r"(?<![\w-])(?:я|мне|меня|мной|мой|моя|моё|мое|мои|моих|моим)(?![\w-])", re.I
)


def third_person(text: str, language: str) -> str:
    """A note about the person from their own words: "I prefer tea" → "Prefers tea",
    «я люблю чай» → «Любит чай». Words the demo cannot turn are quoted as the person said
    them ("Says: “…”"), so a note never reads as the agent's own taste."""
    turned = (_third_person_ru if language == "ru" else _third_person_en)(text)
    if turned is None:
        return PHRASES[language]["says"].format(text=text)
    return tidy(turned)


def _third_person_en(text: str) -> str | None:
    words = text.split(" ")
    head = words[0].casefold().replace("’", "'")
    rest = words[1:]
    if head in ("i'm", "i've", "i'd", "i'll"):
        head, rest = "i", [head[1:], *rest]
    if head == "my":
        return _en_objects(" ".join(rest))
    if head != "i":
        return _en_objects(text)
    if not rest:
        return None
    adverbs = []
    while rest and rest[0].casefold() in EN_ADVERBS:
        adverbs.append(rest.pop(0))
    if not rest:
        return None
    verb, rest = rest[0], rest[1:]
    lower = verb.casefold()
    if lower in ("don't", "do") and rest and (lower == "don't" or rest[0] == "not"):
        verb = "doesn't" if lower == "don't" else "does"
    elif lower in EN_IRREGULAR:
        verb = EN_IRREGULAR[lower]
    elif lower in EN_MODALS or lower in EN_PAST or lower.endswith(("n't", "ed")):
        pass
    elif re.search(r"(s|sh|ch|x|z|o)$", lower):
        verb += "es"
    elif re.search(r"[^aeiou]y$", lower):
        verb = verb[:-1] + "ies"
    else:
        verb += "s"
    return _en_objects(" ".join([*adverbs, verb, *rest]))


def _en_objects(text: str) -> str:
    for pattern, replacement in EN_OBJECTS:
        text = pattern.sub(replacement, text)
    return text


def _third_person_ru(text: str) -> str | None:
    text = RU_LEADS.sub("", text)
    words = text.split(" ")
    if words[0].casefold() in ("мой", "моя", "моё", "мое", "мои") and len(words) > 1:
        return _ru_checked(" ".join(words[1:]))
    if words[0].casefold() != "я":
        return _ru_checked(text)
    rest = words[1:]
    lead = []
    while rest and rest[0].casefold() in RU_ADVERBS:
        lead.append(rest.pop(0))
    if not rest:
        return None
    verb = rest[0].casefold()
    turned = RU_IRREGULAR.get(verb) or next(
        (verb[: -len(first)] + third for first, third in RU_ENDINGS if verb.endswith(first)), None
    )
    if turned is None:
        # No verb to turn ("я вегетарианец", "я из Казани"): the rest is about the person.
        if re.search(r"(?:ю|у|юсь|усь)$", verb):
            return None
        return _ru_checked(" ".join([*lead, *rest]))
    return _ru_checked(" ".join([*lead, turned, *rest[1:]]))


def _ru_checked(text: str) -> str | None:
    return None if RU_FIRST_PERSON.search(text) else text


class DemoAgent:
    """A scripted agent that speaks chat completions with tool calls (no network)."""

    label = "Demo agent"
    is_demo = True
    name = "demo"

    def __init__(self, **options: Any) -> None:
        self.options = options

    # --- the chat -------------------------------------------------------------------------

    def chat(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] = ()
    ) -> Reply:
        """Answer the last question, calling ``manage_memory`` like a model would."""
        last_user = max(
            (i for i, message in enumerate(messages) if message.get("role") == "user"), default=-1
        )
        question = (
            question_text(str(messages[last_user].get("content") or "")) if last_user >= 0 else ""
        )
        language = language_of(question)
        say = PHRASES[language]
        steps = tool_steps(messages[last_user + 1 :])
        has_tool = any(tool_name(tool) == TOOL for tool in tools)

        for lang, pattern in CALL_ME:
            match = pattern.match(question)
            if match and has_tool:
                return self._call_me(tidy(match["name"]), PHRASES[lang], messages, steps)
        for lang, pattern in REMEMBER:
            match = pattern.match(question)
            if match and has_tool:
                say = PHRASES[lang]
                return self._remember(third_person(tidy(match["text"]), lang), say, steps)
        for lang, pattern in FORGET:
            match = pattern.match(question)
            if match and has_tool:
                say = PHRASES[lang]
                return self._forget(tidy(match["text"]), say, steps)
        for lang, pattern in WHAT_DO_YOU_KNOW:
            if pattern.search(question):
                return Reply(content=self._what_i_know(messages, PHRASES[lang]))
        return Reply(content=say["help"])

    def _remember(self, content: str, say: dict[str, str], steps: list[tuple]) -> Reply:
        if not steps:
            category = say["preferences"] if PREFERENCE_WORDS.search(content) else say["about_me"]
            return call(
                {"action": "create", "notes": [{"categories": [category], "content": content}]}
            )
        result = steps[-1][1]
        if "error" in result:
            return Reply(content=say["not_saved"].format(message=result["error"]["message"]))
        saved = [note["content"] for note in result.get("notes", [])] or [content]
        return Reply(content=say["saved"].format(content=saved[0]))

    def _call_me(
        self,
        name: str,
        say: dict[str, str],
        messages: Sequence[Mapping[str, Any]],
        steps: list[tuple],
    ) -> Reply:
        """Save how the person wants to be called; a name said before is replaced, not kept
        beside the new one."""
        if not steps:
            content = say["call_me"].format(name=name)
            known, _hidden = known_versions(messages)
            earlier = [
                (note_id, version)
                for note_id, (text, version) in known.items()
                if text.startswith(CALLED_PREFIXES)
            ]
            if earlier:
                note_id, version = earlier[0]
                return call(
                    {
                        "action": "update",
                        "id": f"memory:{note_id}",
                        "version": version,
                        "categories": [say["name"]],
                        "content": content,
                    }
                )
            return call(
                {"action": "create", "notes": [{"categories": [say["name"]], "content": content}]}
            )
        result = steps[-1][1]
        if "error" in result:
            return Reply(content=say["not_saved"].format(message=result["error"]["message"]))
        return Reply(content=say["called"].format(name=name))

    def _forget(self, query: str, say: dict[str, str], steps: list[tuple]) -> Reply:
        if not steps:
            return call({"action": "search", "query": query})
        arguments, result = steps[-1]
        if "error" in result:
            return Reply(content=say["not_forgotten"].format(message=result["error"]["message"]))
        if arguments.get("action") == "search":
            found = result.get("notes") or []
            if not found:
                return Reply(content=say["nothing_to_forget"].format(query=query))
            exact = [note for note in found if query.casefold() in note["content"].casefold()]
            return call(
                *(
                    {"action": "delete", "id": note["id"], "version": note["version"]}
                    for note in (exact or found[:1])
                )
            )
        # The deletes are done: name what was forgotten, from the search result.
        searched: dict[str, Any] = next(
            (res for args, res in steps if args.get("action") == "search"), {}
        )
        deleted = {res.get("deleted") for _args, res in steps if "deleted" in res}
        contents = [
            f"“{note['content']}”" for note in searched.get("notes", []) if note["id"] in deleted
        ]
        return Reply(content=say["forgot"].format(contents=", ".join(contents) or query))

    def _what_i_know(self, messages: Sequence[Mapping[str, Any]], say: dict[str, str]) -> str:
        known, hidden = known_notes(messages)
        if not known:
            return say["nothing_known"]
        lines = [say["known"], *(f"- {text}" for text in known.values())]
        if hidden:
            lines.append(say[plural_key(hidden, say)].format(count=hidden))
        return "\n".join(lines)

    # --- compaction and the optimizer -----------------------------------------------------

    def summarize(self, transcript: Sequence[tuple[str, str]]) -> str:
        """A scripted summary: the person's questions, in order."""
        questions = [tidy(text) for role, text in transcript if role == "user" and text.strip()]
        language = language_of(" ".join(questions))
        points = "; ".join(f"“{q[:120]}”" for q in questions) or "—"
        return PHRASES[language]["summary"].format(points=points)

    def complete(self, messages: list[dict[str, Any]]) -> str:
        """Optimizer backend: merge only notes equal ignoring case and spaces.

        The notes are read from the person's messages (the optimizer's prompt lists them as
        JSON lines or ``<note>`` lines); the merged note keeps the first note's text and the
        categories of all of them (at most three).
        """
        text = "\n".join(
            str(message.get("content") or "")
            for message in messages
            if message.get("role") == "user"
        )
        groups: dict[str, list[dict[str, Any]]] = {}
        for note in notes_in_prompt(text):
            key = "".join(note["content"].casefold().split())
            groups.setdefault(key, []).append(note)
        proposals = []
        for same in groups.values():
            if len({note["id"] for note in same}) < 2:
                continue
            categories: list[str] = []
            for note in same:
                for category in note["categories"]:
                    if category.casefold() not in {c.casefold() for c in categories}:
                        categories.append(category)
            proposals.append(
                {
                    "ids": [f"memory:{note['id']}" for note in same],
                    "categories": categories[:3],
                    "content": same[0]["content"],
                }
            )
        return json.dumps({"groups": proposals}, ensure_ascii=False)


def call(*arguments: Mapping[str, Any]) -> Reply:
    return Reply(
        tool_calls=tuple(
            ToolCall(id=f"call_demo_{next(_call_numbers)}", name=TOOL, arguments=json.dumps(args))
            for args in arguments
        )
    )


def tool_name(tool: Mapping[str, Any]) -> str:
    return str(tool.get("function", {}).get("name") or tool.get("name") or "")


def tool_steps(messages: Sequence[Mapping[str, Any]]) -> list[tuple[dict, dict]]:
    """``[(arguments, result)]`` of the memory tool calls made since the question."""
    arguments: dict[str, dict] = {}
    steps = []
    for message in messages:
        for part in message.get("tool_calls") or ():
            function = part.get("function", {})
            if function.get("name") == TOOL:
                arguments[part["id"]] = loads(function.get("arguments"))
        if message.get("role") == "tool" and message.get("tool_call_id") in arguments:
            steps.append((arguments[message["tool_call_id"]], loads(message.get("content"))))
    return steps


def known_notes(messages: Sequence[Mapping[str, Any]]) -> tuple[dict[int, str], int]:
    """What the conversation tells about the person: memory text in the questions and the
    agent's own tool results. Returns ``({id: text}, hidden_count)``."""
    known, hidden = known_versions(messages)
    return {note_id: text for note_id, (text, _version) in known.items()}, hidden


def known_versions(
    messages: Sequence[Mapping[str, Any]],
) -> tuple[dict[int, tuple[str, int]], int]:
    """Like :func:`known_notes`, with each note's version: ``({id: (text, version)}, hidden)``."""
    known: dict[int, tuple[str, int]] = {}
    hidden = 0
    for message in messages:
        role = message.get("role")
        content = str(message.get("content") or "")
        if role == "user":
            for line in content.splitlines():
                if note := NOTE_LINE.search(line):
                    version = dict(ATTRIBUTE.findall(note["attrs"])).get("version", "1")
                    known[int(note["id"])] = (html.unescape(note["text"]), int(version))
                elif gone := GONE_LINE.search(line):
                    known.pop(int(gone["id"]), None)
                elif more := MORE_LINE.search(line):
                    hidden = int(more["count"])
        elif role == "tool":
            result = loads(content)
            found = [*(result.get("notes") or ()), result.get("note")]
            for note in found:
                if isinstance(note, dict) and "id" in note:
                    known[int(note["id"])] = (note["content"], int(note.get("version") or 1))
            if "deleted" in result:
                known.pop(int(result["deleted"]), None)
    return known, hidden


def notes_in_prompt(text: str) -> list[dict[str, Any]]:
    """Notes in the optimizer's prompt, as ``<note key=…>`` lines or as JSON objects."""
    notes = []
    for match in NOTE_LINE.finditer(text):
        attributes = dict(ATTRIBUTE.findall(match["attrs"]))
        categories = [
            html.unescape(part).strip()
            for part in attributes.get("categories", "").split(" / ")
            if part.strip()
        ]
        notes.append(
            {
                "id": int(match["id"]),
                "categories": categories,
                "content": html.unescape(match["text"]),
            }
        )
    if notes:
        return notes
    for candidate in re.finditer(r"\{[^{}]*\}", text):
        item = loads(candidate.group(0))
        if "content" in item and "id" in item:
            number = str(item["id"]).removeprefix("memory:")
            if number.isdigit():
                notes.append(
                    {
                        "id": int(number),
                        "categories": list(item.get("categories") or []),
                        "content": str(item["content"]),
                    }
                )
    return notes


def loads(text: Any) -> dict:
    if isinstance(text, dict):
        return text
    try:
        value = json.loads(text or "{}")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
