"""The rules a proposed merge must pass before it is applied, in plain Python.

The model only proposes; this module decides. A group is rejected, with a reason, unless:

- it names 2 or more distinct ids, all current notes of this person, none named by another group;
- its categories are valid and drawn from the sources' categories;
- its content is a valid note (length, no secrets);
- nothing is lost: every number, date, time, e-mail, URL and proper name of every source is in
  the merged text (Russian and English);
- polarity holds: sources that disagree ("likes coffee" / "doesn't like coffee") are never
  merged, and what a source negates stays negated in the merged text;
- the merged text does not duplicate a note outside the group.

The heuristics lean towards rejecting: a merge that is wrongly refused costs nothing (the notes
stay as they were), one that is wrongly applied loses what the person told the agent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import rules
from ..errors import InvalidNote
from ..kinds import NoteSource
from ..notes import NewNote, Note
from ..search import stem
from . import reasons
from .reasons import reason


@dataclass(frozen=True)
class Verdict:
    """What the checker decided about one proposed group."""

    index: int
    ids: tuple[int, ...]
    note: NewNote | None = None
    code: str = ""
    reason: str = ""

    @property
    def accepted(self) -> bool:
        return self.note is not None

    def as_rejection(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "ids": list(self.ids),
            "code": self.code,
            "reason": self.reason,
        }


def _reject(index: int, ids: Iterable[int], code: str, reason: str) -> Verdict:
    return Verdict(index=index, ids=tuple(ids), code=code, reason=reason)


# --- the whole proposal -----------------------------------------------------------------------


def check_groups(groups: Sequence[Any], notes: Sequence[Note]) -> list[Verdict]:
    """Check every proposed group against the person's ``notes``; one verdict per group."""
    id_lists = [_group_ids(group) for group in groups]
    seen: dict[int, int] = {}
    shared: set[int] = set()
    for ids in id_lists:
        for note_id in set(ids or ()):
            if note_id in seen:
                shared.add(note_id)
            seen[note_id] = seen.get(note_id, 0) + 1
    current = {note.id for note in notes}
    verdicts = []
    for index, group in enumerate(groups):
        ids = id_lists[index]
        # A note this person does not have is reported as unknown, even when two groups name it.
        if ids is not None and shared & set(ids) and set(ids) <= current:
            twice = ", ".join(f"memory:{note_id}" for note_id in sorted(shared & set(ids)))
            verdicts.append(_reject(index, ids, "overlap", reason(reasons.OVERLAP, ids=twice)))
            continue
        verdicts.append(check_group(index, group, notes))
    return verdicts


def _group_ids(group: Any) -> list[int] | None:
    if not isinstance(group, Mapping) or not isinstance(group.get("ids"), list):
        return None
    parsed = [rules.parse_note_id(value) for value in group["ids"]]
    if any(value is None for value in parsed):
        return None
    return [value for value in parsed if value is not None]


def check_group(index: int, group: Any, notes: Sequence[Note]) -> Verdict:
    """Check one proposed group ``{"ids", "categories", "content"}``."""
    ids = _group_ids(group)
    if ids is None or not isinstance(group, Mapping):
        return _reject(index, [], "shape", reason(reasons.SHAPE))
    distinct = tuple(dict.fromkeys(ids))
    if len(distinct) < 2:
        return _reject(index, distinct, "too_few", reason(reasons.TOO_FEW))
    by_id = {note.id: note for note in notes}
    unknown = [note_id for note_id in distinct if note_id not in by_id]
    if unknown:
        listed = ", ".join(f"memory:{note_id}" for note_id in unknown)
        return _reject(index, distinct, "unknown_note", reason(reasons.UNKNOWN_NOTE, ids=listed))
    sources = [by_id[note_id] for note_id in distinct]
    pinned = [source.key for source in sources if source.pinned]
    if pinned:
        # The model is never sent a pinned note, but it may name one it guessed.
        return _reject(index, distinct, "pinned", reason(reasons.PINNED, ids=", ".join(pinned)))
    try:
        categories = rules.clean_categories(group.get("categories"))
    except InvalidNote as error:
        return _reject(index, distinct, "categories", error.message)
    allowed = {name.casefold() for source in sources for name in source.categories}
    invented = [name for name in categories if name.casefold() not in allowed]
    if invented:
        return _reject(
            index,
            distinct,
            "categories",
            reason(reasons.INVENTED_CATEGORIES, names=", ".join(invented)),
        )
    try:
        content = rules.clean_content(group.get("content"))
    except InvalidNote as error:
        return _reject(index, distinct, "content", error.message)
    lost = lost_details([source.content for source in sources], content)
    if lost:
        return _reject(
            index, distinct, "lost_detail", reason(reasons.LOST_DETAIL, details=", ".join(lost))
        )
    polarity = polarity_problem([source.content for source in sources], content)
    if polarity:
        return _reject(index, distinct, "polarity", polarity)
    others = [note for note in notes if note.id not in distinct]
    duplicate = rules.find_duplicate(categories, content, others)
    if duplicate is not None:
        return _reject(
            index,
            distinct,
            "duplicate",
            reason(reasons.DUPLICATE, key=duplicate.key),
        )
    return Verdict(
        index=index,
        ids=distinct,
        note=NewNote(categories=categories, content=content, source=NoteSource.MERGE),
    )


