"""DeepSeek DSML tool calls: V3.2 (``deepseek_v32``), V4 (``deepseek_v4``), V4.1 spaced
(``deepseek_v41``).

Wire format (DeepSeek-V3.2 chat template; ``｜`` is U+FF5C)::

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="get_weather">
    <｜DSML｜parameter name="location" string="true">Paris</｜DSML｜parameter>
    <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

V4 wraps the block in ``<｜DSML｜tool_calls>`` … ``</｜DSML｜tool_calls>``; V4.1 spaces the tags:
``<｜DSML｜ calls>``, ``<｜DSML｜ invoke name="…">``, ``<｜DSML｜ parameter name="…" string="…">``.

Values: ``string="true"`` marks a raw string, kept verbatim (whitespace and newlines
included); ``string="false"`` marks JSON, kept as written when it is valid JSON, else a string
(the template writes it with ``tojson``); without the attribute the tool schema types the
value. Attribute values may be quoted with ``"`` or ``'``. V4 unwraps a lone ``arguments`` or
``input`` parameter whose value is a JSON object when the tool's schema declares no such key
(the model wrapped the arguments). Whitespace between tags is formatting.

A block opens a call at its wrapper (so a wrapper met while thinking ends reasoning where the
reasoning format says so: V4, V4.1); each further ``invoke`` opens the next call. An empty
block is not a call (its text is content). Recovered malformed shapes: a missing ``</…invoke>``
before the next invoke or before the block's end, a missing ``</…parameter>`` before the next
parameter; a self-closing invoke ``<｜DSML｜invoke name="submit"/>`` is a call with no arguments
(the name is the quoted value; the invoke's closer is missing, as the recovery allows; vLLM reads
the name up to the next ``">``, swallowing the closers: a call named
``submit"/>\n</｜DSML｜tool_calls>``). An unfinished call is not a call.

Marker text inside a value: ``</…parameter>`` ends a value only when what follows, after
whitespace, is the next parameter, ``</…invoke>``, the next invoke or the block's end;
``</…invoke>`` and the block's end inside an open value likewise only before the structure
that may follow them; the block's end also at the end of the output (the closers before it are
missing). An inner closer the output ends with inside a value is value text. A parameter's
opener inside a value ends it only before a new key of the tool; ``invoke name=`` inside a
value is value text.

Token ids: in the DeepSeek V3 vocabulary (V3.2 shares it) DSML tags are ordinary text; vLLM
matches the V4 block wrappers by token id (``token_id_terminals`` in vLLM 0.33
``vllm/parser/deepseek_v4.py``), so they are declared special here — the
V4 / V4.1 vocabularies are not staged to confirm their ids, and the tests run V4 on the V3
tokenizer, where the wrappers are text.

Reference: DeepSeek-V3.2 chat template (tests/data/templates/deepseek-ai-DeepSeek-V3.2.jinja,
from llama.cpp); vLLM 0.33 ``vllm/parser/deepseek_v4.py`` (``deepseek_v4_config``: the terminals
and the table; ``_dsml_arg_converter``: ``string="false"`` values JSON-decoded when they parse;
``_unwrap_wrapper_args``: the ``arguments`` / ``input`` unwrap). V4.1: vLLM 0.33
``vllm/parser/deepseek_v41.py`` (``<｜DSML｜ calls>`` / ``</｜DSML｜ calls>``, ``<｜DSML｜ invoke name="``
/ ``</｜DSML｜ invoke>``, ``<｜DSML｜ parameter`` / ``</｜DSML｜ parameter>``; the V4 config otherwise).
"""

from __future__ import annotations

from ..codecs import JSON_TEXT
from ..codecs.xml_params import attribute_pairs, only_attributes
from ..engine.spec import FormatSpec
from ._xml_invoke import Quote, invoke_format, unquote


def parse_attributes(text: str) -> tuple[str, tuple[str, ...] | None]:
    """`` name="k" string="false"`` -> ``("k", JSON_TEXT)``; ``string="true"`` -> a string. Text
    that is no attribute (``name=d\nb``) or an attribute the template never writes (``g="te"``)
    reads no key: the call is malformed, never short of it."""
    pairs = only_attributes(text, reads=("name", "string"))
    if pairs is None:  # no attribute at all is a bare or quoted key (``"city"``): read as written
        return ("", None) if attribute_pairs(text) else (unquote(text), None)
    attrs = {k: v for k, _quote, v in pairs}
    name = attrs.get("name", unquote(text))
    kind = attrs.get("string", "").strip().lower()
    if kind == "true":
        return name, ("string",)
    if kind == "false":
        return name, JSON_TEXT
    return name, None


def dsml_format(
    name: str,
    *,
    dsml: str,
    block: str,
    special: bool,
    unwrap: tuple[str, ...],
    models: tuple[str, ...],
    reference: str,
    style: str | None = None,
) -> FormatSpec:
    """``dsml``: the tag prefix (``｜DSML｜``, spaced ``｜DSML｜ ``); ``block``: the wrapper's name;
    ``style``: the xgrammar argument style of its parameters."""
    return invoke_format(
        name,
        invoke=(f"<{dsml}invoke name=", f"</{dsml}invoke>"),
        param=(f"<{dsml}parameter", f"</{dsml}parameter>"),
        block=(f"<{dsml}{block}>", f"</{dsml}{block}>"),
        opens="block",
        special=special,
        keys=parse_attributes,
        trim="none",
        unwrap=unwrap,
        style=style,
        names=Quote.ALONE,  # the quoted name: a self-closing invoke's '"submit"/' is 'submit'
        models=models,
        reference=reference,
    )


DSML = "｜DSML｜"

FORMATS = [
    dsml_format(
        "deepseek_v32",
        dsml=DSML,
        block="function_calls",
        special=False,
        unwrap=(),
        style="deepseek_xml",
        models=("DeepSeek-V3.2", "DeepSeek-V3.2-Exp"),
        reference="DeepSeek-V3.2 chat template; vLLM deepseek_v32 engine tool parser",
    ),
    dsml_format(
        "deepseek_v4",
        dsml=DSML,
        block="tool_calls",
        special=True,
        unwrap=("arguments", "input"),
        style="deepseek_xml",
        models=("DeepSeek V4",),
        reference="vLLM 0.33 parser/deepseek_v4.py; V3.2 template for the parameter spelling",
    ),
    dsml_format(
        "deepseek_v41",
        dsml=DSML + " ",
        block="calls",
        special=True,
        unwrap=("arguments", "input"),
        style="deepseek_v4_1_xml",
        models=("DeepSeek V4.1",),
        reference="vLLM 0.33 parser/deepseek_v41.py (spaced DSML)",
    ),
]
