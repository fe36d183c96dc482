"""trisect as SGLang's reasoning and tool-call parsers: registration and the request hand-off.

    python -m sglang.launch_server --model-path M \\
        --reasoning-parser trisect_qwen3 --tool-call-parser trisect_qwen3_coder

``register()`` is the ``sglang.srt.plugins`` entry point. SGLang's ``load_plugins()`` calls it
in each of its processes (HTTP server, scheduler, detokenizer) before the server arguments are
parsed, so the names are valid ``choices`` of ``--tool-call-parser`` / ``--reasoning-parser``
(SGLang reads its registries for them once this module has imported them). SGLang has no
registration API: a parser is an entry of ``FunctionCallParser.ToolCallParserEnum`` or
``ReasoningParser.DetectorMap``, a detector class SGLang instantiates per choice. Each name
``trisect_<name>`` (every name and alias of ``trisect.formats()``, lower-case as SGLang looks
reasoning names up) gets its own class (``_sglang_detectors``), and so does ``trisect_auto``
(the formats detected in the chat template of the tokenizer SGLang hands a detector); names
SGLang already has are left alone.

**The request hand-off.** SGLang builds a reasoning detector with ``force_reasoning`` (its own
reading of the chat template and of one thinking switch), not the request. ``register()`` wraps
``ReasoningParser.__init__`` so that, after SGLang built a trisect detector, the detector reads
the request it was built for (``read_request``: ``chat_template_kwargs``, ``reasoning_effort``,
the tools) and parses with trisect's request semantics. The wrapper finds ``request`` by
``ReasoningParser.__init__``'s own signature; where the installed SGLang has none, nothing is
wrapped and the detectors read ``force_reasoning`` alone. SGLang's own detectors are untouched.

Calls reach the client whole once complete (``TRISECT_TOOL_CALLS=incremental``: as generated, and
a call cut off is reported in ``incomplete_tool_call_indices``, which keeps ``finish_reason`` off
``"tool_calls"``); the bookkeeping SGLang reads at the end of a stream to send "unstreamed"
arguments never holds anything unsent, so SGLang cannot complete a cut-off call.
"""

from __future__ import annotations

import inspect
from typing import Any, cast

from ._common import engine_names


def register() -> None:
    """Add every trisect format to SGLang's two parser registries and hand trisect's reasoning
    detectors their request (idempotent)."""
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    from ._sglang_detectors import reasoning_detector, tool_detector

    for name, fmt in engine_names("tools").items():
        FunctionCallParser.ToolCallParserEnum.setdefault(name.lower(), tool_detector(fmt))
    for name, fmt in engine_names("reasoning").items():
        ReasoningParser.DetectorMap.setdefault(name.lower(), reasoning_detector(fmt))
    _hand_over_requests(ReasoningParser)


def _hand_over_requests(parser_class: Any) -> None:
    original = parser_class.__init__
    if getattr(original, "__trisect__", False):
        return
    signature = inspect.signature(original)
    if "request" not in signature.parameters:
        return

    from ._sglang_detectors import _reasoning_base

    detector_base = _reasoning_base()

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        detector = getattr(self, "detector", None)
        if isinstance(detector, detector_base):
            request = signature.bind(self, *args, **kwargs).arguments.get("request")
            if request is not None:
                cast(Any, detector).read_request(request)

    __init__.__trisect__ = True  # type: ignore[attr-defined]
    __init__.__wrapped__ = original  # type: ignore[attr-defined]
    parser_class.__init__ = __init__
