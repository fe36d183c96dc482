"""The interface between the engine and an argument codec.

The engine owns markers and states; a codec owns the syntax of one call's arguments. It is
created per call and receives either every text piece of the argument region
(``structured = False``: XML-style parameters, where the engine finds the parameter markers and
passes them on with ``marker()``) or decides itself where its text ends (``structured = True``:
JSON, where a marker inside a string is string text and the call can end where the JSON ends).

Every codec only ever *appends* argument text: ``take()`` returns the next safe piece, and the
pieces concatenate to the final arguments, a JSON object, returned complete by ``close()``.
The codecs themselves live in ``trisect.codecs``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from .options import ToolIndex


class CallCodec(Protocol):
    structured: bool
    name: str | None  # set when the codec itself reads the tool name (JSON envelopes)
    call_id: str | None
    done: bool  # its own structure is complete (structured codecs)
    failed: bool
    in_value: bool  # inside a raw-text value, where a marker may be value text (see Rule.follow)
    in_string: bool  # inside a JSON string (structured codecs), where every marker is text

    def feed(self, s: str, i: int, end: int) -> int: ...
    def marker(self, terminal: str) -> None: ...
    def set_name(self, name: str) -> None: ...
    def take(self) -> str: ...
    def close(self) -> str | None: ...


CodecFactory = Callable[[ToolIndex], CallCodec]
