"""``POST /v1/responses``: the Responses API as a fold over the chat answer.

A Responses request is translated into a chat-completions body (``chat_body``) and served by
the same path, so rendering, grammars and parsing are the chat ones. Its answer renders the
deltas of the choice's ``ChatStream`` (``feed_delta``: the message fold's deltas, with the call
ids the chat answer would send), never its chunk dicts (``ResponseFold``): reasoning text → a ``reasoning`` output item
(``reasoning_text`` content), content → a ``message`` item (one ``output_text`` part), each tool
call → a ``function_call`` item. An item is opened where its first delta arrives; a reasoning
item closes when content or a call begins, a call's item when the next call begins, the rest at
the end, each with its ``.done`` events, then ``response.completed`` (``response.incomplete``
with ``incomplete_details.reason = "max_output_tokens"`` when the output was cut at
``max_output_tokens``). Events carry ``sequence_number`` from 0; the SSE lines name each event
(``event: response.output_text.delta``), as OpenAI's own stream does. A failure mid-stream: the
open items are flushed and closed, then ``error`` and ``response.failed``.

Not streamed: the same fold over the choice's atomic stream (calls whole once complete), its
reasoning, content and calls as items in that order.

Input: ``input`` (a string, or items: messages of every role with text parts,
``function_call``, ``function_call_output``, ``reasoning``), ``instructions`` (a system message
first), ``tools`` (function tools), ``tool_choice``, ``parallel_tool_calls``,
``max_output_tokens``, ``temperature``, ``top_p``, ``text.format`` (``json_schema`` /
``json_object``), ``reasoning.effort``, ``top_logprobs`` with
``include: ["message.output_text.logprobs"]``; ``metadata``, ``store``, ``user`` and the other
fields with no effect on the output are echoed or ignored; stateful fields
(``previous_response_id``, ``conversation``, ``background``) are a 400: the server keeps no
state.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any

from ..message.types import Delta
from ..openai import ChatStream
from .chat_completions import Answer
from .errors import APIError, from_exception
from .plan import function_tools
from .upstream.base import CompletionPiece, closing

_IGNORED = {
    "store",
    "metadata",
    "user",
    "service_tier",
    "prompt_cache_key",
    "safety_identifier",
    "stream_options",
    "prompt_cache_retention",
    "model",
    "stream",
}
_MAPPED = {
    "input",
    "instructions",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "max_output_tokens",
    "temperature",
    "top_p",
    "text",
    "reasoning",
    "top_logprobs",
    "include",
    "truncation",
    "seed",
    "chat_template_kwargs",
}
_STATEFUL = {"previous_response_id", "conversation", "background", "prompt", "context_management", "max_tool_calls"}
_INCLUDES = {"message.output_text.logprobs", "reasoning.encrypted_content"}


def _hex() -> str:
    return uuid.uuid4().hex


def _texts(content: Any, where: str) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise APIError(f"{where} must be a string or a list of parts", param=where)
    texts = []
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind not in ("input_text", "output_text", "text", "refusal", "summary_text", "reasoning_text"):
            raise APIError(f"{where}[{j}]: parts of type {kind!r} are not supported (text only)", param=where)
        texts.append(part.get("refusal") if kind == "refusal" else part.get("text", ""))
    return "\n".join(texts)


def _messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    instructions = body.get("instructions")
    if instructions:
        if not isinstance(instructions, str):
            raise APIError("instructions must be a string", param="instructions")
        messages.append({"role": "system", "content": instructions})
    items = body.get("input")
    if isinstance(items, str):
        return [*messages, {"role": "user", "content": items}]
    if not isinstance(items, list) or not items:
        raise APIError("input must be a string or a non-empty list of items", param="input")
    reasoning: str | None = None
    for i, item in enumerate(items):
        where = f"input[{i}]"
        if not isinstance(item, Mapping):
            raise APIError(f"{where} must be an object", param=where)
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            message: dict[str, Any] = {"role": role, "content": _texts(item.get("content"), f"{where}.content")}
            if role == "assistant" and reasoning is not None:
                message["reasoning"] = reasoning
                reasoning = None
            messages.append(message)
        elif kind == "function_call":
            call = {
                "id": item.get("call_id") or item.get("id"),
                "type": "function",
                "function": {"name": item.get("name"), "arguments": item.get("arguments") or "{}"},
            }
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant" and reasoning is None:
                last.setdefault("tool_calls", []).append(call)
            else:
                message = {"role": "assistant", "content": None, "tool_calls": [call]}
                if reasoning is not None:
                    message["reasoning"] = reasoning
                    reasoning = None
                messages.append(message)
        elif kind == "function_call_output":
            output = item.get("output")
            messages.append(
                {"role": "tool", "tool_call_id": item.get("call_id"), "content": _texts(output, f"{where}.output")}
            )
        elif kind == "reasoning":
            parts = item.get("content") or item.get("summary") or []
            reasoning = _texts(parts, f"{where}.content") or ""
        else:
            raise APIError(f"{where}: input items of type {kind!r} are not supported", param=where)
    return messages


def _tools(tools: Any) -> list[dict[str, Any]] | None:
    """Responses' flat function tools → chat tools (a tool without a type, or of another type: a 400)."""
    if isinstance(tools, list):
        tools = [{**t, "type": None} if isinstance(t, Mapping) and "type" not in t else t for t in tools]
    return function_tools(tools)


