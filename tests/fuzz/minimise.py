"""Shrinking a finding to a small input that still fails the same way (delta debugging).

``shrink(items, fails)`` removes chunks of the sequence (halves, then quarters, … single
elements) while ``fails`` still holds, within a budget of ``fails`` calls: the result is what
``regressions.jsonl`` keeps. Cost: at most ``budget`` replays of the finding's job.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def shrink(items: Sequence[T], fails: Callable[[Sequence[T]], bool], budget: int = 400) -> list[T]:
    """A shorter ``items`` for which ``fails`` still holds (``items`` itself must fail)."""
    current = list(items)
    chunk = max(1, len(current) // 2)
    calls = 0
    while chunk >= 1 and calls < budget:
        i = 0
        shrunk = False
        while i < len(current) and calls < budget:
            candidate = current[:i] + current[i + chunk :]
            calls += 1
            if candidate != current and fails(candidate):
                current = candidate
                shrunk = True
            else:
                i += chunk
        if not shrunk:
            if chunk == 1:
                break
            chunk //= 2
    return current
