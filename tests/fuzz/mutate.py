"""Mutations of a model output (text) and of a token-id sequence, as a reviewer makes them.

Text: a span deleted, text inserted (another format's marker, this format's marker, odd
Unicode, JSON and markup punctuation, words), a span duplicated, a marker broken (one
character changed, dropped or doubled; cut short), and rarely an oversized value (a number of
thousands of digits, arrays nested past a thousand levels, a name tens of thousands of
characters long). Ids: spans deleted, duplicated or moved, and ids inserted: valid ones
(ordinary, added tokens, byte tokens), odd ones and wrong ones.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

ODD_UNICODE = (
    "\ufffd",  # the replacement character
    "\u200b",  # zero-width space
    "\u200d",  # zero-width joiner
    "\u00a0",  # no-break space
    "\u2028",  # line separator
    "\u202e",  # right-to-left override
    "\ufeff",  # byte order mark
    "\x00",
    "\x1b",
    "\r\n",
    "\r",
    "\t",
    "e\u0301",  # a combining accent
    "\U0001f600",  # outside the BMP
    "\U000e0001",  # a tag character
    "｜",  # the fullwidth bar of DeepSeek's markers
    "▁",  # SentencePiece's space
    "\ud800",  # a lone surrogate
    "\udfff",
)
PUNCTUATION = ('"', "'", "\\", "{", "}", "[", "]", "<", ">", "/", ":", ",", "=", "\n", " ", "`", "&quot;", "\\u00")
WORDS = ("name", "arguments", "parameters", "null", "true", "0", "-1", "1e400", "NaN", "function", "x")


def _span(rng: random.Random, n: int, most: int = 24) -> tuple[int, int]:
    a = rng.randrange(0, n + 1)
    return a, min(n, a + rng.randint(1, most))


def _insertion(rng: random.Random, own: Sequence[str], others: Sequence[str]) -> str:
    roll = rng.random()
    if roll < 0.3 and own:
        return rng.choice(own)
    if roll < 0.55:
        return rng.choice(others)
    if roll < 0.75:
        return rng.choice(ODD_UNICODE)
    if roll < 0.92:
        return rng.choice(PUNCTUATION)
    return rng.choice(WORDS)


def _broken(rng: random.Random, marker: str) -> str:
    i = rng.randrange(len(marker))
    roll = rng.random()
    if roll < 0.3:
        return marker[:i] + rng.choice("Xx_ <>|/") + marker[i + 1 :]
    if roll < 0.55:
        return marker[:i] + marker[i + 1 :]
    if roll < 0.75:
        return marker[:i] + marker[i] + marker[i:]
    return marker[: max(1, i)]


def _oversized(rng: random.Random) -> str:
    return rng.choice(
        (
            "9" * rng.randint(4300, 6000),  # past Python's integer-string digit limit
            "[" * rng.randint(900, 1200) + "]" * rng.randint(900, 1200),  # past the C decoder's depth
            '{"a": ' * 1000 + "1" + "}" * 1000,
            "a" * rng.randint(20000, 40000),  # a name, key or attribute tens of thousands long
            "=" * 20000,
            " " * 20000,
        )
    )


def mutate(text: str, rng: random.Random, own: Sequence[str], others: Sequence[str]) -> tuple[str, list[str]]:
    """``text`` with one to three mutations; also the names of the mutations made."""
    done: list[str] = []
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
        n = len(text)
        roll = rng.random()
        present = [m for m in own if m in text]
        if roll < 0.2 and n:
            a, b = _span(rng, n)
            text = text[:a] + text[b:]
            done.append("delete")
        elif roll < 0.5:
            at = rng.randrange(0, n + 1)
            text = text[:at] + _insertion(rng, own, others) + text[at:]
            done.append("insert")
        elif roll < 0.65 and n:
            a, b = _span(rng, n, 60)
            at = rng.choice((b, rng.randrange(0, n + 1)))
            text = text[:at] + text[a:b] + text[at:]
            done.append("duplicate")
        elif roll < 0.9 and present:
            marker = rng.choice(present)
            starts = [i for i in range(len(text)) if text.startswith(marker, i)]
            at = rng.choice(starts)
            text = text[:at] + _broken(rng, marker) + text[at + len(marker) :]
            done.append("broken-marker")
        elif roll < 0.97 and n:
            a, b = _span(rng, n, 8)
            text = text[:a] + rng.choice(ODD_UNICODE) + text[b:]
            done.append("odd-unicode")
        else:
            at = rng.randrange(0, n + 1)
            text = text[:at] + _oversized(rng) + text[at:]
            done.append("oversized")
    return text, done


ODD_IDS: tuple[Any, ...] = (-1, -(2**31), 10**9, 2**64, 1.5, float("nan"), "12", None, True, b"1", [1])


def mutate_ids(
    ids: list[int], rng: random.Random, ordinary: int, added: Sequence[int], byte_ids: Sequence[int]
) -> tuple[list[Any], str]:
    """``ids`` mutated; also the kind: ``valid`` (every id is a token id), ``odd`` (an id that is
    not an integer or is negative, huge) or ``wrong`` (an integer past the vocabulary)."""
    ids = list(ids)
    for _ in range(rng.choice((1, 1, 2, 3))):
        n = len(ids)
        roll = rng.random()
        if roll < 0.2 and n:
            a, b = _span(rng, n, 6)
            del ids[a:b]
        elif roll < 0.35 and n:
            a, b = _span(rng, n, 6)
            at = rng.randrange(0, len(ids) + 1)
            ids[at:at] = ids[a:b]
        else:
            at = rng.randrange(0, n + 1)
            pick = rng.random()
            if pick < 0.35 and added:
                new = [rng.choice(added)]
            elif pick < 0.65 and byte_ids:
                new = [rng.choice(byte_ids) for _ in range(rng.randint(1, 4))]
            else:
                new = [rng.randrange(ordinary) for _ in range(rng.randint(1, 3))]
            ids[at:at] = new
    kind = "valid"
    roll = rng.random()
    if roll < 0.12:
        ids.insert(rng.randrange(0, len(ids) + 1), rng.choice(ODD_IDS))
        kind = "odd"
    elif roll < 0.18:
        ids.insert(rng.randrange(0, len(ids) + 1), ordinary + len(added) + rng.randint(0, 10**6))
        kind = "wrong"
    return ids, kind
