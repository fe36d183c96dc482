"""ByteDance Seed-OSS tool calls (``seed_oss``): the Qwen3-Coder grammar in Seed's wrapper.

Wire format::

    <seed:tool_call>
    <function=get_weather>
    <parameter=location>
    Paris
    </parameter>
    </function>
    </seed:tool_call>

Everything but the wrapper is the Qwen3-Coder grammar (``qwen3_coder``): one wrapping newline
of a value is template formatting, values are typed by the tool schema, a closing tag inside a
value counts only where the structure goes on after it, and the same malformed shapes are
recovered. ``<seed:tool_call>`` / ``</seed:tool_call>`` are special tokens; a
``<seed:tool_call>`` met while thinking ends reasoning with the ``seed_oss`` reasoning format.

Reference: no Seed-OSS chat template is staged here. vLLM 0.33 ``vllm/parser/seed_oss.py``:
``SeedOssParser`` is ``Qwen3Parser`` with only the four wrapper tokens overridden
(``<seed:think>``, ``</seed:think>``, ``<seed:tool_call>``, ``</seed:tool_call>``) and its own turn
boundaries; ``<function=…>`` and ``<parameter=…>`` are the Qwen3 ones. The tests write calls in the
Qwen3-Coder template's spelling with those wrappers.
"""

from __future__ import annotations

from .qwen3_coder import function_xml_format

FORMATS = [
    function_xml_format(
        "seed_oss",
        tool_start="<seed:tool_call>",
        tool_end="</seed:tool_call>",
        models=("Seed-OSS-36B",),
        reference="vLLM 0.33 parser/seed_oss.py (the Qwen3 grammar in Seed wrappers)",
    ),
]
