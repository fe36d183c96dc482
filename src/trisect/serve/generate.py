"""Running one request on the upstream: fan-out of ``n`` and the two-phase grammar.

``pieces(upstream, request, after_reasoning=…)`` is the single stream of ``CompletionPiece``
objects (choices interleaved, each ending with its ``finish_reason``) the answer is built from:

* one engine request when the engine makes all ``n`` choices itself and no phase is needed;
* otherwise one per choice (``Upstream.fans_out``, or two phases), run concurrently, choice
  ``i`` with ``seed + i`` so that seeded choices differ as they do on an engine that samples
  ``n`` itself, merged as they arrive;
* two phases (``after_reasoning``): see ``constraints``. Phase one has the reasoning end
  markers as extra stop strings and no grammar; the engine reports the stop string it matched
  (``CompletionPiece.stop_reason``) — then the marker's text (the engine leaves a matched stop
  string out of its text, its ids in) is sent as a piece of its own and phase two continues
  the prompt + phase one's text + the marker under the grammar, with what is left of
  ``max_tokens``. Any other end of phase one ends the choice (the model never finished
  reasoning, so there is nothing to constrain).

Cancellation: closing the iterator (``aclose()``) cancels every engine request still running;
an error of one choice ends the whole stream with that ``UpstreamError``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace

from .upstream.base import CompletionPiece, CompletionRequest, Upstream, closing

_DONE = object()


async def pieces(
    upstream: Upstream, request: CompletionRequest, *, after_reasoning: tuple[str, ...] = ()
) -> AsyncIterator[CompletionPiece]:
    if request.n == 1 or (not upstream.fans_out and not after_reasoning):
        source = _two_phase(upstream, request, after_reasoning) if after_reasoning else upstream.complete(request)
        async with closing(source) as stream:
            async for piece in stream:
                yield piece
        return
    choices = [replace(request, n=1, seed=None if request.seed is None else request.seed + i) for i in range(request.n)]
    async with closing(_merge(upstream, choices, after_reasoning)) as stream:
        async for piece in stream:
            yield piece


async def _merge(
    upstream: Upstream, choices: list[CompletionRequest], after_reasoning: tuple[str, ...]
) -> AsyncIterator[CompletionPiece]:
    queue: asyncio.Queue[object] = asyncio.Queue()

    async def run(index: int, request: CompletionRequest) -> None:
        source = _two_phase(upstream, request, after_reasoning) if after_reasoning else upstream.complete(request)
        try:
            async with closing(source) as stream:
                async for piece in stream:
                    await queue.put(replace(piece, index=index))
        except Exception as exc:  # noqa: BLE001 - handed to the consumer, which raises it
            await queue.put(exc)
        await queue.put(_DONE)

    tasks = [asyncio.ensure_future(run(i, r)) for i, r in enumerate(choices)]
    running = len(tasks)
    try:
        while running:
            item = await queue.get()
            if item is _DONE:
                running -= 1
            elif isinstance(item, BaseException):
                raise item
            else:
                assert isinstance(item, CompletionPiece)
                yield item
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _two_phase(
    upstream: Upstream, request: CompletionRequest, markers: tuple[str, ...]
) -> AsyncIterator[CompletionPiece]:
    first = replace(request, constraint=None, stop=tuple(dict.fromkeys((*request.stop, *markers))))
    text: list[str] = []
    used = 0
    prompt_tokens: int | None = None
    marker: str | None = None
    async with closing(upstream.complete(first)) as stream:
        async for piece in stream:
            text.append(piece.text)
            used += len(piece.token_ids or ())
            if piece.finish_reason is None:
                yield piece
                continue
            if piece.stop_reason not in markers or not isinstance(piece.stop_reason, str):
                yield piece  # ended some other way: nothing left to constrain
                return
            marker = piece.stop_reason
            prompt_tokens = piece.prompt_tokens
            if piece.completion_tokens is not None:
                used = piece.completion_tokens
            if piece.text or piece.token_ids or piece.logprobs:
                yield replace(piece, finish_reason=None, stop_reason=None, prompt_tokens=None, completion_tokens=None)
    if marker is None:
        return
    yield CompletionPiece(index=0, text=marker)
    left = None if request.max_tokens is None else request.max_tokens - used
    if left is not None and left <= 0:
        yield CompletionPiece(index=0, finish_reason="length", prompt_tokens=prompt_tokens, completion_tokens=used)
        return
    second = replace(request, prompt=request.prompt + "".join(text) + marker, max_tokens=left)
    async with closing(upstream.complete(second)) as stream:
        async for piece in stream:
            if piece.finish_reason is not None:
                done = piece.completion_tokens
                piece = replace(
                    piece, prompt_tokens=prompt_tokens, completion_tokens=None if done is None else done + used
                )
            yield piece