def chat_body(body: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """A Responses request → (the chat-completions body, the fields the Response echoes)."""
    if not isinstance(body, Mapping):
        raise APIError("the request body must be a JSON object")
    for name, value in body.items():
        if value is None or name in _IGNORED or name in _MAPPED:
            continue
        if name in _STATEFUL:
            if value is False:
                continue
            raise APIError(f"{name} is not supported: trisect serve keeps no state between requests", param=name)
        raise APIError(f"unrecognized request argument: {name}", param=name)
    include = body.get("include") or []
    unknown = set(include) - _INCLUDES
    if unknown:
        raise APIError(f"include: {', '.join(sorted(unknown))} not supported", param="include")
    if body.get("truncation") not in (None, "disabled"):
        raise APIError("truncation must be 'disabled'", param="truncation")
    chat: dict[str, Any] = {"messages": _messages(body), "stream": bool(body.get("stream"))}
    if body.get("model") is not None:
        chat["model"] = body["model"]
    tools = _tools(body.get("tools"))
    if tools:
        chat["tools"] = tools
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping):
        if choice.get("type") != "function" or not isinstance(choice.get("name"), str):
            raise APIError("tool_choice must be none, auto, required or {type: function, name}", param="tool_choice")
        chat["tool_choice"] = {"type": "function", "function": {"name": choice["name"]}}
    elif choice is not None:
        chat["tool_choice"] = choice
    for name, target in (
        ("parallel_tool_calls", "parallel_tool_calls"),
        ("max_output_tokens", "max_completion_tokens"),
        ("temperature", "temperature"),
        ("top_p", "top_p"),
        ("seed", "seed"),
        ("chat_template_kwargs", "chat_template_kwargs"),
    ):
        if body.get(name) is not None:
            chat[target] = body[name]
    reasoning = body.get("reasoning") or {}
    if reasoning.get("effort") is not None:
        chat["reasoning_effort"] = reasoning["effort"]
    fmt = (body.get("text") or {}).get("format")
    if fmt and fmt.get("type") == "json_schema":
        chat["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": fmt.get("name", "output"), "schema": fmt.get("schema") or {}},
        }
    elif fmt and fmt.get("type") == "json_object":
        chat["response_format"] = {"type": "json_object"}
    if "message.output_text.logprobs" in include:
        chat["logprobs"] = True
        chat["top_logprobs"] = body.get("top_logprobs") or 0
    if chat["stream"]:
        chat["stream_options"] = {"include_usage": True}
    echo = {
        "instructions": body.get("instructions"),
        "metadata": body.get("metadata") or {},
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "temperature": body.get("temperature"),
        "top_p": body.get("top_p"),
        "max_output_tokens": body.get("max_output_tokens"),
        "tool_choice": body.get("tool_choice") or "auto",
        "tools": list(body.get("tools") or []),
        "text": body.get("text") or {"format": {"type": "text"}},
        "reasoning": {"effort": reasoning.get("effort"), "summary": None},
        "top_logprobs": body.get("top_logprobs"),
        "user": body.get("user"),
        "store": False,
        "truncation": "disabled",
    }
    return chat, echo


def _logprobs(entries: Any) -> list[dict[str, Any]]:
    return [
        {
            "token": e["token"],
            "logprob": e["logprob"],
            "bytes": e.get("bytes") or [],
            "top_logprobs": [
                {"token": t["token"], "logprob": t["logprob"], "bytes": t.get("bytes") or []}
                for t in e.get("top_logprobs") or ()
            ],
        }
        for e in entries or ()
    ]


