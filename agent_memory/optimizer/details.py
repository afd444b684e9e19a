"""Nothing lost: the details of a note a merged text must keep, in plain Python.

Numbers (in digits or words), currency signs, dates, times, e-mails, URLs and proper names, in
Russian and English. :func:`lost_details` lists those of the sources a merged text drops; the
checker rejects such a merge.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..search import stem

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


def normalise(text: str) -> str:
    """``text`` with typographic apostrophes straight and «ё» as «е», as both checks compare it."""
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
    text = normalise(text)
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
    bare = re.sub(r"'s$", "", normalise(word).casefold())
    return stem(bare)


def lost_details(sources: Sequence[str], merged: str) -> list[str]:
    """What of ``sources`` the ``merged`` text does not keep (numbers in digits or words,
    currency signs, dates, times, e-mails, URLs, proper names), in the order first seen."""
    merged_norm = normalise(merged)
    merged_folded = merged_norm.casefold()
    merged_numbers = set(_NUMBER_RE.findall(merged_norm))
    merged_emails = {value.casefold() for value in _EMAIL_RE.findall(merged_norm)}
    merged_urls = _urls(merged_norm)
    merged_times = _times(merged_norm)
    merged_dates = _date_word_stems(merged_norm)
    merged_words = {_name_key(word) for word in _WORD_RE.findall(merged_norm)}
    lost: dict[str, None] = {}
    for source in sources:
        text = normalise(source)
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


__all__ = ["lost_details", "normalise", "proper_names"]
