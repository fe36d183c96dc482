"""Work measured by counting, not by a clock, and waits bounded only against a hang.

A claim about cost ("a 100x longer stream costs ~100x") checked with a wall clock fails on a
busy machine and passes on an idle one; a count of executed lines (``sys.settrace`` line events
in frames of the ``trisect`` package) is the same on every run and every machine. Code that
rescans what it already read runs more lines, whatever the load.

A test that waits for something (a server to start, a thread to see a cancel, a child process)
waits until it happens; ``HANG`` bounds the wait only so that a hang fails instead of blocking
the suite. It is never a measure of speed: on a machine busy enough to reach it, the suite is
not running anyway.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import trisect

PACKAGE = str(Path(trisect.__file__).resolve().parent)
HANG = 600.0  # seconds


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
