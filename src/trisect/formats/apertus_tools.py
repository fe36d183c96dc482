"""Swiss AI Apertus tool calls: a JSON list of ``{"NAME": {arguments}}`` objects.

Wire format (vLLM's Apertus tool template writes ``'{"' + name + '": ' + arguments + '}'``)::

    <|tools_prefix|>[{"get_weather": {"location": "Paris"}}, {"get_time": {"timezone": "UTC"}}]<|tools_suffix|>

The name is the object's only key and the arguments its value, streamed as written. The list
markers are special tokens of the Apertus vocabulary. An entry whose JSON is invalid (or that
has a second key) ends there and its text is content; the list markers are dropped.

Reference: vLLM ``examples/tool_chat_template_apertus.jinja`` (``tool_calls_token =
'<|tools_prefix|>'``, ``end_tool_calls_token = '<|tools_suffix|>'``); vLLM ``apertus`` parser.
"""

from __future__ import annotations

from ..codecs import NameKeyCodec
from ._json_tools import listed

FORMATS = [
    listed(
        "apertus",
        ("<|tools_prefix|>",),
        ("<|tools_suffix|>",),
        codec=NameKeyCodec,
        special=frozenset({"LIST_START", "LIST_END"}),
        models=("Apertus-8B-Instruct-2509", "Apertus-70B-Instruct-2509"),
        reference="vLLM tool_chat_template_apertus.jinja; vLLM apertus",
    ),
]
