"""A local tokenizer file, loaded for rows that carry token ids.

* an HF ``tokenizer.json`` (or ``tokenizer.json.gz``): ``tokenizers.Tokenizer``;
* a tiktoken ranks file (``*.tiktoken``, Llama 3's ``tokenizer.model``): ``tiktoken.Encoding``,
  with its special tokens from ``special_tokens`` (a JSON file: ``{"special_tokens": {token:
  id}}``, ``{"added_tokens": [{"content", "id"}]}`` or a flat ``{token: id}``), or else from a
  ``special_tokens.json`` / ``added_tokens.json`` / ``*_special_tokens.json`` beside it. Only
  decoding matters here (ids to text), so the split pattern is a generic one.

Errors are ``TokenizerFileError`` with the path and the reason.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any


class TokenizerFileError(Exception):
    """The tokenizer file cannot be loaded (missing package, unreadable or unknown file)."""


_SPLIT = r"\s+|\S+"  # decoding ignores it; encoding with this tokenizer is not what batch does


def load_tokenizer(path: str | Path, special_tokens: str | Path | None = None) -> Any:
    file = Path(path)
    if not file.is_file():
        raise TokenizerFileError(f"tokenizer file {file} does not exist")
    name = file.name
    if name.endswith((".json", ".json.gz")):
        try:
            from tokenizers import Tokenizer
        except ImportError:
            raise TokenizerFileError("an HF tokenizer.json needs the tokenizers package") from None
        data = gzip.decompress(file.read_bytes()) if name.endswith(".gz") else file.read_bytes()
        try:
            return Tokenizer.from_str(data.decode("utf-8"))
        except Exception as exc:  # tokenizers raises its own exception type
            raise TokenizerFileError(f"{file} is not an HF tokenizer.json: {exc}") from None
    try:
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe
    except ImportError:
        raise TokenizerFileError("a tiktoken ranks file needs the tiktoken package") from None
    try:
        ranks = load_tiktoken_bpe(str(file))
    except Exception as exc:  # a file that is not base64 ranks
        raise TokenizerFileError(f"{file} is neither an HF tokenizer.json nor tiktoken ranks: {exc}") from None
    specials = _special_tokens(Path(special_tokens) if special_tokens else _beside(file))
    return tiktoken.Encoding(file.stem, pat_str=_SPLIT, mergeable_ranks=ranks, special_tokens=specials)


def _beside(file: Path) -> Path | None:
    for candidate in ("special_tokens.json", "added_tokens.json"):
        if (file.parent / candidate).is_file():
            return file.parent / candidate
    found = sorted(file.parent.glob("*_special_tokens.json"))
    return found[0] if found else None


def _special_tokens(path: Path | None) -> dict[str, int]:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TokenizerFileError(f"special tokens file {path}: {exc}") from None
    if isinstance(data, dict) and isinstance(data.get("special_tokens"), dict):
        data = data["special_tokens"]
    elif isinstance(data, dict) and isinstance(data.get("added_tokens"), list):
        data = {t["content"]: t["id"] for t in data["added_tokens"] if isinstance(t, dict)}
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, int) for k, v in data.items()):
        raise TokenizerFileError(f"special tokens file {path}: expected token -> id")
    return data