# --- nothing lost -----------------------------------------------------------------------------

_EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", re.UNICODE)
_URL_RE = re.compile(
    r"(?:https?://|www\.)[^\s<>\"'«»]+|\b[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|ru|рф|app|ai)"
    r"(?:/[^\s<>\"'«»]*)?",
    re.IGNORECASE | re.UNICODE,
)
_NUMBER_RE = re.compile(r"\d+")
_TIME_SUFFIX_RE = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s?m\b\.?", re.IGNORECASE)
_WORD_RE = re.compile(r"[^\W\d_](?:[^\W\d_]|['’\-][^\W\d_])*", re.UNICODE)
_SENTENCE_END_RE = re.compile(r"[.!?…:;]\s*$|^\s*$|[\"«(\-—–]\s*$")

# Month and weekday stems: "12 March" and "12 April" keep the digits but not the date.
_DATE_WORD_STEMS = frozenset(
    [
        stem(word)
        for word in (
            "january february march april may june july august september october november "
            "december jan feb mar apr jun jul aug sep sept oct nov dec "
            "monday tuesday wednesday thursday friday saturday sunday "
            "январь февраль март апрель май июнь июль август сентябрь октябрь ноябрь декабрь "
            "января февраля марта апреля мая июня июля августа сентября октября ноября декабря "
            "понедельник вторник среда среду четверг пятница пятницу суббота субботу "
            "воскресенье понедельникам вторникам средам четвергам пятницам субботам "
            "воскресеньям"
        ).split()
    ]
)

# Words that start a note's sentence without being names ("Likes tea", "Живёт в Казани").
_COMMON_STARTERS = frozenset(
    """
    a an the i he she they we you it this that these those his her their our my your its
    is are was were be been has have had do does did don't doesn't didn't isn't aren't can't
    cannot won't will would should could can may might must not no never always usually often
    sometimes also and but or so if when while after before since until as at in on by for from
    with without to of about into over under please prefers prefer likes like loves love enjoys
    enjoy hates hate dislikes dislike avoids avoid wants want needs need uses use works work lives
    live drinks drink eats eat plays play speaks speak reads read writes write goes go runs run
    owns own knows know keeps keep studies study takes take gets get makes make feels feel thinks
    think has had person user they'd he's she's favourite favorite allergic vegetarian vegan
    born married moved moving planning plans plan travels travel visits visit learning learns
    learn started starts stopped stops quit gave wakes wake sleeps sleep teaches teach went going
    call calls address reply answer respond write tell show use keep remember note mother father
    wife husband son daughter sister brother friend colleague boss partner dog cat kids children
    her him them there here now today tomorrow yesterday every each all any some both either
    neither nor only just still already yet new old
    phone mobile email e-mail mail address birthday name editor ide os laptop computer car
    job title role team company employer salary budget hobby hobbies goal goals plan note
    home office city country timezone time zone language languages diet allergy allergies
    meeting meetings call calls flight trip holiday vacation appointment deadline project repo
    он она они мы вы я ты его её ее их мой моя мое моё мои наш наша наши ваш ваша это этот эта
    эти тот та те у в на с со к ко о об от до по за из под над при для без про через
    и а но или да нет не ни никогда всегда обычно часто иногда тоже также уже ещё еще только
    любит нравится нравятся обожает предпочитает ненавидит избегает хочет живёт живет работает
    пьёт пьет ест играет говорит читает пишет ездит ходит бегает знает держит учит учится
    занимается пользуется использует просит попросил попросила зовут называть обращаться
    отвечать пиши пишите говори обращайся называй аллергия вегетарианец вегетарианка родился
    родилась женат замужем переехал переехала планирует собирается путешествует бросил бросила
    перестал перестала начал начала встаёт встает ложится спит мама папа мать отец жена муж сын
    дочь сестра брат друг подруга коллега начальник собака кошка кот дети ребёнок ребенок
    сейчас сегодня завтра вчера каждый каждое каждую каждые все всё любой любую любые
    любимый любимая любимое любимые предпочитаемый важно нужно надо можно нельзя когда если
    после перед пока потому так как где куда
    телефон мобильный почта адрес день рождения имя редактор ноутбук компьютер машина
    должность роль команда компания зарплата бюджет хобби цель цели план заметка дом офис
    город страна часовой пояс язык языки диета встреча встречи звонок рейс поездка отпуск
    запись дедлайн проект репозиторий никакого никакой никакая никакие никаких ничего никому
    """.split()
)


