"""SGLang 0.5.23's parser classes called the way its serving code calls them, with no model.

``serving_chat.py`` itself needs the whole runtime (torchvision, the CUDA build of torch, ...)
and does not import on this machine, so these are its calls, in its order, with its
arguments (line refs are sglang 0.5.23's ``srt/entrypoints/openai/serving_chat.py``), over the
real ``ReasoningParser`` / ``FunctionCallParser`` and the plugin's detectors:

streaming, per choice (``_generate_stream_content``, :919):
  1. ``ReasoningParser(name, stream_reasoning, force_reasoning, request, tokenizer,
     tool_call_parser_active)`` on the first chunk (:3312); ``parse_stream_chunk(delta)``, and on
     a non-abort finish ``parse_stream_end()`` (:3302-3333);
  2. ``FunctionCallParser(tools, name, tokenizer, prefix, constrained)`` on the first chunk
     (:3618); ``parse_stream_chunk(normal_text)``, with a finish ``parse_stream_end()``; a call
     item with a name gets a new id (:3660-3756);
  3. on finish the back-fill ``_check_for_unstreamed_tool_args`` (:3758-3833):
     ``prev_tool_call_arr[-1]["arguments"]`` minus ``streamed_args_for_tool[-1]`` is sent;
  4. ``finish_reason`` ``"tool_calls"`` iff a call was streamed, the engine said ``"stop"`` and
     the detector reports no ``incomplete_tool_call_indices`` (:2641-2672).
non-streaming (``_build_chat_response``, :2832): ``ReasoningParser(stream_reasoning=False)
.parse_non_stream``, then ``_process_tool_calls`` (:3150): ``has_tool_call`` then
``parse_non_stream``; no call parsed: the parser's normal text is the content.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import hf_tokenizers


@functools.cache
def _hf(name: str) -> Any:
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(hf_tokenizers.hf_dir(name) / "tokenizer.json"))


def chunks(tokenizer: str, ids: Sequence[int], per: int) -> list[str]:
    """The text an incremental detokenizer emits for ``ids``, ``per`` ids per chunk."""
    from tokenizers.decoders import DecodeStream

    tk = _hf(tokenizer)
    stream = DecodeStream(skip_special_tokens=False)
    return ["".join(stream.step(tk, i) or "" for i in ids[k : k + per]) for k in range(0, len(ids), per)] or [""]


@dataclass
class Reply:
    reasoning: str | None = None
    content: str | None = None
    tool_calls: list[tuple[str | None, str, str]] = field(default_factory=list)
    finish_reason: str | None = None
    backfill: list[str] = field(default_factory=list)

    def view(self) -> dict[str, Any]:
        return {
            "reasoning": self.reasoning or None,
            "content": self.content or None,
            "tool_calls": [(name, arguments) for _, name, arguments in self.tool_calls],
            "finish_reason": self.finish_reason,
        }


def request(tools: Any, **body: Any) -> Any:
    from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest

    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], **body}
    if tools:
        body["tools"] = tools
    return ChatCompletionRequest(**body)


def _tool_parsing(req: Any, tool_parser: str | None) -> bool:
    return bool(tool_parser and req.tools and req.tool_choice != "none")


def stream(
    reasoning: str | None,
    tool_parser: str | None,
    pieces: Sequence[str],
    *,
    finish: str = "stop",
    tools: Any = None,
    force_reasoning: bool | None = None,
    **body: Any,
) -> Reply:
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    req = request(tools, stream=True, **body)
    rp = None
    if reasoning:
        rp = ReasoningParser(
            reasoning, req.stream_reasoning, force_reasoning, req, tokenizer=None, tool_call_parser_active=True
        )
    fcp = FunctionCallParser(req.tools, tool_parser, tokenizer=None) if _tool_parsing(req, tool_parser) else None
    out = Reply()
    texts: dict[str, list[str]] = {"reasoning": [], "content": []}
    slots: dict[int, list[Any]] = {}
    has_calls = False
    for n, delta in enumerate(pieces):
        fin = finish if n == len(pieces) - 1 else None
        normal = delta
        if rp is not None:
            r, normal = rp.parse_stream_chunk(delta)
            if fin is not None and fin != "abort":
                end_r, end_n = rp.parse_stream_end()
                r, normal = (r or "") + (end_r or ""), (normal or "") + (end_n or "")
            texts["reasoning"].append(r or "")
        if fcp is None:
            texts["content"].append(normal or "")
            continue
        text, calls = fcp.parse_stream_chunk(normal or "")
        if fin is not None and fin != "abort":
            end_text, end_calls = fcp.parse_stream_end()
            text, calls = (text or "") + end_text, list(calls) + list(end_calls)
        texts["content"].append(text or "")
        for item in calls:
            has_calls = True
            slot = slots.setdefault(item.tool_index, [None, None, ""])
            if item.name:
                assert slot[1] is None, f"call {item.tool_index}: name sent twice"
                slot[0], slot[1] = f"call_{item.tool_index}", item.name
            slot[2] += item.parameters
        if fin is not None:  # _check_for_unstreamed_tool_args
            detector = fcp.detector
            if detector.prev_tool_call_arr and detector.streamed_args_for_tool:
                k = len(detector.prev_tool_call_arr) - 1
                if k < len(detector.streamed_args_for_tool):
                    expected = detector.prev_tool_call_arr[k].get("arguments", {})
                    expected = expected if isinstance(expected, str) else json.dumps(expected, ensure_ascii=False)
                    actual = detector.streamed_args_for_tool[k]
                    rest = expected[len(actual) :] if expected.startswith(actual) else ""
                    if rest:
                        out.backfill.append(rest)
                        slots[k][2] += rest
    incomplete = getattr(fcp.detector, "incomplete_tool_call_indices", set()) if fcp is not None else set()
    out.finish_reason = "tool_calls" if has_calls and finish == "stop" and not incomplete else finish
    out.reasoning = "".join(texts["reasoning"]) or None
    out.content = "".join(texts["content"]) or None
    out.tool_calls = [tuple(slots[k]) for k in sorted(slots)]  # type: ignore[misc]
    return out


def whole(
    reasoning: str | None,
    tool_parser: str | None,
    text: str,
    *,
    finish: str = "stop",
    tools: Any = None,
    force_reasoning: bool | None = None,
    **body: Any,
) -> Reply:
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    req = request(tools, stream=False, **body)
    out = Reply(finish_reason=finish)
    if reasoning:
        rp = ReasoningParser(
            model_type=reasoning,
            stream_reasoning=False,
            force_reasoning=force_reasoning,
            request=req,
            tokenizer=None,
            tool_call_parser_active=True,
        )
        out.reasoning, text = rp.parse_non_stream(text)
    out.content = text
    if _tool_parsing(req, tool_parser):
        fcp = FunctionCallParser(req.tools, tool_parser, tokenizer=None, tool_choice=req.tool_choice)
        if fcp.has_tool_call(text):
            text, items = fcp.parse_non_stream(text)
            out.content = text
            out.tool_calls = [(f"call_{i}", c.name, c.parameters) for i, c in enumerate(items)]
            if items and finish == "stop":
                out.finish_reason = "tool_calls"
    return out
