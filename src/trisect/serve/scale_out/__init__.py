"""``trisect serve --scale-out``: the stateless CPU tier of disaggregated serving.

    trisect serve --scale-out --tokenizer PATH --reasoning-parser R --tool-call-parser T \\
        [--chat-template F] [--state-key-file F]

Large deployments split serving in three: a front end renders chat into token ids, GPU workers
generate tokens (vLLM's ``/inference/v1/generate``, ids in and out), and a CPU tier turns the ids
back into chat messages. vLLM 0.33 names the protocol (``vllm serve --enable-scale-out``);
llm-d and Dynamo route over it. This package is that CPU tier, wire-compatible with vLLM's:
``render`` (the chat template and tokenizer to a ``GenerateRequest``) and ``derender`` (the
worker's ids to ``ChatCompletionResponse`` / per-chunk ``{chunk, stream_state}``), with
trisect parsing in place of vLLM's parsers.

The difference is the stream state. vLLM's parsers cannot serialise theirs, so its
``stream_state`` carries every output token and each chunk replays them all through a fresh
parser: O(n) bytes and O(n) parser work per chunk. trisect's carries the parser's own signed
state (``StreamParser.to_state``: the text it still holds, bounded, never what it emitted), so
any replica serves any chunk of any stream at O(chunk) work, with neither the prompt nor the
history. Replicas share the key that signs the state (``keys``). See docs/scale-out.md.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..upstream.base import CompletionPiece, CompletionRequest, UpstreamError

if TYPE_CHECKING:
    from ..model import ServedModel

__all__ = ["RenderOnly", "build", "eos_ids", "run"]


class RenderOnly:
    """The scale-out tier's ``Upstream``: the workers are called by the router, never by it, so
    it only says which kind of engine it renders for (``vllm``)."""

    kind = "vllm"
    fans_out = False

    def complete(self, request: CompletionRequest) -> AsyncIterator[CompletionPiece]:
        raise UpstreamError("the scale-out tier renders and derenders; it calls no engine", status=400)

    async def models(self) -> list[str]:
        return []

    async def aclose(self) -> None:
        return None


def _token_id(served: ServedModel, value: Any) -> int | None:
    text = value.get("content") if isinstance(value, dict) else value
    vocab = served.parser.vocab
    return vocab.special_id(text) if isinstance(text, str) and vocab is not None else None


def eos_ids(served: ServedModel, folder: Path | None) -> tuple[int | None, frozenset[int]]:
    """The tokenizer's end-of-sequence id (``tokenizer_config.json``'s ``eos_token``) and the
    model's others (``generation_config.json``'s ``eos_token_id``), in the tokenizer's folder:
    what vLLM stops on."""
    primary: int | None = None
    found: set[int] = set()
    if folder is None:
        return None, frozenset()
    config = folder / "tokenizer_config.json"
    if config.is_file():
        primary = _token_id(served, json.loads(config.read_text(encoding="utf-8")).get("eos_token"))
    generation = folder / "generation_config.json"
    if generation.is_file():
        value = json.loads(generation.read_text(encoding="utf-8")).get("eos_token_id")
        found.update(v for v in (value if isinstance(value, list) else [value]) if type(v) is int)
    return primary, frozenset(found)


def build(args: argparse.Namespace) -> Any:
    """The app for ``trisect serve --scale-out`` (``ValueError`` for a missing tokenizer or key)."""
    # imported here: the upstream modules read this package's logprobs and shapes
    from ..model import load_model
    from ..service import Service
    from .app import create_scale_out_app
    from .derender import Derenderer
    from .keys import load_key
    from .render import Renderer

    if not args.tokenizer:
        raise ValueError("--scale-out needs --tokenizer PATH (a tokenizer.json, or the model's folder)")
    tokenizer = Path(args.tokenizer)
    folder = tokenizer if tokenizer.is_dir() else tokenizer.parent
    served = load_model(
        model=args.model or str(folder),
        chat_template=args.chat_template,
        reasoning_parser=args.reasoning_parser,
        tool_call_parser=args.tool_call_parser,
        tokenizer=str(tokenizer),
        served_model_names=tuple(args.served_model_name or ()),
        content_format_option=args.chat_template_content_format,
    )
    if served.tokenizer is None:
        raise ValueError(f"--tokenizer {args.tokenizer}: no tokenizer.json there (or no tokenizers package)")
    key = load_key(args.state_key_file)
    eos, others = eos_ids(served, folder)
    derenderer = Derenderer(
        served.parser,
        key.key,
        model_names=served.names,
        eos_id=eos,
        eos_ids=others,
        ttl=args.state_ttl or None,
    )
    renderer = Renderer(Service(served, RenderOnly()))
    return create_scale_out_app(derenderer, renderer, api_key=args.api_key, max_body_bytes=args.max_body_bytes)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    app = build(args)
    uvicorn.run(app, host=args.host, port=args.port, workers=1, log_level=args.log_level)
    return 0
