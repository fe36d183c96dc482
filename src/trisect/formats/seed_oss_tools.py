"""ByteDance Seed-OSS tool calls (``seed_oss``): the Qwen3-Coder grammar in Seed's wrapper.

Wire format::

    <seed:tool_call>
    <function=get_weather>
    <parameter=location>Paris</parameter>
    </function>
    </seed:tool_call>

Everything but the wrapper and the value rule is the Qwen3-Coder grammar (``qwen3_coder``). The
Seed-OSS template writes a value with nothing around it (``<parameter=k>VALUE</parameter>``), so
the value is kept byte for byte: the Qwen3-Coder rule that one wrapping newline is formatting
holds for that template only, which writes ``'>\n'`` … ``'\n</parameter>'``. Values are typed
by the tool schema, a closing tag inside a
value counts only where the structure goes on after it, and the same malformed shapes are
recovered. ``<seed:tool_call>`` / ``</seed:tool_call>`` are special tokens; a
``<seed:tool_call>`` met while thinking ends reasoning with the ``seed_oss`` reasoning format.

Reference: the Seed-OSS chat template (llama.cpp ``models/templates/ByteDance-Seed-OSS.jinja``:
``"<parameter=" + arg_name + ">"`` then ``arg_value + "</parameter>\n"``; not staged here).
vLLM 0.33 ``vllm/parser/seed_oss.py``:
``SeedOssParser`` is ``Qwen3Parser`` with only the four wrapper tokens overridden
(``<seed:think>``, ``</seed:think>``, ``<seed:tool_call>``, ``</seed:tool_call>``) and its own turn
boundaries; ``<function=…>`` and ``<parameter=…>`` are the Qwen3 ones. The tests write calls in the
Seed-OSS template's spelling.
"""

from __future__ import annotations

from .qwen3_coder import function_xml_format

FORMATS = [
    function_xml_format(
        "seed_oss",
        tool_start="<seed:tool_call>",
        tool_end="</seed:tool_call>",
        trim="none",
        models=("Seed-OSS-36B",),
        reference="vLLM 0.33 parser/seed_oss.py (the Qwen3 grammar in Seed wrappers)",
    ),
]
