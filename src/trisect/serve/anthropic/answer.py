"""trisect deltas → an Anthropic Messages answer: content blocks, stream events, stop reason.

``MessageFold`` folds the ``Delta`` objects of one parser stream (``Parser.stream``, calls
atomic) into content blocks in the order they appear: reasoning → a ``thinking`` block, content
→ a ``text`` block, each call → a ``tool_use`` block. A block opens with its first delta and
closes when a block of another kind opens, or at the end. The streamed events are Anthropic's,
in its order: ``message_start`` (usage with ``input_tokens``), per block ``content_block_start``
/ ``content_block_delta`` (``thinking_delta`` then one ``signature_delta``, ``text_delta``,
``input_json_delta``) / ``content_block_stop``, then ``message_delta`` (``stop_reason``,
``stop_sequence``, usage with ``output_tokens``) and ``message_stop``. Not streamed, the answer
is the same fold's message (non-streaming is streaming).

Calls are atomic: a ``tool_use`` block opens only once its call is complete (its arguments in
one ``input_json_delta``), because the Messages stream cannot take a block back, and an agent
runs every ``tool_use`` it receives. So a call the output was cut inside never becomes a block.

``stop_reason``: ``max_tokens`` when the engine stopped at the limit (also inside a call);
otherwise ``tool_use`` when a call was returned; ``stop_sequence`` (with the matched string)
when one of ``stop_sequences`` ended it; else ``end_turn``. ``thinking`` blocks carry a
``signature`` (trisect signs nothing: the value only marks the block as trisect's, and a
signature sent back in the history is ignored).

Cost: O(delta) per feed, one event dict per block change and per delta.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from ...message.types import Delta

SIGNATURE = "trisect-unsigned"


def _hex() -> str:
    return uuid.uuid4().hex


class MessageFold:
    def __init__(self, model: str, *, message_id: str | None = None) -> None:
        self.id = message_id or "msg_" + _hex()[:24]
        self.model = model
        self.blocks: list[dict[str, Any]] = []
        self.kind: str | None = None  # the open block's type
        self.calls = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.stop_reason: str | None = None
        self.stop_sequence: str | None = None

    # ---------------------------------------------------------------- events

    def message(self, *, started: bool = False) -> dict[str, Any]:
        content = [] if started else [dict(b) for b in self.blocks] or [{"type": "text", "text": ""}]
        return {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": None if started else self.stop_reason,
            "stop_sequence": None if started else self.stop_sequence,
            "usage": {"input_tokens": self.input_tokens, "output_tokens": 0 if started else self.output_tokens},
        }

    def start(self) -> list[dict[str, Any]]:
        return [{"type": "message_start", "message": self.message(started=True)}]

    def _close(self) -> list[dict[str, Any]]:
        if self.kind is None:
            return []
        index = len(self.blocks) - 1
        events = []
        if self.kind == "thinking":
            self.blocks[index]["signature"] = SIGNATURE
            delta = {"type": "signature_delta", "signature": SIGNATURE}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        self.kind = None
        events.append({"type": "content_block_stop", "index": index})
        return events

    def _open(self, block: dict[str, Any]) -> list[dict[str, Any]]:
        events = self._close()
        self.blocks.append(block)
        self.kind = block["type"]
        shown = {**block, "input": {}} if block["type"] == "tool_use" else dict(block)
        events.append({"type": "content_block_start", "index": len(self.blocks) - 1, "content_block": shown})
        return events

    def _text(self, kind: str, field: str, delta_type: str, text: str) -> list[dict[str, Any]]:
        events = (
            []
            if self.kind == kind
            else self._open({"type": kind, field: "", **({"signature": ""} if kind == "thinking" else {})})
        )
        self.blocks[-1][field] += text
        events.append(
            {"type": "content_block_delta", "index": len(self.blocks) - 1, "delta": {"type": delta_type, field: text}}
        )
        return events

    def feed(self, delta: Delta | None) -> list[dict[str, Any]]:
        """The events of one delta."""
        if delta is None:
            return []
        events: list[dict[str, Any]] = []
        if delta.reasoning:
            events += self._text("thinking", "thinking", "thinking_delta", delta.reasoning)
        if delta.content:
            events += self._text("text", "text", "text_delta", delta.content)
        for call in delta.tool_calls:
            arguments = call.arguments or "{}"
            block = {
                "type": "tool_use",
                "id": call.id or "",
                "name": call.name or "",
                "input": json.loads(arguments),
            }
            events += self._open(block)
            partial = {"type": "input_json_delta", "partial_json": arguments}
            events.append({"type": "content_block_delta", "index": len(self.blocks) - 1, "delta": partial})
            self.calls += 1
        return events

    def finish(self, finish_reason: str | None, stop: str | int | None) -> list[dict[str, Any]]:
        events = self._close()
        if finish_reason == "length":
            self.stop_reason = "max_tokens"
        elif self.calls:
            self.stop_reason = "tool_use"
        elif isinstance(stop, str):
            self.stop_reason, self.stop_sequence = "stop_sequence", stop
        else:
            self.stop_reason = "end_turn"
        delta = {"stop_reason": self.stop_reason, "stop_sequence": self.stop_sequence}
        usage = {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens}  # totals, as Anthropic's
        events.append({"type": "message_delta", "delta": delta, "usage": usage})
        events.append({"type": "message_stop"})
        return events

    def fail(self, error: dict[str, Any]) -> list[dict[str, Any]]:
        return [*self._close(), {"type": "error", "error": error}]
