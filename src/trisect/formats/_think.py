"""The shared builder for ``<think>``-style reasoning blocks.

Most families differ only in their marker strings, their default, and the request switch
that turns thinking on or off; they all build their spec here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..engine.spec import CONTENT, REASONING, Act, FormatSpec, Region, VocabSuffix, rules
from ..engine.stream_options import StreamOptions


def thinking_switch(*names: str, default: bool) -> Callable[[StreamOptions], str]:
    """Initial state from a chat-template switch (first of ``names`` present wins)."""

    def initial(request: StreamOptions) -> str:
        return REASONING if request.switch(*names, default=default) else CONTENT

    initial.__doc__ = f"thinking from chat_template_kwargs {'/'.join(names)}, default {'on' if default else 'off'}"
    return initial


def effort_switch(
    *, off: tuple[str, ...], default: str | None, names: tuple[str, ...] = ()
) -> Callable[[StreamOptions], str]:
    """Initial state from ``reasoning_effort`` (``chat_template_kwargs`` first, then the request
    field; ``default`` when neither is given): no thinking when the effort is one of ``off``;
    otherwise the boolean switches ``names`` decide (default on)."""

    def initial(request: StreamOptions) -> str:
        effort = request.chat_template_kwargs.get("reasoning_effort") or request.reasoning_effort or default
        if effort in off:
            return CONTENT
        return REASONING if request.switch(*names, default=True) else CONTENT

    initial.__doc__ = f"thinking unless reasoning_effort is {'/'.join(off)} (default {default!r})"
    return initial


def always_reasoning(_request: StreamOptions) -> str:
    """the output starts inside reasoning (the template pre-fills the start marker)"""
    return REASONING


def think_format(
    name: str,
    *,
    start: tuple[str, ...] = ("<think>",),
    end: tuple[str, ...] = ("</think>",),
    special: bool | frozenset[str] = True,
    initial: Callable[[StreamOptions], str],
    tool_start_ends_reasoning: bool = False,
    turn_markers: tuple[str, ...] = (),
    models: tuple[str, ...] = (),
    reference: str = "",
    aliases: tuple[str, ...] = (),
    opens_in_content: bool = False,
    reopens_by_id: bool = False,
    ends_on: Mapping[str, tuple[str, ...]] | None = None,
    answer: tuple[tuple[str, ...], tuple[str, ...]] | None = None,
    absorb: Mapping[str, tuple[str, ...]] | None = None,
    drop_in_content: tuple[str, ...] = (),
    reasoning_fallback: Callable[[StreamOptions], bool] | None = None,
    vocab_suffix: VocabSuffix | None = None,
    plain_when_off: bool = False,
    fallback_when_empty: bool = False,
    ends_by_id: bool = False,
    model_opens: bool = False,
    start_in_reasoning_is_text: bool = False,
) -> FormatSpec:
    """A reasoning block between ``start`` and ``end`` markers.

    A start marker inside reasoning is absorbed (the block may or may not open with one), unless
    ``start_in_reasoning_is_text``: where only the output's own marker opens the block (it starts
    in content), a second one is reasoning text as written (Granite's phrase). An end
    marker in content, where no block is open, is content text as written: the family's
    templates write an assistant message's content verbatim after ``</think>``, so a second
    closer there is text of the content (``<think>\nR\n</think>\n\nb</think>c`` renders
    content ``b</think>c``), and nothing of the model's text is ever dropped. A start marker in
    content is text, unless ``opens_in_content`` (reasoning is opted into by the marker: the block
    may come anywhere, and a second block after content is reasoning too, appended to it) or
    ``reopens_by_id``: the start marker given by id as its special token opens a new block after
    content (the model thinking again, appended to reasoning); written as text there it is text,
    and so is the closer after it, so a content that mentions ``<think>`` keeps every character.
    ``start=()``: the family has no start marker (the block always starts the output).
    ``ends_on``: further terminals (name -> markers) that end reasoning when met inside it, the
    marker itself kept as content text — a tool-call marker, for use without a tool format
    (``combine()`` lets the tool format's transition replace these; vLLM's reasoning pass ends
    reasoning there and re-emits the marker as text) — or dropped if also in ``drop_in_content``
    (an end-of-turn marker). ``answer``: markers that wrap the
    content (``<answer>`` … ``</answer>``): absorbed in content; the opening one also ends
    reasoning. ``absorb``: further terminals whose markers are dropped wherever they appear
    (framing that is neither reasoning nor content: end-of-turn tokens, reserved tokens).
    ``drop_in_content``: terminals of ``ends_on`` that are also dropped in content (an
    end-of-turn marker that ends reasoning). ``special``: all terminals are special tokens
    (``True``), none (``False``), or the named ones.
    ``vocab_suffix``: the markers carry a per-checkpoint suffix (``FormatSpec.vocab_suffix``).
    ``plain_when_off``: with thinking switched off the markers are plain text
    (``FormatSpec.plain_when_off``); ``fallback_when_empty``: see ``FormatSpec``; ``ends_by_id``:
    the ``ends_on`` markers end reasoning only as special tokens given by id (``Rule.by_id``);
    ``model_opens``: the templates leave the start marker to the model (``FormatSpec.model_opens``).
    """
    terminals: dict[str, tuple[str, ...]] = {"THINK_END": end}
    rows: list[tuple[Any, ...]] = [
        (REASONING, "THINK_END", CONTENT, (Act.REASONING_END,)),
        # the closer of a block a tool call interrupted (Rule.after_interrupt); elsewhere text
        (CONTENT, "THINK_END", CONTENT, (), {"after_interrupt": True}),
    ]
    if start:
        terminals["THINK_START"] = start
        if not start_in_reasoning_is_text:
            rows.append((REASONING, "THINK_START", REASONING, ()))
        if opens_in_content:
            rows.append((CONTENT, "THINK_START", REASONING, ()))
        elif reopens_by_id:
            rows.append((CONTENT, "THINK_START", REASONING, (), {"by_id": True}))
    for terminal, markers in (ends_on or {}).items():
        terminals[terminal] = markers
        kept = () if terminal in drop_in_content else (Act.MARKER_TEXT,)
        guard = ({"by_id": True},) if ends_by_id else ()
        rows.append((REASONING, terminal, CONTENT, (Act.REASONING_END, *kept), *guard))
    if answer is not None:
        terminals["ANSWER_START"], terminals["ANSWER_END"] = answer
        rows += [
            (REASONING, "ANSWER_START", CONTENT, (Act.REASONING_END,)),
            (CONTENT, "ANSWER_START", CONTENT, ()),
            (CONTENT, "ANSWER_END", CONTENT, ()),
        ]
    for terminal, markers in (absorb or {}).items():
        terminals[terminal] = markers
        rows += [(REASONING, terminal, REASONING, ()), (CONTENT, terminal, CONTENT, ())]
    rows += [(CONTENT, terminal, CONTENT, ()) for terminal in drop_in_content]
    return FormatSpec(
        name=name,
        kind="reasoning",
        aliases=aliases,
        terminals=terminals,
        special=special if isinstance(special, frozenset) else frozenset(terminals) if special else frozenset(),
        regions={REASONING: Region.REASONING, CONTENT: Region.CONTENT},
        table=rules(*rows),
        initial=initial,
        tool_start_ends_reasoning=tool_start_ends_reasoning,
        turn_markers=turn_markers,
        reasoning_fallback=reasoning_fallback,
        plain_when_off=plain_when_off,
        model_opens=model_opens,
        fallback_when_empty=fallback_when_empty,
        vocab_suffix=vocab_suffix,
        models=models,
        reference=reference,
    )
