"""Work measured by counting, not by a clock: how many lines of trisect's own code a call runs.

A claim about cost ("a 100x longer stream costs ~100x") checked with a wall clock fails on a
busy machine and passes on an idle one; a count of executed lines (``sys.settrace`` line events
in frames of the ``trisect`` package) is the same on every run and every machine. Code that
rescans what it already read runs more lines, whatever the load.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import trisect

PACKAGE = str(Path(trisect.__file__).resolve().parent)


def lines_run(fn: Callable[[], Any]) -> int:
    """The number of lines of trisect's code that ``fn()`` executes."""
    count = 0

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def global_(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename.startswith(PACKAGE) else None

    previous = sys.gettrace()
    sys.settrace(global_)
    try:
        fn()
    finally:
        sys.settrace(previous)
    return count
