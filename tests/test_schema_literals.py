"""Schema-typed raw values (qwen3_coder and every XML-parameter family).

* ``float`` is ``number`` (tool definitions write it; ``request/choice.py`` accepts it; vLLM 0.33
  coerces it as a number, ``tool_parsers/utils.py:1126-1151``): ``2.50`` is the number ``2.50``;
* the Qwen3-Coder template renders non-string scalar arguments with ``| string``
  (tests/data/templates/Qwen3-Coder.jinja:89), so a model writes ``True`` / ``None``: JSON
  ``true`` / ``null`` where the schema says boolean / null;
* an object or array parameter written as a Python literal (``{'k': 'v'}``, ``[1, None]``) is
  that JSON value (read with ``ast.literal_eval``: literals only); the template itself renders
  mappings and lists with ``tojson``, and vLLM keeps such a value a string — trisect reads it,
  as the issue asks, since the value's type is declared. A literal JSON cannot hold (a set,
  ``1e999``), or one that is not of the declared kind, stays a string.

Every case runs through the replay harness under every chunking, with the Qwen tokenizer.
"""

from __future__ import annotations

import pytest

from support import tokenizers as tk
from trisect.testing import Case, check_case

PROPS = {
    "o": {"type": "object"},
    "a": {"type": "array"},
    "b": {"type": "boolean"},
    "n": {"type": "null"},
    "x": {"type": "float"},
    "s": {"type": "string"},
    "on": {"type": ["object", "null"]},
}
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": PROPS}}}]


@pytest.mark.parametrize(
    ("key", "raw", "want"),
    [
        ("x", "2.50", 2.5),
        ("x", "3", 3),
        ("b", "True", True),
        ("n", "None", None),
        ("on", "None", None),
        ("o", "{'k': 'v', 'n': None, 't': (1, 2)}", {"k": "v", "n": None, "t": [1, 2]}),
        ("a", "['a', 1, None, True]", ["a", 1, None, True]),
        ("on", "{'k': False}", {"k": False}),
        ("o", '{"k": "v"}', {"k": "v"}),
        ("s", "{'k': 'v'}", "{'k': 'v'}"),  # a string parameter stays the text
        ("o", "{1, 2}", "{1, 2}"),  # a set: no JSON value
        ("o", "{'k': 1e999}", "{'k': 1e999}"),  # infinity: no JSON value
        ("o", "['a']", "['a']"),  # a list where an object is declared
        ("x", "fast", "fast"),
    ],
)
def test_a_schema_typed_value(key: str, raw: str, want: object) -> None:
    output = f"<tool_call>\n<function=f>\n<parameter={key}>\n{raw}\n</parameter>\n</function>\n</tool_call>"
    case = Case(
        id=f"qwen3_coder-{key}-value",
        output=output,
        tools_format="qwen3_coder",
        tools=TOOLS,
        tokenizer=tk.load("qwen3"),
        expected={"content": None, "tool_calls": [{"name": "f", "arguments": {key: want}}]},
    )
    assert check_case(case) > 0
