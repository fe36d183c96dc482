"""Token ids -> text where no parser reads them: generate's integer-id logprobs as the OpenAI
chat and completions shapes, and plain detokenization (``IdsText``).

Logprobs as vLLM's derender resolves them (``renderers/online_derenderer.py``:
``_resolve_logprobs``, ``_correct_decoded_token``,
``_convert_chat_logprobs_to_completion_logprobs``).

A token's string is its bytes decoded as UTF-8 (an added token's text as written). A token that
ends inside a UTF-8 character (byte fallback) decodes to U+FFFD; it is then decoded together with
up to ``CONTEXT`` preceding sampled tokens and given the text its bytes complete (``""`` when they
complete nothing yet). Streams carry those last ``CONTEXT`` ids across chunks.

Cost: O(candidates) per position.
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping, Sequence
from typing import Any

from ...engine.vocab import Vocab
from .shapes import ScaleOutError

CONTEXT = 4
"""Preceding sampled ids a byte-fallback token is read with (vLLM's window)."""


def _bytes(vocab: Vocab, token_id: int) -> bytes:
    added = vocab.added_text(token_id)
    if added is not None:
        return added.encode("utf-8")
    try:
        return vocab.token_bytes(token_id)
    except Exception:  # noqa: BLE001 - any id the tokenizer cannot read decodes to nothing, as in vLLM
        return b""


def _text(vocab: Vocab, ids: Sequence[int]) -> str:
    return vocab.decode_bytes(b"".join(_bytes(vocab, i) for i in ids))


def token_text(vocab: Vocab, token_id: int, context: Sequence[int]) -> str:
    """The string of one sampled or candidate token, its byte fallback read with ``context``."""
    text = _text(vocab, (token_id,))
    if not text.endswith("\ufffd"):
        return text
    for n in range(1, min(len(context), CONTEXT) + 1):
        window = list(context[-n:])
        full = _text(vocab, [*window, token_id])
        if full.endswith("\ufffd"):
            continue
        clean_end = len(window)
        for j in range(len(window) - 1, -1, -1):
            if _text(vocab, (window[j],)).endswith("\ufffd"):
                clean_end = j
            else:
                break
        prefix = _text(vocab, window[:clean_end])
        if full.startswith(prefix):
            return full[len(prefix) :]
        common = 0
        for a, b in zip(prefix, full, strict=False):
            if a != b:
                break
            common += 1
        return full[common:]
    return ""


def _entry(value: Any, where: str) -> tuple[int, float]:
    if not isinstance(value, Mapping):
        raise ScaleOutError(f"{where} must be an object", param=where)
    token_id, logprob = value.get("token_id"), value.get("logprob")
    if isinstance(token_id, bool) or not isinstance(token_id, int) or token_id < 0:
        raise ScaleOutError(f"{where}.token_id must be a non-negative integer", param=where)
    if isinstance(logprob, bool) or not isinstance(logprob, (int, float)):
        raise ScaleOutError(f"{where}.logprob must be a number", param=where)
    return token_id, float(logprob)


def chat_logprobs(
    logprobs: Any, vocab: Vocab, context: Sequence[int], limit: int | None, where: str
) -> dict[str, Any] | None:
    """A generate choice's ``logprobs`` (``{"content": [{token_id, logprob, top_logprobs}]}``) in
    the chat shape; ``limit`` candidates per position (``None``: all of them)."""
    if logprobs is None:
        return None
    if not isinstance(logprobs, Mapping):
        raise ScaleOutError(f"{where} must be an object", param=where)
    content = logprobs.get("content")
    if content is None:
        return {"content": None, "refusal": None}
    if not isinstance(content, list):
        raise ScaleOutError(f"{where}.content must be a list", param=where)
    ctx = list(context)
    out = []
    for k, item in enumerate(content):
        token_id, logprob = _entry(item, f"{where}.content[{k}]")
        tops = item.get("top_logprobs") or []
        if not isinstance(tops, list):
            raise ScaleOutError(f"{where}.content[{k}].top_logprobs must be a list", param=where)
        kept = tops if limit is None else tops[:limit]
        token = token_text(vocab, token_id, ctx)
        top = []
        for j, candidate in enumerate(kept):
            cid, clp = _entry(candidate, f"{where}.content[{k}].top_logprobs[{j}]")
            ctext = token_text(vocab, cid, ctx)
            top.append({"token": ctext, "logprob": clp, "bytes": list(ctext.encode("utf-8"))})
        out.append({"token": token, "logprob": logprob, "bytes": list(token.encode("utf-8")), "top_logprobs": top})
        ctx.append(token_id)
    return {"content": out, "refusal": None}


def completion_logprobs(chat: dict[str, Any] | None, source: Any, offset: int) -> dict[str, Any] | None:
    """Chat-shaped logprobs as the completions shape (parallel lists), ``text_offset`` from
    ``offset``; a position with no candidates in ``source`` has ``top_logprobs`` ``None``."""
    if chat is None:
        return None
    content = chat.get("content")
    if content is None:
        return {"text_offset": [], "token_logprobs": [], "tokens": [], "top_logprobs": []}
    sources = source.get("content") or []
    text_offset, token_logprobs, tokens, tops = [], [], [], []
    for entry, src in zip(content, sources, strict=False):
        text_offset.append(offset)
        tokens.append(entry["token"])
        token_logprobs.append(entry["logprob"])
        tops.append({t["token"]: t["logprob"] for t in entry["top_logprobs"]} if src.get("top_logprobs") else None)
        offset += len(entry["token"])
    return {"text_offset": text_offset, "token_logprobs": token_logprobs, "tokens": tokens, "top_logprobs": tops}


def context_after(context: Sequence[int], ids: Sequence[int]) -> tuple[int, ...]:
    """The ids a stream carries to its next chunk for byte-fallback tokens."""
    return tuple([*context, *ids][-CONTEXT:])


class IdsText:
    """Ids -> text without a parser (completions): ordinary tokens' bytes through one UTF-8
    decoder (a character split across chunks waits in it), added tokens as written, control
    tokens only when ``special`` (``skip_special_tokens=false``)."""

    __slots__ = ("vocab", "special", "decoder")

    def __init__(self, vocab: Vocab, special: bool, decoder: codecs.IncrementalDecoder) -> None:
        self.vocab = vocab
        self.special = special
        self.decoder = decoder

    def decode(self, ids: Sequence[int]) -> str:
        vocab = self.vocab
        parts = []
        for token_id in ids:
            added = vocab.added_text(token_id)
            if added is not None:
                if self.special or not vocab.is_control(token_id):
                    parts.append(added)
                continue
            try:
                data = vocab.token_bytes(token_id)
            except Exception:  # noqa: BLE001 - an id outside the vocabulary
                raise ScaleOutError(
                    f"token id {token_id} is not in the tokenizer's vocabulary", param="token_ids"
                ) from None
            parts.append(self.decoder.decode(data))
        return "".join(parts)
