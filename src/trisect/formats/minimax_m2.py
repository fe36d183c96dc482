"""MiniMax-M2 / M2.1 / M2.5 reasoning: the prompt opens the block, the output closes it.

Wire format (MiniMax-M2 chat template; the generation prompt ends ``]~b]ai\\n<think>\\n``)::

    REASONING
    </think>

    CONTENT

``minimax_m2``: the output starts in reasoning whatever the request says (the template always
pre-fills ``<think>``); everything before ``</think>`` is reasoning, no ``</think>`` means the
output was cut off while thinking; a repeated ``<think>`` is absorbed. A ``<think>`` block
after content (the model thinking again before a call), its ``<think>`` given by id as the
special token, is reasoning, appended to it (written as text it is content text); a
``</think>`` where no block is open is content text (vLLM absorbs it; trisect drops no text).

``minimax_m2_append_think``: no reasoning field at all — the whole output is content with
``<think>`` put back in front, as users of that name expect (the client sees
``<think>\\nREASONING\\n</think>\\n\\nCONTENT``; vLLM #34625 is this behaviour, by design).

Reference: MiniMaxAI MiniMax-M2 chat template (tests/data/templates/MiniMax-M2.jinja); vLLM
0.33 ``vllm/parser/minimax_m2.py`` (``minimax_m2_config``: initial state REASONING, a repeated
``<think>`` and a stray ``</think>`` absorbed) and ``vllm/reasoning/minimax_m2_reasoning_parser.py``
(``MiniMaxM2AppendThinkReasoningParser``: no reasoning, ``"<think>" + output`` as content).
"""

from __future__ import annotations

from ..engine.spec import CONTENT, FormatSpec, Region
from ._think import always_reasoning, think_format

MINIMAX_TURN_MARKERS = ("]~!b[", "]~b]system", "]~b]user", "]~b]ai", "]~b]tool", "[e~[")
MODELS = ("MiniMax-M2", "MiniMax-M2.1", "MiniMax-M2.5")

FORMATS = [
    think_format(
        "minimax_m2",
        initial=always_reasoning,
        reopens_by_id=True,
        turn_markers=MINIMAX_TURN_MARKERS,
        models=MODELS,
        reference="MiniMax-M2 chat template; vLLM minimax_m2 reasoning parser",
    ),
    FormatSpec(
        name="minimax_m2_append_think",
        kind="reasoning",
        terminals={},
        regions={CONTENT: Region.CONTENT},
        table={},
        content_prefix="<think>",
        models=MODELS,
        reference="vLLM MiniMaxM2AppendThinkReasoningParser: '<think>' + output, all content",
    ),
]