def _normalise(text: str) -> str:
    return text.replace("’", "'").replace("ё", "е").replace("Ё", "Е")


def _urls(text: str) -> set[str]:
    found = set()
    for match in _URL_RE.finditer(text):
        value = match.group(0).rstrip(".,;:!?)»").casefold()
        value = re.sub(r"^https?://", "", value)
        value = re.sub(r"^www\.", "", value).rstrip("/")
        if "@" not in value:
            found.add(value)
    return found


def _times(text: str) -> set[str]:
    return {
        f"{int(hour)}:{minutes or '00'}{half.lower()}m"
        for hour, minutes, half in _TIME_SUFFIX_RE.findall(text)
    }


# Numbers written as words: "two cats" and "three cats" differ as much as "2" and "3".
_NUMBER_WORD_STEMS = frozenset(
    [
        stem(word)
        for word in (
            "two three four five six seven eight nine ten eleven twelve thirteen fourteen "
            "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy "
            "eighty ninety hundred thousand million billion dozen twice "
            "два две двух трёх три четыре четырёх пять пяти шесть семь восемь девять десять "
            "одиннадцать двенадцать пятнадцать двадцать тридцать сорок пятьдесят сто двести "
            "тысяча тысячи тысяч миллион двое трое четверо пятеро полтора дважды трижды"
        )
        .replace("ё", "е")
        .split()
    ]
)
_DETAIL_WORD_STEMS = _DATE_WORD_STEMS | _NUMBER_WORD_STEMS
_CURRENCY_RE = re.compile(r"[$€£₽¥₴₸]")


def _date_word_stems(text: str) -> set[str]:
    return {stem(word.casefold()) for word in _WORD_RE.findall(text)} & _DETAIL_WORD_STEMS


def proper_names(text: str) -> list[str]:
    """Words that look like proper names: capitalised mid-sentence, all-caps abbreviations,
    Latin-script names inside Russian text, and capitalised sentence starters that are not
    common words."""
    text = _normalise(text)
    names = []
    for match in _WORD_RE.finditer(text):
        first_part = True
        offset = match.start()
        for word in match.group(0).split("-"):
            if word and word[0].isupper() and word != "I":
                if _is_name(text, offset, word, first_part):
                    names.append(word)
            offset += len(word) + 1
            first_part = False
    return names


def _is_name(text: str, start: int, word: str, first_part: bool) -> bool:
    before = text[:start]
    starts_sentence = first_part and bool(_SENTENCE_END_RE.search(before))
    if starts_sentence:
        bare = word.casefold()
        if bare in _COMMON_STARTERS or bare.split("'")[0] in _COMMON_STARTERS:
            return False
        if len(word) > 1 and word[1:].islower() and _looks_like_verb(bare):
            return False
    return True


