"""The Mistral v3 SentencePiece tokenizer (Mistral-7B-Instruct-v0.3 family), with a thin adapter.

``tests/data/tokenizers/mistral/mistral_instruct_tokenizer_240323.model.v3`` (32,768 pieces,
from mistralai/mistral-common) has ``[TOOL_CALLS]`` = 5 as a *control* piece, which
SentencePiece never produces from text. The adapter ``MistralV3`` gives it the HF
``tokenizers.Tokenizer`` surface the harness and trisect's ``Vocab`` read:

* ``encode(text, add_special_tokens=False).ids``: control-piece strings (``[INST]``,
  ``[TOOL_CALLS]``, ``</s>`` …) become their ids; each run of text between them is encoded by
  SentencePiece with its usual dummy-prefix ``▁`` (what mistral-common does);
* ``decode(ids, skip_special_tokens=False)``: control ids decode to their text, each run of
  ordinary ids is decoded by SentencePiece (which drops the dummy prefix of the run);
* ``get_added_tokens_decoder()`` / ``id_to_token()``: the control pieces are the added special
  tokens; an ordinary piece is given in the GPT-2 byte alphabet of its exact bytes (``▁`` → a
  space, ``<0xNN>`` → that byte), so byte-level readers get the right UTF-8.

Checked against mistral-common's ``parallel_calls`` test vector (``tests/test_json_tools.py``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DIR = Path(__file__).resolve().parent.parent / "data" / "tokenizers" / "mistral"
MODEL = DIR / "mistral_instruct_tokenizer_240323.model.v3"


@dataclass(frozen=True)
class Encoding:
    ids: list[int]


@dataclass(frozen=True)
class _Added:
    content: str
    special: bool = True


@functools.cache
def _byte_encoder() -> dict[int, str]:
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs, strict=True)}


class MistralV3:
    """SentencePiece with control pieces as special tokens; see the module docstring."""

    def __init__(self, model_file: Path = MODEL) -> None:
        import sentencepiece as spm

        self.sp = spm.SentencePieceProcessor(model_file=str(model_file))
        n = self.sp.get_piece_size()
        self.control = {i: self.sp.id_to_piece(i) for i in range(n) if self.sp.is_control(i)}
        self._by_text = {t: i for i, t in self.control.items()}
        ordered = sorted(self._by_text, key=len, reverse=True)
        self._split = re.compile("(" + "|".join(re.escape(t) for t in ordered) + ")")

    def encode(self, text: str, add_special_tokens: bool = False) -> Encoding:
        ids: list[int] = []
        for k, part in enumerate(self._split.split(text)):
            if k % 2:
                ids.append(self._by_text[part])
            elif part:
                ids += self.sp.encode(part)
        return Encoding(ids)

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        out: list[str] = []
        run: list[int] = []
        for i in ids:
            if i in self.control:
                if run:
                    out.append(self.sp.decode(run))
                    run = []
                if not skip_special_tokens:
                    out.append(self.control[i])
            else:
                run.append(i)
        if run:
            out.append(self.sp.decode(run))
        return "".join(out)

    def get_added_tokens_decoder(self) -> dict[int, _Added]:
        return {i: _Added(t) for i, t in self.control.items()}

    def id_to_token(self, token_id: int) -> str | None:
        if not 0 <= token_id < self.sp.get_piece_size():
            return None
        piece = self.sp.id_to_piece(token_id)
        if self.sp.is_byte(token_id):
            data = bytes([int(piece[3:5], 16)])
        else:
            data = piece.replace("\u2581", " ").encode("utf-8")
        table = _byte_encoder()
        return "".join(table[b] for b in data)


@functools.cache
def load() -> Any:
    return MistralV3()
