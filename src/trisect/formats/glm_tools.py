"""GLM-4.5 … 5.x tool calls (``glm47``, alias ``glm45``), and the families that reuse the
GLM-4.7 grammar: Ling 3 (``ling3``) and poolside Laguna (``poolside_v1``).

Wire format, GLM-4.7 template (no whitespace between markers)::

    <tool_call>get_weather<arg_key>location</arg_key><arg_value>Paris</arg_value></tool_call>

GLM-4.5 / 4.6 template (a newline after the name and after each closing tag)::

    <tool_call>get_weather
    <arg_key>location</arg_key>
    <arg_value>Paris</arg_value>
    </tool_call>

The name is the text after ``<tool_call>`` up to the first ``<arg_key>`` or ``</tool_call>``
(stripped; a call without arguments is ``<tool_call>NAME</tool_call>``) and must be one of the
request's tools (``validate_names``, as vLLM). Values are written raw by the template (strings
as they are, everything else with ``tojson``) and are kept verbatim: newlines inside and
around a string value are the value's own (GLM-4.7 keeps them; no template adds any inside
``<arg_value>``); other values are typed by the tool schema. Whitespace between the tags is
formatting.

Recovered malformed shapes: a missing ``</tool_call>`` before the next ``<tool_call>``, a
missing ``</arg_value>`` before the next ``<arg_key>`` (the value keeps its text verbatim), a
name not among the tools (the block stays content). An unfinished block is not a call.

Marker text inside a value: ``</arg_value>`` ends a value only when what follows, after
whitespace, is ``<arg_key>``, ``</tool_call>`` or ``<tool_call>``; anything else (the end of the
output included) is the model writing the tag as part of the value. ``<arg_key>`` ends a value
whose closer is missing only before a new key of the tool (``see <arg_key>path</arg_key>`` in
a call that has ``path`` is value text). ``</tool_call>`` inside a value ends the value and the
call only before ``<tool_call>`` or at the end of the output (``<arg_value>Berlin</tool_call>``:
the closer is missing, the structure makes it certain); ``<tool_call>`` inside a value is value
text. The rule holds with token ids too: every GLM marker is an added token, and the template
tokenizes the same text inside a value as that very token.

Reasoning: ``<tool_call>`` inside an unterminated ``<think>`` block ends reasoning when the
reasoning format says so (``tool_start_ends_reasoning``, vLLM ``glm45`` / ``glm47``).

Reference: zai-org GLM-4.6 and GLM-4.7-Flash chat templates (tests/data/templates/GLM-4.6.jinja,
GLM-4.7-Flash.jinja, from llama.cpp); vLLM 0.33 ``vllm/parser/glm47_moe.py`` (``glm47_moe_config``:
terminals, table, ``validate_tool_names=True``; names stripped). Ling 3: no template staged here;
vLLM 0.33 ``vllm/parser/ling3.py`` is ``Ling3Parser(Glm47MoeParser)`` on the GLM-4.7 config.
poolside Laguna: no template staged here; vLLM 0.33 ``vllm/tool_parsers/poolside_v1_tool_parser.py``
reads ``<tool_call>NAME<arg_key>…</arg_key><arg_value>…</arg_value></tool_call>``. The marker
strings are added tokens of the GLM-4.5+ tokenizer (its ids are not staged here; tests use a
synthetic tokenizer with the same added tokens).
"""

from __future__ import annotations

from ..engine.spec import FormatSpec
from ._key_value import key_value_format


def glm_format(name: str, *, models: tuple[str, ...], reference: str, aliases: tuple[str, ...] = ()) -> FormatSpec:
    return key_value_format(
        name,
        call=("<tool_call>", "</tool_call>"),
        key=("<arg_key>", "</arg_key>"),
        value=("<arg_value>", "</arg_value>"),
        style="glm_xml",
        models=models,
        reference=reference,
        aliases=aliases,
    )


FORMATS = [
    glm_format(
        "glm47",
        aliases=("glm45",),
        models=("GLM-4.5", "GLM-4.6", "GLM-4.7", "GLM-5"),
        reference="GLM-4.6 and GLM-4.7-Flash chat templates; vLLM glm47_moe engine parser",
    ),
    glm_format(
        "ling3",
        models=("Ling 3",),
        reference="GLM-4.7 grammar (vLLM 0.33 parser/ling3.py: Ling3Parser subclasses Glm47MoeParser)",
    ),
    glm_format(
        "poolside_v1",
        models=("poolside Laguna",),
        reference="GLM-4.7 grammar (vLLM 0.33 poolside_v1_tool_parser.py)",
    ),
]
