"""Normalised names: two ways of writing one name give the same key (SPEC 2.2, 14.3).

The labelling workbench's search (:mod:`er_expectations.labelling.search`) and the top-up
worksheet (:mod:`er_expectations.analysis.topup`) compare names the same way: a name is
folded (Unicode NFKD without accents, ``ß`` → ``ss``, ``ø`` → ``o``, …; case folded;
apostrophes dropped) and cut into tokens, and the token order is ignored ("Smith, John" is
"John Smith").
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["name_key", "name_tokens"]

_FOLD = str.maketrans({"ß": "ss", "ẞ": "ss", "ø": "o", "Ø": "o", "æ": "ae", "Æ": "ae", "œ": "oe", "Œ": "oe",
                       "ł": "l", "Ł": "l", "đ": "d", "Đ": "d", "ð": "d", "Ð": "d", "þ": "th", "Þ": "th",
                       "ı": "i", "'": None, "’": None, "`": None, "´": None})
_TOKEN = re.compile(r"[^\W_]+")


def name_tokens(text: object) -> list[str]:
    """The normalised tokens of a name: accents and case folded, apostrophes dropped, split on
    everything that is not a letter or digit ("O'Brien-Núñez" → ["obrien", "nunez"])."""
    if not isinstance(text, str):
        return []
    text = text.translate(_FOLD)
    if not text.isascii():
        text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return _TOKEN.findall(text.casefold())


def name_key(text: object) -> str:
    """The normalised name: its tokens sorted and joined by spaces ("Droz, Pierre-Yves" →
    "droz pierre yves"); two names are the same name when their keys are equal."""
    return " ".join(sorted(name_tokens(text)))
