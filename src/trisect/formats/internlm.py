"""InternLM2 / InternLM2.5 tool calls: ``<|action_start|><|plugin|>`` JSON ``<|action_end|>``.

Wire format (vLLM's InternLM2 tool template, after the InternLM2 chat format)::

    Let me check.<|action_start|><|plugin|>
    {"name": "get_weather", "arguments": {"location": "Paris"}}<|action_end|>

Content may precede the call; one block per call. The JSON decides where the call ends (a
marker inside a string argument is text); a block whose JSON is invalid is content, markers
included. ``parameters`` is accepted for ``arguments``; arguments written as a JSON string
(the template inserts them with ``|string``) are decoded once.

Reference: vLLM ``examples/tool_chat_template_internlm2_tool.jinja``; vLLM ``internlm`` parser.
"""

from __future__ import annotations

from ..codecs import ENVELOPE
from ._json_tools import wrapped

FORMATS = [
    wrapped(
        "internlm",
        ("<|action_start|><|plugin|>",),
        ("<|action_end|>",),
        codec=ENVELOPE,
        special=False,
        models=("InternLM2-Chat", "InternLM2.5-Chat"),
        reference="vLLM tool_chat_template_internlm2_tool.jinja; vLLM internlm",
    ),
]
