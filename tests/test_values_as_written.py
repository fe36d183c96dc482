"""A string parameter value comes back byte for byte as the family's template writes it
(DESIGN, contract 9): indentation, surrounding whitespace and newlines at its ends included,
unless the template itself writes formatting around the value.

* MiniMax-M2 (``tests/data/templates/MiniMax-M2.jinja``): ``'<parameter name="' + k + '">'``,
  then the value as it is, then ``'</parameter>'``: nothing around the value.
* Seed-OSS (llama.cpp ``models/templates/ByteDance-Seed-OSS.jinja``): ``"<parameter=" + arg_name
  + ">"``, then ``arg_value + "</parameter>\\n"``: nothing around the value (unlike Qwen3-Coder's
  ``'>\\n'`` … ``'\\n</parameter>'``, whose one wrapping newline is the template's).
* Step-3 (no template staged; vLLM 0.33 ``step3_tool_parser.py`` reads
  ``<steptml:parameter name="…">(.*?)</steptml:parameter>``): the value is the text between the
  tags.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from trisect import MessageBuilder, Parser

CODE = "    if x:\n        return 1\n"  # issue 20: a code-editing tool's old_string
VALUES = [CODE, "\nx\n", "  two spaces  ", "\n\n", "\tTab"]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "edit",
            "parameters": {"type": "object", "properties": {"old_string": {"type": "string"}}},
        },
    }
]


def _minimax(v: str) -> str:
    invoke = f'<invoke name="edit"><parameter name="old_string">{v}</parameter>\n</invoke>\n'
    return f"<minimax:tool_call>\n{invoke}</minimax:tool_call>"


def _seed(v: str) -> str:
    return f"\n<seed:tool_call>\n<function=edit>\n<parameter=old_string>{v}</parameter>\n</function>\n</seed:tool_call>"


def _step3(v: str) -> str:
    return (
        '<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="edit">'
        f'<steptml:parameter name="old_string">{v}</steptml:parameter>'
        "</steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>"
    )


def _coder(v: str) -> str:  # the Qwen3-Coder template writes one newline on each side
    return f"<tool_call>\n<function=edit>\n<parameter=old_string>\n{v}\n</parameter>\n</function>\n</tool_call>"


WRITERS = [("minimax_m2", _minimax), ("seed_oss", _seed), ("step3", _step3), ("qwen3_coder", _coder)]


@pytest.mark.parametrize(("fmt", "write"), WRITERS, ids=[w[0] for w in WRITERS])
@pytest.mark.parametrize("value", VALUES)
def test_a_string_value_comes_back_as_the_template_wrote_it(fmt: str, write: Callable[[str], str], value: str) -> None:
    output = write(value)
    parser = Parser(tools=fmt)
    whole = parser.parse(output, tools=TOOLS)
    assert [(c.name, json.loads(c.arguments)) for c in whole.tool_calls] == [("edit", {"old_string": value})]
    for size in (1, 3):
        stream = parser.stream(tools=TOOLS)
        built = MessageBuilder()
        for i in range(0, len(output), size):
            built.add(stream.feed(output[i : i + size]))
        built.add(stream.finish())
        got = built.message()
        assert [(c.name, json.loads(c.arguments)) for c in got.tool_calls] == [("edit", {"old_string": value})]
