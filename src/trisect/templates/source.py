"""Find a model's chat template: a template string, a file, a model directory or a GGUF file.

``load_template(source)`` accepts

* the Jinja text itself (a string containing ``{{`` or ``{%``);
* a ``.jinja`` (or any text) file;
* a ``tokenizer_config.json`` (``chat_template`` is a string, or a list of named templates of
  which ``default`` is used and ``tool_use`` is kept for requests with tools) or a
  ``chat_template.json`` (``{"chat_template": …}``);
* a model directory: ``chat_template.jinja``, else ``chat_template.json``, else
  ``tokenizer_config.json``; special tokens from ``tokenizer_config.json`` and
  ``special_tokens_map.json``;
* a GGUF file (``tokenizer.chat_template`` and ``tokenizer.chat_template.tool_use`` metadata;
  BOS / EOS from ``tokenizer.ggml.bos_token_id`` / ``eos_token_id``; added tokens are the
  vocabulary entries typed CONTROL or USER_DEFINED).

``TemplateError`` when no template can be found. Cost: reading the file (a GGUF's vocabulary
array only when BOS / EOS ids are present).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import TemplateError
from .gguf import is_gguf, read_metadata
from .render import ChatTemplate

_SPECIAL_KEYS = ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token")
_GGUF_CONTROL, _GGUF_USER_DEFINED = 3, 4


def load_template(source: str | Path) -> ChatTemplate:
    if isinstance(source, str) and ("{{" in source or "{%" in source):
        return ChatTemplate(source=source, origin="<string>")
    path = Path(source)
    if not path.exists():
        raise TemplateError(f"no chat template at {path}: not a file, a directory or a template string")
    if path.is_dir():
        return _from_directory(path)
    if is_gguf(path):
        return _from_gguf(path)
    if path.suffix == ".json":
        return _from_json(path, _read_json(path))
    return ChatTemplate(source=_read_text(path), origin=str(path))


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TemplateError(f"{path}: cannot read the chat template: {exc}") from exc


def _read_json(path: Path) -> Any:
    try:
        return json.loads(_read_text(path))
    except json.JSONDecodeError as exc:
        raise TemplateError(f"{path}: invalid JSON: {exc}") from exc


def _token_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        return str(value["content"])  # an AddedToken written as a dict
    return None


def _special_tokens(config: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key in _SPECIAL_KEYS:
        text = _token_text(config.get(key))
        if text is not None:
            out[key] = text
    return out


def _added_tokens(config: Mapping[str, Any]) -> tuple[str, ...]:
    decoder = config.get("added_tokens_decoder")
    if not isinstance(decoder, Mapping):
        return ()
    tokens = []
    for entry in decoder.values():
        text = _token_text(entry)
        if text is not None and isinstance(entry, Mapping) and entry.get("special", True):
            tokens.append(text)
    return tuple(tokens)


def _templates(value: Any, path: Path) -> tuple[str, str | None]:
    """(default template, tool_use template) from a ``chat_template`` value."""
    if isinstance(value, str):
        return value, None
    if isinstance(value, list):
        named = {t.get("name"): t.get("template") for t in value if isinstance(t, Mapping)}
        default = named.get("default")
        tool_use = named.get("tool_use")
        if isinstance(default, str):
            return default, tool_use if isinstance(tool_use, str) else None
        if isinstance(tool_use, str):
            return tool_use, tool_use
    raise TemplateError(f"{path}: no usable chat_template (a string or a list of named templates)")


def _from_json(path: Path, data: Any, special: dict[str, str] | None = None) -> ChatTemplate:
    if not isinstance(data, Mapping) or "chat_template" not in data:
        raise TemplateError(f"{path}: has no chat_template key")
    default, tool_use = _templates(data["chat_template"], path)
    tokens = {**_special_tokens(data), **(special or {})}
    return ChatTemplate(
        source=default, special_tokens=tokens, tool_use=tool_use, added_tokens=_added_tokens(data), origin=str(path)
    )


def _from_directory(path: Path) -> ChatTemplate:
    config_path = path / "tokenizer_config.json"
    config = _read_json(config_path) if config_path.is_file() else {}
    special = _special_tokens(config) if isinstance(config, Mapping) else {}
    map_path = path / "special_tokens_map.json"
    if map_path.is_file():
        special = {**_special_tokens(_read_json(map_path)), **special}
    added = _added_tokens(config) if isinstance(config, Mapping) else ()
    jinja = path / "chat_template.jinja"
    if jinja.is_file():
        return ChatTemplate(source=_read_text(jinja), special_tokens=special, added_tokens=added, origin=str(jinja))
    chat_json = path / "chat_template.json"
    if chat_json.is_file():
        found = _from_json(chat_json, _read_json(chat_json), special)
        return ChatTemplate(found.source, found.special_tokens, found.tool_use, added, found.origin)
    if isinstance(config, Mapping) and "chat_template" in config:
        return _from_json(config_path, config, special)
    ggufs = sorted(path.glob("*.gguf"))
    if ggufs:
        return _from_gguf(ggufs[0])
    raise TemplateError(f"{path}: no chat_template.jinja, chat_template.json or tokenizer_config.json with a template")


def _from_gguf(path: Path) -> ChatTemplate:
    meta = read_metadata(path, arrays=("tokenizer.ggml.tokens", "tokenizer.ggml.token_type"))
    source = meta.get("tokenizer.chat_template")
    if not isinstance(source, str):
        raise TemplateError(f"{path}: the GGUF has no tokenizer.chat_template")
    tool_use = meta.get("tokenizer.chat_template.tool_use")
    tokens = meta.get("tokenizer.ggml.tokens") or []
    types = meta.get("tokenizer.ggml.token_type") or []
    special: dict[str, str] = {}
    for key, meta_key in (("bos_token", "tokenizer.ggml.bos_token_id"), ("eos_token", "tokenizer.ggml.eos_token_id")):
        token_id = meta.get(meta_key)
        if isinstance(token_id, int) and 0 <= token_id < len(tokens):
            special[key] = tokens[token_id]
    added = tuple(t for t, kind in zip(tokens, types, strict=False) if kind in (_GGUF_CONTROL, _GGUF_USER_DEFINED))
    return ChatTemplate(
        source=source,
        special_tokens=special,
        tool_use=tool_use if isinstance(tool_use, str) else None,
        added_tokens=added,
        origin=str(path),
    )