class ResponseFold:
    """A choice's deltas → Responses events (streamed) and the final ``response`` object."""

    def __init__(self, answer: Answer, echo: dict[str, Any]) -> None:
        self.answer = answer
        self.echo = echo
        self.id = "resp_" + _hex()
        self.created_at = int(time.time())
        self.sequence = 0
        self.items: list[dict[str, Any]] = []  # output items, by output_index
        self.open: dict[str, int] = {}  # "reasoning" / "message" / "call" -> output_index of the open item
        self.calls: dict[int, int] = {}  # chat tool-call index -> output_index
        self.usage: dict[str, Any] | None = None
        self.finish_reason: str | None = None

    # ------------------------------------------------------------------ events

    def _event(self, kind: str, **fields: Any) -> dict[str, Any]:
        event = {"type": kind, "sequence_number": self.sequence, **fields}
        self.sequence += 1
        return event

    def response(self, status: str, error: dict[str, Any] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "error": error,
            "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
            "model": self.answer.model,
            "output": [dict(item) for item in self.items] if status != "in_progress" else [],
            **self.echo,
            "usage": self.usage if status != "in_progress" else None,
        }
        return out

    def start(self) -> list[dict[str, Any]]:
        return [
            self._event("response.created", response=self.response("in_progress")),
            self._event("response.in_progress", response=self.response("in_progress")),
        ]

    def _close(self, key: str) -> list[dict[str, Any]]:
        index = self.open.pop(key, None)
        if index is None:
            return []
        item = self.items[index]
        item["status"] = "completed"
        if item["type"] in ("reasoning", "message"):
            part = item["content"][0]
            if item["type"] == "reasoning":
                kind, done = "response.reasoning_text.done", {"text": part["text"]}
            else:
                kind, done = "response.output_text.done", {"text": part["text"], "logprobs": part["logprobs"]}
            where = {"item_id": item["id"], "output_index": index, "content_index": 0}
            return [
                self._event(kind, **where, **done),
                self._event("response.content_part.done", **where, part=_copy(part)),
                self._event("response.output_item.done", output_index=index, item=_copy(item)),
            ]
        return [
            self._event(
                "response.function_call_arguments.done",
                item_id=item["id"],
                output_index=index,
                name=item["name"],
                arguments=item["arguments"],
            ),
            self._event("response.output_item.done", output_index=index, item=_copy(item)),
        ]

    def _add(self, key: str, item: dict[str, Any]) -> tuple[int, list[dict[str, Any]]]:
        index = len(self.items)
        self.items.append(item)
        self.open[key] = index
        shown = _copy(item)
        texts = item["type"] in ("reasoning", "message")
        if texts:
            shown["content"] = []
        events = [self._event("response.output_item.added", output_index=index, item=shown)]
        if texts:  # its one part, still empty
            part = _copy(item["content"][0])
            events.append(
                self._event(
                    "response.content_part.added", item_id=item["id"], output_index=index, content_index=0, part=part
                )
            )
        return index, events

    def piece(self, chat: ChatStream, piece: CompletionPiece) -> list[dict[str, Any]]:
        """The events of one engine piece, fed to the choice's ``chat`` stream."""
        if piece.prompt_tokens is not None:
            chat.prompt_tokens = piece.prompt_tokens
        events: list[dict[str, Any]] = []
        if piece.text or piece.token_ids or piece.logprobs:
            events += self.feed(chat, chat.feed_delta(piece.text, piece.token_ids, logprobs=piece.logprobs))
        if piece.finish_reason is not None:
            events += self.end(chat, piece.finish_reason, piece.completion_tokens)
        return events

    def end(self, chat: ChatStream, reason: str | None, completion_tokens: int | None = None) -> list[dict[str, Any]]:
        """The events of the choice's last delta (the text its stream held back); the finish
        reason and usage are kept for the response."""
        events = self.feed(chat, chat.finish_delta(reason, completion_tokens=completion_tokens))
        self.finish_reason = chat.finish_reason
        u = chat.usage()
        self.usage = {
            "input_tokens": u["prompt_tokens"],
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": u["completion_tokens"],
            "output_tokens_details": {"reasoning_tokens": u["completion_tokens_details"]["reasoning_tokens"]},
            "total_tokens": u["total_tokens"],
        }
        return events

    def _text(self, key: str, text: str, logprobs: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
        """``text`` appended to the open reasoning or message item (opened first if none is)."""
        events: list[dict[str, Any]] = []
        if key not in self.open:
            if key == "reasoning":
                item = {
                    "type": "reasoning",
                    "id": "rs_" + _hex(),
                    "summary": [],
                    "content": [{"type": "reasoning_text", "text": ""}],
                    "status": "in_progress",
                }
            else:
                item = {
                    "type": "message",
                    "id": "msg_" + _hex(),
                    "role": "assistant",
                    "status": "in_progress",
                    "content": [{"type": "output_text", "text": "", "annotations": [], "logprobs": []}],
                }
            events += self._add(key, item)[1]
        index = self.open[key]
        part = self.items[index]["content"][0]
        part["text"] += text
        if logprobs is None:
            kind, extra = "response.reasoning_text.delta", {}
        else:
            part["logprobs"] += logprobs
            kind, extra = "response.output_text.delta", {"logprobs": logprobs}
        events.append(
            self._event(kind, item_id=self.items[index]["id"], output_index=index, content_index=0, delta=text, **extra)
        )
        return events

    def feed(self, chat: ChatStream, delta: Delta | None) -> list[dict[str, Any]]:
        """The events of one delta of the choice's stream (its calls carry the ids ``chat``
        sends; the logprobs it kept go with the text)."""
        if delta is None or not (delta.reasoning or delta.content or delta.tool_calls):
            return []
        logprobs = _logprobs(chat.pending_logprobs())
        events: list[dict[str, Any]] = []
        if delta.reasoning:
            events += self._text("reasoning", delta.reasoning, None)
        if delta.content:
            events += self._close("reasoning")
            events += self._text("message", delta.content, logprobs)
        for call in delta.tool_calls:
            if call.name is not None:  # the call's first piece
                events += self._close("reasoning")
                events += self._close("call")
                index, added = self._add(
                    "call",
                    {
                        "type": "function_call",
                        "id": "fc_" + _hex(),
                        "call_id": call.id or "call_" + _hex(),
                        "name": call.name,
                        "arguments": "",
                        "status": "in_progress",
                    },
                )
                self.calls[call.index] = index
                events += added
            index = self.calls[call.index]
            if call.arguments:
                self.items[index]["arguments"] += call.arguments
                events.append(
                    self._event(
                        "response.function_call_arguments.delta",
                        item_id=self.items[index]["id"],
                        output_index=index,
                        delta=call.arguments,
                    )
                )
        return events

    def finish(self) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        for key in sorted(self.open, key=self.open.__getitem__):
            events += self._close(key)
        status = "incomplete" if self.finish_reason == "length" else "completed"
        events.append(self._event(f"response.{status}", response=self.response(status)))
        return events

    def fail(self, exc: BaseException) -> list[dict[str, Any]]:
        error = from_exception(exc)
        events: list[dict[str, Any]] = []
        for key in sorted(self.open, key=self.open.__getitem__):
            events += self._close(key)
        events.append(self._event("error", code=str(error.status), message=error.message, param=error.param))
        events.append(
            self._event(
                "response.failed", response=self.response("failed", {"code": "server_error", "message": error.message})
            )
        )
        return events

    def whole(self) -> dict[str, Any]:
        """The ``response`` once the choice finished (every item completed, no events)."""
        for key in list(self.open):
            self.items[self.open.pop(key)]["status"] = "completed"
        return self.response("incomplete" if self.finish_reason == "length" else "completed")


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value))