def _looks_like_verb(word: str) -> bool:
    # Russian third-person verbs and English "-s" verbs rarely are names; leave ambiguous
    # words (Paris, James) as names, which only makes the check stricter.
    if re.search(r"[а-я]", word):
        return bool(re.search(r"(ет|ит|ют|ят|ает|яет|ится|ется|ются|ятся|ал|ала|ил|ила)$", word))
    return bool(re.search(r"(ies|es|ed|ing)$", word))


def _name_key(word: str) -> str:
    bare = re.sub(r"'s$", "", _normalise(word).casefold())
    return stem(bare)


def lost_details(sources: Sequence[str], merged: str) -> list[str]:
    """What of ``sources`` the ``merged`` text does not keep (numbers in digits or words,
    currency signs, dates, times, e-mails, URLs, proper names), in the order first seen."""
    merged_norm = _normalise(merged)
    merged_folded = merged_norm.casefold()
    merged_numbers = set(_NUMBER_RE.findall(merged_norm))
    merged_emails = {value.casefold() for value in _EMAIL_RE.findall(merged_norm)}
    merged_urls = _urls(merged_norm)
    merged_times = _times(merged_norm)
    merged_dates = _date_word_stems(merged_norm)
    merged_words = {_name_key(word) for word in _WORD_RE.findall(merged_norm)}
    lost: dict[str, None] = {}
    for source in sources:
        text = _normalise(source)
        for email in _EMAIL_RE.findall(text):
            if email.casefold() not in merged_emails:
                lost[email] = None
        without_emails = _EMAIL_RE.sub(" ", text)
        for url in _urls(without_emails):
            if url not in merged_urls and url not in merged_folded:
                lost[url] = None
        for number in _NUMBER_RE.findall(text):
            if number not in merged_numbers:
                lost[number] = None
        for time in _times(text) - merged_times:
            lost[time] = None
        for word in _WORD_RE.findall(text):
            key = stem(word.casefold())
            if key in _DETAIL_WORD_STEMS and key not in merged_dates:
                lost[word] = None
        for symbol in set(_CURRENCY_RE.findall(text)) - set(_CURRENCY_RE.findall(merged_norm)):
            lost[symbol] = None
        for name in proper_names(without_emails):
            if _name_key(name) not in merged_words and name.casefold() not in merged_folded:
                lost[name] = None
    return list(lost)


# --- polarity ---------------------------------------------------------------------------------

# Words and clause breaks, so a negation's scope can end at ",", ";", "but", "но"...
_TOKEN_RE = re.compile(r"[^\W_]+(?:'[^\W_]+)?|[,;.!?:()—–]", re.UNICODE)

_NEGATORS = frozenset(
    """
    not no never nothing nobody none neither nor without cannot nowhere
    не ни нет никогда ничего никто нигде нельзя без никакой никакого никакая никакие никаких
    никому нисколько
    """.split()
)
# Verbs that carry a negative stance on their object: "hates coffee" is "doesn't like coffee".
_NEGATIVE_VERBS = frozenset(
    stem(word)
    for word in """
    hate hates hated dislike dislikes disliked detest detests avoid avoids avoided refuse refuses
    refused stopped quit ненавидит ненавижу избегает отказался отказалась бросил бросила перестал
    перестала терпеть
    """.split()
)
_LIKE_STEMS = frozenset(
    stem(word)
    for word in """
    like likes liked love loves loved enjoy enjoys enjoyed prefer prefers preferred adore adores
    любит люблю любила любил нравится нравятся нравилось обожает предпочитает
    hate hates hated dislike dislikes disliked detest detests ненавидит ненавижу
    """.split()
)
_LIKE = "<like>"
# Words skipped when reading what a negation applies to.
_FILLERS = frozenset(
    """
    a an the to do does did be is are was were been at all any really very much more so too
    of in on for with it its his her their my your our this that or and after before until
    since during from by
    к в на с со по за у о об от до из и а же бы ли очень совсем вообще никак особо слишком
    после перед раньше позже
    """.split()
)
# Where a negation's scope ends.
_CLAUSE_BREAKS = frozenset(", ; . ! ? : ( ) — – but however only instead а но зато только".split())
_WINDOW = 2


def _tokens(text: str) -> list[str]:
    return [token.casefold() for token in _TOKEN_RE.findall(_normalise(text))]


def _is_negator(token: str) -> bool:
    return token in _NEGATORS or token.endswith("n't")


