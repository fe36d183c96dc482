"""Render a chat template the way transformers' ``apply_chat_template`` does.

The semantics engines rely on (vLLM renders through transformers), each one a test:

* a sandboxed Jinja environment with ``trim_blocks`` and ``lstrip_blocks``, the ``loopcontrols``
  extension and a ``{% generation %}`` block that renders its body (transformers' assistant
  mask tracker); unlike transformers' immutable sandbox, lists may be appended to (the
  Kimi-K2-Thinking template queues tool-call ids with ``list.append``);
* ``tojson`` is ``json.dumps`` with ``ensure_ascii=False`` and no HTML escaping, taking
  ``indent``, ``separators`` and ``sort_keys``; an iterator (what ``map``, ``select`` and
  ``reject`` return: ``tools | map(attribute='function') | tojson``) is written as the list it
  yields, as llama.cpp's renderer, which such templates are written for, writes it;
* ``raise_exception(message)`` raises ``TemplateError``; ``strftime_now(format)`` formats the
  current time (``ChatTemplate.now`` fixes it, for reproducible renders);
* the variables are ``messages``, ``tools``, ``documents``, ``add_generation_prompt``, the special
  tokens (``bos_token``, ``eos_token``, …) and the request's ``chat_template_kwargs``, which
  win over the special tokens;
* with tools, a template set that has a ``tool_use`` template renders with it;
* ``continue_final_message``: the output is cut right after the final message's text, so the
  model continues it (an error with ``add_generation_prompt``, or when the template does not
  render that text).

jinja2 is imported when a template is first rendered (the ``templates`` extra).
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..errors import RequestError, TemplateError


def _tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys, default=_listed
    )


def _listed(value: Any) -> list[Any]:
    """``json.dumps``' fallback: a lazy sequence (Jinja's filters return generators) is its list."""
    if isinstance(value, Iterator):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _raise(message: str) -> None:
    raise TemplateError(str(message))


@lru_cache(maxsize=64)
def _environment() -> Any:
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import SandboxedEnvironment

    class _Generation(jinja2.ext.Extension):
        """``{% generation %}…{% endgeneration %}`` renders its body."""

        tags = {"generation"}

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return jinja2.nodes.Scope(body, lineno=lineno)

    env = SandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols, _Generation])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    return env


@lru_cache(maxsize=128)
def _compiled(source: str) -> Any:
    import jinja2

    try:
        return _environment().from_string(source)
    except jinja2.TemplateError as exc:
        raise TemplateError(f"the chat template does not compile: {exc}") from exc


@dataclass(frozen=True)
class ChatTemplate:
    """A chat template with the special tokens it renders (see the module docstring)."""

    source: str
    special_tokens: Mapping[str, str] = field(default_factory=dict)  # bos_token, eos_token, …
    tool_use: str | None = None  # the template a template set names "tool_use"
    added_tokens: tuple[str, ...] = ()  # special (added) tokens of the model's vocabulary
    origin: str = ""  # where it was read from
    now: Callable[[], _dt.datetime] | None = None  # strftime_now's clock (None: the real time)

    @property
    def bos_token(self) -> str | None:
        return self.special_tokens.get("bos_token")

    @property
    def eos_token(self) -> str | None:
        return self.special_tokens.get("eos_token")

    def render(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        documents: Sequence[Mapping[str, Any]] | None = None,
        add_generation_prompt: bool = False,
        continue_final_message: bool = False,
        **chat_template_kwargs: Any,
    ) -> str:
        """The prompt text for ``messages`` (``TemplateError`` if the template raises)."""
        if add_generation_prompt and continue_final_message:
            raise RequestError("add_generation_prompt and continue_final_message cannot both be set")
        import jinja2

        source = self.tool_use if tools and self.tool_use else self.source
        template = _compiled(source)
        clock = self.now
        variables: dict[str, Any] = {
            **self.special_tokens,
            "messages": list(messages),
            "tools": list(tools) if tools is not None else None,
            "documents": list(documents) if documents is not None else None,
            "add_generation_prompt": add_generation_prompt,
            "strftime_now": lambda fmt: (clock() if clock is not None else _dt.datetime.now()).strftime(fmt),
            **chat_template_kwargs,
        }
        try:
            text: str = template.render(**variables)
        except TemplateError:
            raise
        except jinja2.TemplateError as exc:
            raise TemplateError(f"the chat template failed: {exc}") from exc
        except (TypeError, KeyError, AttributeError, ValueError, IndexError) as exc:
            raise TemplateError(f"the chat template failed on these messages: {type(exc).__name__}: {exc}") from exc
        if continue_final_message:
            text = _cut_after_final_message(text, messages)
        return text


def _cut_after_final_message(text: str, messages: Sequence[Mapping[str, Any]]) -> str:
    if not messages:
        raise RequestError("continue_final_message needs a final message")
    final = messages[-1].get("content")
    if isinstance(final, (list, tuple)):
        texts = [part.get("text") for part in final if isinstance(part, Mapping) and "text" in part]
        if not texts:
            raise RequestError("continue_final_message: the final message has no text to continue")
        final = texts[-1]
    if not isinstance(final, str):
        raise RequestError("continue_final_message: the final message has no text to continue")
    stripped = final.strip()
    if stripped not in text:
        raise TemplateError("continue_final_message: the template does not render the final message's text")
    at = text.rindex(stripped)
    if text[at : at + len(final.lstrip())] == final.lstrip():
        return text[: at + len(final.lstrip())]  # the template kept the message's trailing spacing
    return text[: at + len(stripped)]
