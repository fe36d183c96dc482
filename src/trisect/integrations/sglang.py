"""trisect as SGLang's reasoning and tool-call parsers: registration.

    python -m sglang.launch_server --model-path M \\
        --reasoning-parser trisect_qwen3 --tool-call-parser trisect_qwen3_coder

``register()`` is the ``sglang.srt.plugins`` entry point. SGLang's ``load_plugins()`` calls it
in each of its processes (HTTP server, scheduler, detokenizer) before the server arguments are
parsed, so the names are valid ``choices`` of ``--tool-call-parser`` / ``--reasoning-parser``
(SGLang reads its registries for them once this module has imported them). SGLang has no
registration API: a parser is an entry of ``FunctionCallParser.ToolCallParserEnum`` or
``ReasoningParser.DetectorMap``, a detector class SGLang instantiates per choice. Each name
``trisect_<name>`` (every name and alias of ``trisect.formats()``, lower-case as SGLang looks
reasoning names up) gets its own class (``_sglang_detectors``); names SGLang already has are
left alone.

SGLang runs the two parsers as two phases: the reasoning detector first, then the tool
detector on what it leaves. trisect's reasoning detector hands the tool detector the model's
text after the end of reasoning unchanged (``ReasoningPhase``). Calls reach the client whole
once complete (``TRISECT_TOOL_CALLS=incremental``: as generated, and a call cut off is
reported in ``incomplete_tool_call_indices``, which keeps ``finish_reason`` off
``"tool_calls"``); the bookkeeping SGLang reads at the end of a stream to send "unstreamed"
arguments never holds anything unsent, so SGLang cannot complete a cut-off call.
"""

from __future__ import annotations

from ._common import plugin_names


def register() -> None:
    """Add every trisect format to SGLang's two parser registries (idempotent)."""
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    from ._sglang_detectors import reasoning_detector, tool_detector

    for name, fmt in plugin_names("tools").items():
        FunctionCallParser.ToolCallParserEnum.setdefault(name.lower(), tool_detector(fmt))
    for name, fmt in plugin_names("reasoning").items():
        ReasoningParser.DetectorMap.setdefault(name.lower(), reasoning_detector(fmt))