def _negates(token: str) -> bool:
    return _is_negator(token) or stem(token) in _NEGATIVE_VERBS


def _concept(token: str) -> str:
    key = stem(token)
    return _LIKE if key in _LIKE_STEMS else key


def _content(token: str) -> bool:
    return token not in _FILLERS and token not in _CLAUSE_BREAKS


# Negations that are prepositions or determiners: they deny only what follows them ("tea
# without sugar" denies the sugar, not the tea; "чай без сахара"), never a word before them.
_FORWARD_ONLY = frozenset("without no без".split())


def _fronted_object(tokens: list[str], position: int) -> int | None:
    """In "кофе не любит" the object comes before the negation: if a negation is followed by
    at most one content word in its clause, the content word just before it (same clause) is
    negated too. Not for "without" / "без" / "no", whose scope is only what follows."""
    if tokens[position] in _FORWARD_ONLY:
        return None
    after = 0
    for following in tokens[position + 1 :]:
        if following in _CLAUSE_BREAKS or _negates(following):
            break
        after += _content(following)
    if after > 1:
        return None
    for index in range(position - 1, -1, -1):
        token = tokens[index]
        if token in _CLAUSE_BREAKS or _negates(token):
            return None
        if _content(token):
            return index
    return None


def negated_heads(text: str) -> set[str]:
    """What ``text`` denies: the first content words after each negation (and "like" for
    "hates"-like verbs)."""
    tokens = _tokens(text)
    heads: set[str] = set()
    for position, token in enumerate(tokens):
        if not _negates(token):
            continue
        if stem(token) in _LIKE_STEMS:
            heads.add(_LIKE)
        fronted = _fronted_object(tokens, position)
        if fronted is not None:
            heads.add(_concept(tokens[fronted]))
        taken = 0
        for following in tokens[position + 1 :]:
            if taken >= _WINDOW or _negates(following) or following in _CLAUSE_BREAKS:
                break
            if _content(following):
                heads.add(_concept(following))
                taken += 1
    return heads


def _scopes(text: str) -> tuple[set[str], set[str]]:
    """``(negated, affirmed)``: concepts inside a negation's clause, and all the others."""
    tokens = _tokens(text)
    fronted = {
        index
        for position, token in enumerate(tokens)
        if _negates(token) and (index := _fronted_object(tokens, position)) is not None
    }
    negated: set[str] = set()
    affirmed: set[str] = set()
    inside = False
    for position, token in enumerate(tokens):
        if token in _CLAUSE_BREAKS:
            inside = False
            continue
        if _negates(token):
            inside = True
            if stem(token) in _LIKE_STEMS:
                negated.add(_LIKE)
            continue
        if _content(token):
            (negated if inside or position in fronted else affirmed).add(_concept(token))
    return negated, affirmed


def has_negation(text: str) -> bool:
    return any(_negates(token) for token in _tokens(text))


def polarity_problem(sources: Sequence[str], merged: str) -> str | None:
    """Why merging ``sources`` into ``merged`` would break polarity, or ``None``.

    Sources disagree when one denies what another affirms ("doesn't like coffee" / "likes coffee
    with milk"); the merged text must still deny everything a source denies, and must not deny
    what the sources affirm.
    """
    heads = [negated_heads(source) for source in sources]
    scopes = [_scopes(source) for source in sources]
    for i, denied in enumerate(heads):
        for j, (_, affirmed) in enumerate(scopes):
            # Source j disagrees with i on what i denies and j only affirms: a source that
            # denies it too ("likes tea, but not green tea" said twice) takes the same side.
            if i != j and ((denied - {_LIKE}) & affirmed) - heads[j]:
                return reasons.SOURCES_DISAGREE
    merged_negated, _ = _scopes(merged)
    if set().union(*heads) - merged_negated:
        return reasons.DROPS_NEGATION
    if not any(has_negation(source) for source in sources) and has_negation(merged):
        return reasons.ADDS_NEGATION
    source_negated: set[str] = set().union(*(negated for negated, _ in scopes))
    source_affirmed: set[str] = set().union(*(affirmed for _, affirmed in scopes))
    if (negated_heads(merged) - source_negated) & source_affirmed:
        return reasons.DENIES_AFFIRMED
    return None
