"""The shared builder for ``<think>``-style reasoning blocks.

Most families differ only in their marker strings, their default, and the request switch
that turns thinking on or off; they all build their spec here.
"""

from __future__ import annotations

from collections.abc import Callable

from .._request import Request
from .._spec import CONTENT, REASONING, Act, FormatSpec, Region, rules


def thinking_switch(*names: str, default: bool) -> Callable[[Request], str]:
    """Initial state from a chat-template switch (first of ``names`` present wins)."""

    def initial(request: Request) -> str:
        return REASONING if request.switch(*names, default=default) else CONTENT

    initial.__doc__ = f"thinking from chat_template_kwargs {'/'.join(names)}, default {'on' if default else 'off'}"
    return initial


def always_reasoning(_request: Request) -> str:
    """the output starts inside reasoning (the template pre-fills the start marker)"""
    return REASONING


def think_format(
    name: str,
    *,
    start: tuple[str, ...] = ("<think>",),
    end: tuple[str, ...] = ("</think>",),
    special: bool = True,
    initial: Callable[[Request], str],
    tool_start_ends_reasoning: bool = False,
    turn_markers: tuple[str, ...] = (),
    models: tuple[str, ...] = (),
    reference: str = "",
    aliases: tuple[str, ...] = (),
) -> FormatSpec:
    """A reasoning block between ``start`` and ``end`` markers.

    A start marker inside reasoning is absorbed (the block may or may not open with one); a
    duplicate end marker in content is absorbed; a start marker in content is text.
    """
    return FormatSpec(
        name=name,
        kind="reasoning",
        aliases=aliases,
        terminals={"THINK_START": start, "THINK_END": end},
        special=frozenset({"THINK_START", "THINK_END"}) if special else frozenset(),
        regions={REASONING: Region.REASONING, CONTENT: Region.CONTENT},
        table=rules(
            (REASONING, "THINK_START", REASONING, ()),
            (REASONING, "THINK_END", CONTENT, (Act.REASONING_END,)),
            (CONTENT, "THINK_END", CONTENT, ()),
        ),
        initial=initial,
        tool_start_ends_reasoning=tool_start_ends_reasoning,
        turn_markers=turn_markers,
        models=models,
        reference=reference,
    )
