"""Salesforce xLAM tool calls: a JSON list of envelopes, bare or in a wrapper.

Wire formats (vLLM's xLAM templates instruct "make calls in a single JSON array: [{"name":
"tool_call_name", "arguments": {"arg1": "value1", …}}, …]" and render past calls so; the vLLM
parser also reads the list inside a ```json fence, after ``[TOOL_CALLS]`` and inside
``<tool_call>`` … ``</tool_call>``)::

    [{"name": "get_weather", "arguments": {"location": "Paris"}}, {"name": "get_time", "arguments": {}}]
    ```json
    [{"name": "get_weather", "arguments": {"location": "Paris"}}]
    ```
    [TOOL_CALLS][{"name": "get_weather", "arguments": {"location": "Paris"}}]
    <tool_call>[{"name": "get_weather", "arguments": {"location": "Paris"}}]</tool_call>

There is no marker between calls: the JSON decides where each call ends (a ``]`` or ``}``
inside a string argument is text), so the call after an empty-argument call keeps its
arguments (vLLM #47901) and non-ASCII stays as written (vLLM #46308). A bare list starts at
``[{`` (also ``[ {`` and a newline with up to four spaces of indentation); other text with
brackets is content. A list entry that is not a call (invalid JSON, no ``name``, or a name not
among the request's tools) is content and the list goes on; the wrappers are dropped.

Reference: vLLM ``examples/tool_chat_template_xlam_llama.jinja`` / ``_xlam_qwen.jinja``; vLLM
``xlam`` parser (``json_code_block_patterns``).
"""

from __future__ import annotations

from typing import Any

from ..codecs import JsonEnvelope
from ..engine.spec import ARGS_DONE, ARGS_FAILED, CONTENT, Act, FormatSpec, Region, rules

# an envelope whose opening marker may be the list's "[{": the "[" is skipped
_CALL = JsonEnvelope(list_opener=True)

_START = (Act.CALL_START, Act.ARG_MARKER)


def _list(prefix: str, after: str, closer: str | None) -> list[tuple[Any, ...]]:
    """The rows of one list flavour: ``{prefix}_LIST`` … ``]`` -> ``after``."""
    lst, item, nxt = f"{prefix}_LIST", f"{prefix}_ITEM", f"{prefix}_NEXT"
    rows = [
        (lst, "OPEN_BRACE", item, _START),
        (lst, "CLOSE_BRACKET", after, ()),
        (item, ARGS_DONE, nxt, (Act.CALL_END,)),
        (nxt, "COMMA", lst, ()),
        (nxt, "OPEN_BRACE", item, _START),
        (nxt, "CLOSE_BRACKET", after, ()),
    ]
    if closer is not None:  # the wrapper's closer also ends a list left open
        rows += [(lst, closer, CONTENT, ()), (nxt, closer, CONTENT, ()), (after, closer, CONTENT, ())]
    return rows


_ROWS = [
    (CONTENT, "BARE_LIST", "B_FIRST", _START),
    ("B_FIRST", ARGS_DONE, "B_NEXT", (Act.CALL_END,)),
    ("B_FIRST", ARGS_FAILED, CONTENT, (Act.CALL_END,)),  # text in brackets, not a list of calls
    *_list("B", CONTENT, None),
    (CONTENT, "FENCE_OPEN", "F_OPEN", ()),
    ("F_OPEN", "OPEN_BRACKET", "F_LIST", ()),
    ("F_OPEN", "FENCE_CLOSE", CONTENT, ()),
    *_list("F", "F_CLOSED", "FENCE_CLOSE"),
    (CONTENT, "TOOL_CALLS", "T_OPEN", ()),
    ("T_OPEN", "OPEN_BRACKET", "T_LIST", ()),
    *_list("T", CONTENT, None),
    (CONTENT, "TOOL_CALL", "X_OPEN", ()),
    ("X_OPEN", "OPEN_BRACKET", "X_LIST", ()),
    ("X_OPEN", "TOOL_CALL_END", CONTENT, ()),
    *_list("X", "X_CLOSED", "TOOL_CALL_END"),
]

_REGIONS = {CONTENT: Region.CONTENT}
for _row in _ROWS:
    for _state in (_row[0], _row[2]):
        if _state != CONTENT:
            _REGIONS[_state] = Region.ARGS if _state.endswith(("_ITEM", "_FIRST")) else Region.SKIP

FORMATS = [
    FormatSpec(
        name="xlam",
        kind="tools",
        terminals={
            "BARE_LIST": ("[{", "[ {", "[\n{", "[\n  {", "[\n    {"),
            "FENCE_OPEN": ("```json",),
            "FENCE_CLOSE": ("```",),
            "TOOL_CALLS": ("[TOOL_CALLS]",),
            "TOOL_CALL": ("<tool_call>",),
            "TOOL_CALL_END": ("</tool_call>",),
            "OPEN_BRACKET": ("[",),
            "CLOSE_BRACKET": ("]",),
            "OPEN_BRACE": ("{",),
            "COMMA": (",",),
        },
        regions=_REGIONS,
        table=rules(*_ROWS),
        codec=_CALL,
        validate_names=True,
        models=("xLAM-2-8b-fc-r", "xLAM-2-70b-fc-r", "xLAM-2-3b-fc-r", "xLAM-2-1b-fc-r"),
        reference="vLLM tool_chat_template_xlam_llama.jinja / _xlam_qwen.jinja; vLLM xlam",
    ),
]