def _sse(event: dict[str, Any]) -> bytes:
    data = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    return f"event: {event['type']}\ndata: {data}\n\n".encode()


async def sse_events(fold: ResponseFold, source: AsyncIterator[CompletionPiece]) -> AsyncIterator[bytes]:
    for event in fold.start():
        yield _sse(event)
    chat = fold.answer.stream(0)
    try:
        async with closing(source) as pieces:
            async for piece in pieces:
                for event in fold.piece(chat, piece):
                    yield _sse(event)
    except Exception as exc:  # noqa: BLE001 - becomes the stream's error and response.failed
        if chat.finish_reason is None:  # what the stream held back, before the failure
            for event in fold.feed(chat, chat.finish_delta(None)):
                yield _sse(event)
        for event in fold.fail(exc):
            yield _sse(event)
        return
    for event in fold.finish():
        yield _sse(event)


async def whole(fold: ResponseFold, source: AsyncIterator[CompletionPiece]) -> dict[str, Any]:
    """The ``response`` of a non-streamed answer: the choice's atomic stream, fed each piece."""
    chat = fold.answer.stream(0, atomic=True)
    async with closing(source) as pieces:
        async for piece in pieces:
            fold.piece(chat, piece)
    if chat.finish_reason is None:
        raise APIError("the upstream did not finish choice 0", status=502)
    return fold.whole()
