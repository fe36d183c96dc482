"""The controlled conversations a chat template is rendered with, and their renders.

Detection never reads the template's source for markers: it renders these conversations and
compares the results (``diff``). Every conversation differs from a baseline in one thing:

* the generation prompt under each request switch (``SETTINGS``: thinking on / off by
  ``enable_thinking``, ``thinking`` and ``reasoning_effort``, and none given);
* the final assistant turn: content only, empty, with reasoning (under each key templates
  read: ``reasoning_content``, ``reasoning``, ``thinking``, a ``thinking`` content chunk), with
  reasoning written into the content (``<think>…</think>`` and the like: does the template strip
  it?), and with one and with two sentinel tool calls (arguments as an object, else as a JSON
  string, as templates disagree on which they take);
* the same turns followed by a second user turn, for templates that render a final assistant
  turn differently from one in the history.

Sentinels are words no template or marker contains, so every occurrence in a render is ours.
A render that raises (templates reject shapes they do not support: two calls, string
arguments) is recorded as ``None`` with its error: that is evidence too.

Cost: one Jinja render per conversation asked for (each is cached); a template is compiled
once (``trisect.templates``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import TemplateError, TrisectError
from ..templates import ChatTemplate

USER = "ZQUSERZQ"
USER2 = "ZQUSERTWOZQ"
CONTENT = "ZQCONTENTZQ"
REASONING = "ZQREASONZQ"

NAMES = ("zq_alpha", "zq_beta")
ARGUMENTS: Mapping[str, Any] = {"zq_key": "ZQVALUEZQ", "zq_num": 42}
CALL_IDS = ("zqcall001", "zqcall002")  # 9 letters and digits: Mistral templates check the shape

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": "A detection sentinel.",
            "parameters": {
                "type": "object",
                "properties": {"zq_key": {"type": "string"}, "zq_num": {"type": "integer"}},
                "required": ["zq_key", "zq_num"],
            },
        },
    }
    for name in NAMES
]

# (label, chat_template_kwargs): the request switches formats read, and none (the default)
SETTINGS: tuple[tuple[str, Mapping[str, Any]], ...] = (
    ("default", {}),
    ("enable_thinking=true", {"enable_thinking": True}),
    ("enable_thinking=false", {"enable_thinking": False}),
    ("thinking=true", {"thinking": True}),
    ("thinking=false", {"thinking": False}),
    ("reasoning_effort=high", {"reasoning_effort": "high"}),
    ("reasoning_effort=none", {"reasoning_effort": "none"}),
)

# how templates take an assistant's reasoning (the first that renders the sentinel is used)
REASONING_SHAPES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("reasoning_content", {"content": CONTENT, "reasoning_content": REASONING}),
    ("reasoning", {"content": CONTENT, "reasoning": REASONING}),
    ("thinking", {"content": CONTENT, "thinking": REASONING}),
    (
        "thinking chunk",
        {"content": [{"type": "thinking", "thinking": REASONING}, {"type": "text", "text": CONTENT}]},
    ),
)


def call(index: int, *, as_string: bool) -> dict[str, Any]:
    arguments: Any = json.dumps(ARGUMENTS) if as_string else dict(ARGUMENTS)
    return {"id": CALL_IDS[index], "type": "function", "function": {"name": NAMES[index], "arguments": arguments}}


def assistant(**fields: Any) -> dict[str, Any]:
    return {"role": "assistant", **fields}


def calls(count: int, *, as_string: bool) -> list[dict[str, Any]]:
    return [call(i, as_string=as_string) for i in range(count)]


@dataclass(frozen=True)
class Render:
    """One render: its text, or the error the template raised."""

    text: str | None
    error: str = ""


_PLACEHOLDER_TOKENS = {"bos_token": "", "eos_token": "</s>"}  # for a bare .jinja without its tokenizer config


@dataclass
class Probe:
    """A template and the renders made of it so far (cached by conversation)."""

    template: ChatTemplate
    _cache: dict[str, Render] = field(default_factory=dict)

    @classmethod
    def of(cls, template: ChatTemplate) -> Probe:
        special = {**_PLACEHOLDER_TOKENS, **template.special_tokens}
        return cls(replace(template, special_tokens=special))

    def render(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: bool | Sequence[Mapping[str, Any]] = False,
        generation: bool = False,
        kwargs: Mapping[str, Any] | None = None,
    ) -> Render:
        """``tools``: the sentinel tools (``True``), none, or a list of tool definitions."""
        key = json.dumps([messages, tools, generation, kwargs or {}], sort_keys=True, default=str)
        found = self._cache.get(key)
        if found is None:
            listed = TOOLS if tools is True else list(tools) if tools else None
            try:
                text = self.template.render(messages, tools=listed, add_generation_prompt=generation, **(kwargs or {}))
                found = Render(text)
            except (TemplateError, TrisectError) as exc:
                found = Render(None, str(exc))
            self._cache[key] = found
        return found

    # the conversations -----------------------------------------------------------------

    def base(self, *, tools: bool = False, kwargs: Mapping[str, Any] | None = None) -> Render:
        """The user turn alone, without a generation prompt."""
        return self.render([{"role": "user", "content": USER}], tools=tools, kwargs=kwargs)

    def prompt(self, *, tools: bool = False, kwargs: Mapping[str, Any] | None = None) -> Render:
        """The user turn and the generation prompt."""
        return self.render([{"role": "user", "content": USER}], tools=tools, generation=True, kwargs=kwargs)

    def turn(
        self,
        message: Mapping[str, Any],
        *,
        tools: bool = False,
        history: bool = False,
        kwargs: Mapping[str, Any] | None = None,
    ) -> Render:
        """The user turn and ``message``; ``history``: followed by a second user turn."""
        messages: list[Mapping[str, Any]] = [{"role": "user", "content": USER}, message]
        if history:
            messages.append({"role": "user", "content": USER2})
        return self.render(messages, tools=tools, kwargs=kwargs)
