"""Polarity: sources that disagree are never merged, and a merged text keeps what they deny.

"likes coffee" and "doesn't like coffee" disagree; "tea without sugar" denies the sugar, not the
tea; "кофе не любит" denies the coffee before the negation. Plain Python over word stems, in
Russian and English; :func:`polarity_problem` is what the checker asks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..search import stem
from . import reasons
from .details import normalise

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
    return [token.casefold() for token in _TOKEN_RE.findall(normalise(text))]


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


__all__ = ["has_negation", "negated_heads", "polarity_problem"]
