"""Text normalisation for the lost sheep: tokenise, drop stop-words, stem (PyStemmer).

Contract: :func:`analyze` turns a string into the list of stems the automaton reads, in text
order, duplicates kept (the automaton counts every word it reads, paper section "Lost sheep
description", steps 3.2-3.4 and 3.7-3.9).

Choice where the paper is vague: the paper stems *then* removes stop-words; we remove stop-words
on the lower-cased tokens first and then stem, because stop-word lists are written as surface
forms (stemming first would miss e.g. "was" -> "wa"). Tokens are maximal runs of letters
(Unicode-aware, so Norwegian "æøå" survive); digits and punctuation separate tokens.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from functools import lru_cache

import Stemmer

logger = logging.getLogger(__name__)

_TOKEN = re.compile(r"[^\W\d_]+", re.UNICODE)

STOP_WORDS: dict[str, frozenset[str]] = {
    "english": frozenset(
        """a about above after again against all am an and any are as at be because been before
        being below between both but by can could did do does doing down during each few for from
        further had has have having he her here hers herself him himself his how i if in into is
        it its itself just me more most my myself no nor not now of off on once only or other our
        ours ourselves out over own same she should so some such than that the their theirs them
        themselves then there these they this those through to too under until up very was we
        were what when where which while who whom why will with would you your yours yourself
        yourselves us""".split()
    ),
    "norwegian": frozenset(
        """og i jeg det at en et den til er som på de med han av ikke der så var meg seg men ett
        har om vi min mitt ha hadde hun nå over da ved fra du ut sin dem oss opp man kan hans
        hvor eller hva skal selv sjøl her alle vil bli ble blitt kunne inn når være kom noen noe
        ville dere deres kun ja etter ned skulle denne for deg si sine sitt mot å meget hvorfor
        dette disse uten hvordan ingen din ditt blir samme hvilken hvilke sånn inni mellom vår
        hver hvem vors hvis både bare enn fordi før mange også slik vært båe begge siden""".split()
    ),
}


@lru_cache(maxsize=8)
def _stemmer(language: str) -> Stemmer.Stemmer:
    return Stemmer.Stemmer(language)


def tokenize(text: str) -> list[str]:
    """Lower-cased letter runs of ``text``."""
    return _TOKEN.findall(text.lower())


def analyze(text: str, language: str = "english") -> list[str]:
    """Stems of ``text`` in order: tokenise, drop stop-words of ``language``, stem."""
    stop = STOP_WORDS.get(language, frozenset())
    tokens = [tok for tok in tokenize(text) if tok not in stop]
    return _stemmer(language).stemWords(tokens)


def query_stems(query: str | Iterable[str], language: str = "english") -> frozenset[str]:
    """The set of stems of a query given as a string or as a list of words."""
    text = query if isinstance(query, str) else " ".join(query)
    return frozenset(analyze(text, language))
