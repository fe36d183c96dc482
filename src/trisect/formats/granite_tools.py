"""IBM Granite tool calls: Granite 3.x writes a JSON list, Granite 4 one envelope per block,
granite-20b-functioncalling one envelope after each ``<function_call>``.

Wire formats::

    granite (Granite 3.0-3.3; the 3.3 template's system prompt: "respond only with
    <|tool_call|> followed by a JSON list of tools used"):
    <|tool_call|>[{"name": "get_weather", "arguments": {"location": "Paris"}}]
    <|tool_call|> {"name": "get_weather", …}
    <|tool_call|> {"name": "get_time", …}          (one marker per call: one block of two calls)

    granite4 (Granite 4.0 / 4.1 templates, Hermes-style):
    <tool_call>
    {"name": "get_weather", "arguments": {"location": "Paris"}}
    </tool_call>

    granite-20b-fc (granite-20b-functioncalling; vLLM's tool_chat_template_granite_20b_fc.jinja):
    <function_call> {"name": "get_weather", "arguments": {"location": "Paris"}}<function_call> {…}

``<function_call>`` has no closer: each call ends where its JSON ends.

Granite 3.1 also wrote ``<tool_call>`` before the list (accepted by ``granite``); ``<|tool_call|>``
is an added token of the Granite 3 vocabulary (matched by id when ids are given). The list
ends at its ``]``; the JSON decides where each call ends, so markers inside string arguments
are text. A list entry that is not a call ends where its JSON breaks and its text is content
(the list markers are dropped); a Granite 4 block with invalid JSON is content, markers included.

Reference: ibm-granite granite-3.3-2b-instruct and granite-4.0 chat templates (llama.cpp
``models/templates``); vLLM ``examples/tool_chat_template_granite_20b_fc.jinja``; vLLM
``granite`` / ``granite4`` / ``granite-20b-fc`` tool parsers.
"""

from __future__ import annotations

from ..codecs import ENVELOPE
from ._json_tools import listed, wrapped

FORMATS = [
    listed(
        "granite",
        ("<|tool_call|>", "<tool_call>"),
        None,
        codec=ENVELOPE,
        special=frozenset({"LIST_START"}),
        models=("Granite 3.0", "Granite 3.1", "Granite 3.2", "Granite 3.3"),
        reference="granite-3.3-2b-instruct chat template (system prompt); vLLM granite",
    ),
    wrapped(
        "granite4",
        ("<tool_call>",),
        ("</tool_call>",),
        codec=ENVELOPE,
        special=False,
        models=("Granite 4.0", "Granite 4.1"),
        reference="granite-4.0 chat template; vLLM granite4",
    ),
    wrapped(
        "granite-20b-fc",
        ("<function_call>",),
        None,
        codec=ENVELOPE,
        special=False,
        models=("granite-20b-functioncalling",),
        reference="vLLM tool_chat_template_granite_20b_fc.jinja; vLLM granite-20b-fc",
    ),
]
