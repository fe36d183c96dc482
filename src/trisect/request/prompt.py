"""Where the rendered prompt leaves the model: inside an open reasoning block, after a closed
one, or undecided (then the request's switches and the family's default decide).

A prompt ends inside reasoning when its last reasoning-start marker comes after its last
reasoning-end marker and after its last turn marker (``<think>\\n`` pre-filled by the R1 or
Qwen templates, ``continue_final_message``). It has closed reasoning when its last end marker
comes after the last start and after the last turn marker (Qwen3 with thinking off renders
``<think>\\n\\n</think>\\n\\n``; DeepSeek V3.1 non-thinking renders ``</think>``). Earlier turns'
reasoning blocks never decide, because a turn marker follows them.

Markers that are not single tokens of the vocabulary (Granite's, OLMo 3's) are found in the
prompt's text; given only ids, trisect decodes them for that.

Cost: one reverse search per marker over the prompt (text) or one pass over its ids.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..engine.compile import CompiledFormat
from ..engine.vocab import Vocab

OPEN = "open"
CLOSED = "closed"


def _last_text(prompt: str, markers: Sequence[str]) -> int:
    return max((prompt.rfind(m) for m in markers), default=-1)


def _verdict(start: int, end: int, turn: int) -> str | None:
    if start > max(end, turn):
        return OPEN
    if end > max(start, turn):
        return CLOSED
    return None


def prompt_verdict(
    compiled: CompiledFormat,
    *,
    prompt_text: str | None,
    prompt_token_ids: Sequence[int] | None,
    vocab: Vocab | None,
) -> str | None:
    spec = compiled.spec
    starts = spec.terminals.get("THINK_START", ())
    # an answer wrapper the prompt already opened closes reasoning too (Kimi K3's response channel)
    ends = spec.terminals.get("THINK_END", ()) + spec.terminals.get("ANSWER_START", ())
    if not starts and not ends:
        return None
    if prompt_token_ids is not None and vocab is not None:
        start_ids = {vocab.special_id(s) for s in starts} - {None}
        end_ids = {vocab.special_id(s) for s in ends} - {None}
        turn_ids = {vocab.special_id(s) for s in spec.turn_markers} - {None}
        if start_ids or end_ids:
            start = end = turn = -1
            for i in range(len(prompt_token_ids) - 1, -1, -1):
                t = prompt_token_ids[i]
                if t in start_ids:
                    start = i
                elif t in end_ids:
                    end = i
                elif t in turn_ids:
                    turn = i
                else:
                    continue
                break  # the last marker of any kind decides
            return _verdict(start, end, turn)
    if prompt_text is None and prompt_token_ids is not None and vocab is not None:
        prompt_text = _decode(prompt_token_ids, vocab)  # markers that are text, not single tokens
    if prompt_text is not None:
        return _verdict(
            _last_text(prompt_text, starts), _last_text(prompt_text, ends), _last_text(prompt_text, spec.turn_markers)
        )
    return None


def _decode(token_ids: Sequence[int], vocab: Vocab) -> str:
    parts: list[bytes] = []
    for t in token_ids:
        added = vocab.added_text(t)
        parts.append(added.encode("utf-8") if added is not None else vocab.token_bytes(t))
    return vocab.decode_bytes(b"".join(parts))
