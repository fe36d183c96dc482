"""K2 Horizon: ``<ifm|think>`` reasoning per reasoning effort, and IFM key / value tool calls.

Wire format (``reasoning_effort`` ``high``, the default; ``tool_call_format`` ``xml``)::

    <ifm|think>REASONING</ifm|think>CONTENT
    <ifm|tool_calls><ifm|tool_call>get_weather<ifm|arg_key>city</ifm|arg_key><ifm|arg_value>Paris</ifm|arg_value></ifm|tool_call></ifm|tool_calls>

Reasoning: the block markers depend on ``chat_template_kwargs.reasoning_effort``: ``high``
``<ifm|think>`` … ``</ifm|think>``, ``medium`` ``<ifm|think_fast>`` … ``</ifm|think_fast>``,
``low`` ``<ifm|think_faster>`` … ``</ifm|think_faster>`` (any other value is a
``RequestError``, as vLLM rejects it); all three pairs are read, whichever the model writes.
The output starts in reasoning (a leading start marker is dropped); ``<ifm|tool_calls>`` while
thinking ends reasoning. An output that never ends its reasoning is content (vLLM's
non-streaming rule: no end marker and no tool block means all content): streams hold such
reasoning until it ends, so a stream equals ``parse()``.

Tool calls: one ``<ifm|tool_calls>`` block of ``<ifm|tool_call>`` elements; the name is the
text before the first ``<ifm|arg_key>``, stripped, and must be one of the request's tools.
``tool_call_format: "xml_typed"`` writes ``<ifm|arg_type>TYPE</ifm|arg_type>`` between key and
value: it is read as formatting (values are typed by the tool schema; vLLM lets the written
type decide when the schema allows several). ``tool_call_format: "json"`` (one
``{"name": …, "arguments": …}`` object per call element) is not read by this format.

Reference: vLLM 0.33 ``vllm/reasoning/k2_horizon_reasoning_parser.py`` (``_EFFORT_TOKENS``,
``_TOOL_CALLS_START``, ``_split_model_output``) and ``vllm/tool_parsers/k2_horizon_tool_parser.py``
(the ``<ifm|…>`` markers, ``_ARG_RE``, name validation). No template or tokenizer is staged.
"""

from __future__ import annotations

from ..engine.spec import REASONING
from ..engine.stream_options import StreamOptions
from ..errors import RequestError
from ._key_value import key_value_format
from ._think import think_format

EFFORTS = {
    "high": ("<ifm|think>", "</ifm|think>"),
    "medium": ("<ifm|think_fast>", "</ifm|think_fast>"),
    "low": ("<ifm|think_faster>", "</ifm|think_faster>"),
}
TOOL_CALLS_START = "<ifm|tool_calls>"


def _initial(request: StreamOptions) -> str:
    """the output starts inside the block of the request's reasoning effort (default high)"""
    effort = request.chat_template_kwargs.get("reasoning_effort", "high")
    if effort not in EFFORTS:
        raise RequestError(f"unsupported reasoning_effort {effort!r}; supported values: {', '.join(EFFORTS)}")
    return REASONING


def _unended_is_content(_request: StreamOptions) -> bool:
    return True


FORMATS = [
    think_format(
        "k2_horizon",
        start=tuple(s for s, _e in EFFORTS.values()),
        end=tuple(e for _s, e in EFFORTS.values()),
        initial=_initial,
        ends_on={"BLOCK_START": (TOOL_CALLS_START,)},
        reasoning_fallback=_unended_is_content,
        models=("K2 Horizon",),
        reference="vLLM 0.33 k2_horizon_reasoning_parser.py",
    ),
    key_value_format(
        "k2_horizon",
        call=("<ifm|tool_call>", "</ifm|tool_call>"),
        key=("<ifm|arg_key>", "</ifm|arg_key>"),
        value=("<ifm|arg_value>", "</ifm|arg_value>"),
        block=(TOOL_CALLS_START, "</ifm|tool_calls>"),
        between=(("<ifm|arg_type>", "</ifm|arg_type>"),),
        models=("K2 Horizon",),
        reference="vLLM 0.33 k2_horizon_tool_parser.py (xml and xml_typed tool_call_format)",
    ),
]
