"""Tool-call ids in a family's style (``tool_call_id``), and which id each call of a choice sent.

``None`` keeps what the parser gives (the id the model wrote, else the family's style, else
``call_`` + random); ``"random"`` (``call_`` + 24 hex), ``"kimi"`` (``functions.NAME:N``, numbered
on from ``history_tool_calls``), ``"mistral"`` (9 alphanumerics) replace the ids the model did not
write. A style is applied where the call's name is known: the stream is given ``mint`` as its
``id_factory``, whose placeholder says "the model wrote no id here".

Cost: O(1) per call.
"""

from __future__ import annotations

import random
import string
import uuid

ID_STYLES = ("random", "kimi", "mistral")
_ALNUM = string.ascii_letters + string.digits


def make_call_id(style: str, index: int, name: str, *, history_tool_calls: int = 0) -> str:
    """A tool-call id in one family's style."""
    if style == "kimi":
        return f"functions.{name}:{history_tool_calls + index}"
    if style == "mistral":
        return "".join(random.choices(_ALNUM, k=9))
    if style == "random":
        return "call_" + uuid.uuid4().hex[:24]
    raise ValueError(f"tool_call_id must be one of {', '.join(ID_STYLES)}")


class CallIds:
    """The ids one choice sends: ``first(index, given, name)`` where a call begins, ``sent(index)``
    after (for ``repeat_tool_call_ids``)."""

    __slots__ = ("style", "history_tool_calls", "_minted", "_sent")

    def __init__(self, style: str | None, *, history_tool_calls: int = 0) -> None:
        if style is not None and style not in ID_STYLES:
            raise ValueError(f"tool_call_id must be one of {', '.join(ID_STYLES)}")
        self.style = style
        self.history_tool_calls = history_tool_calls
        self._minted: dict[int, str] = {}  # call index -> the placeholder the stream was given
        self._sent: dict[int, str] = {}  # call index -> id sent

    def mint(self, index: int) -> str:
        """The stream's ``id_factory``: a placeholder that ``first`` replaces by the style's id."""
        placeholder = f"\x00trisect-call-{index}"
        self._minted[index] = placeholder
        return placeholder

    def first(self, index: int, given: str, name: str) -> str:
        """The id of call ``index``, whose first piece carries the parser's id ``given``."""
        call_id = given
        if self.style is not None and self._minted.get(index) == given:  # the model wrote none
            call_id = make_call_id(self.style, index, name, history_tool_calls=self.history_tool_calls)
        self._sent[index] = call_id
        return call_id

    def sent(self, index: int) -> str | None:
        return self._sent.get(index)
