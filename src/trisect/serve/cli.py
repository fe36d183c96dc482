"""``trisect serve``: the command line (flags named as vLLM names them, where vLLM has one).

    trisect serve --upstream http://127.0.0.1:8001 --upstream-kind vllm \\
        --model /models/Qwen3-8B --reasoning-parser qwen3 --tool-call-parser hermes

Without ``--upstream`` the embedded llama.cpp model serves (``upstream/embedded.py``). Binds
127.0.0.1 unless ``--host`` says otherwise; one uvicorn worker. This module imports only the
standard library until ``run()``: the ``trisect`` command can list it without the extra.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

KINDS = ("vllm", "sglang", "llamacpp", "openai")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="trisect serve",
        description="An OpenAI-compatible server (chat completions, responses) over any raw-completion engine.",
    )
    up = ap.add_argument_group("upstream")
    up.add_argument("--upstream", metavar="URL", help="the engine's base URL (default: the embedded llama.cpp model)")
    up.add_argument("--upstream-kind", choices=KINDS, default="vllm", help="how to talk to it (default: vllm)")
    up.add_argument("--upstream-model", metavar="NAME", help="model name sent to the engine (default: none)")
    up.add_argument("--upstream-api-key", metavar="KEY", help="Bearer token for the engine")
    up.add_argument("--upstream-timeout", type=float, default=600.0, metavar="S", help="seconds per engine request")
    model = ap.add_argument_group("model")
    model.add_argument("--model", metavar="PATH_OR_ID", help="model directory, GGUF file, or a name")
    model.add_argument("--tokenizer", metavar="PATH", help="tokenizer.json (default: the model directory's)")
    model.add_argument("--chat-template", metavar="FILE", help="Jinja chat template (default: the model's)")
    model.add_argument("--chat-template-content-format", choices=("auto", "string", "openai"), default="auto")
    model.add_argument(
        "--reasoning-parser", metavar="NAME", help="reasoning format (vLLM's names; neither given: detected)"
    )
    model.add_argument(
        "--tool-call-parser", metavar="NAME", help="tool-call format (vLLM's names; neither given: detected)"
    )
    model.add_argument("--served-model-name", nargs="+", metavar="NAME", help="names clients use (default: --model)")
    model.add_argument("--threads", type=int, default=None, help="embedded model: CPU threads")
    srv = ap.add_argument_group("server")
    srv.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    srv.add_argument("--port", type=int, default=8000)
    srv.add_argument(
        "--api-key",
        metavar="KEY",
        default=os.environ.get("TRISECT_API_KEY"),
        help="require Authorization: Bearer KEY (default: $TRISECT_API_KEY)",
    )
    srv.add_argument(
        "--strict-tool-calling",
        action="store_true",
        help="constrain tool_choice=auto with the format's structural tag (vllm, sglang)",
    )
    srv.add_argument("--reasoning-field", choices=("reasoning", "reasoning_content"), default="reasoning")
    srv.add_argument("--max-body-bytes", type=int, default=8 * 1024 * 1024)
    srv.add_argument("--log-level", default="info")
    return ap


def make_upstream(args: argparse.Namespace) -> Any:
    """The engine: ``--upstream`` over HTTP, else the embedded llama.cpp model (the default
    model, fetched on first use, with trisect's template and formats for it, unless ``--model``
    names a GGUF; flags given on the command line win over the default model's)."""
    if args.upstream:
        from .upstream.http import HTTPUpstream

        return HTTPUpstream(
            args.upstream,
            args.upstream_kind,
            model=args.upstream_model,
            api_key=args.upstream_api_key,
            timeout=args.upstream_timeout,
        )
    try:
        from . import default_model  # type: ignore[attr-defined,unused-ignore]
        from .upstream.embedded import EmbeddedUpstream  # type: ignore[import-not-found,unused-ignore]
    except ImportError as exc:
        if "embedded" not in str(getattr(exc, "name", "")) and "default_model" not in str(exc):
            raise
        raise SystemExit(
            "trisect serve: the embedded model (llama.cpp in-process) is coming; until then pass "
            "--upstream URL --upstream-kind vllm|sglang|llamacpp|openai"
        ) from None
    if args.model is None:
        defaults = default_model.serve_options(log=sys.stderr)
        args.model = defaults["model"]
        args.chat_template = args.chat_template or defaults["chat_template"]
        args.reasoning_parser = args.reasoning_parser or defaults["reasoning_parser"]
        args.tool_call_parser = args.tool_call_parser or defaults["tool_call_parser"]
        args.served_model_name = args.served_model_name or list(defaults["served_model_names"])
    return EmbeddedUpstream(args.model, threads=args.threads)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from .app import create_app
    from .model import load_model
    from .service import Service

    upstream = make_upstream(args)
    served = load_model(
        model=args.model,
        chat_template=args.chat_template,
        reasoning_parser=args.reasoning_parser,
        tool_call_parser=args.tool_call_parser,
        tokenizer=args.tokenizer,
        served_model_names=tuple(args.served_model_name or ()),
        content_format_option=args.chat_template_content_format,
    )
    if args.strict_tool_calling and upstream.kind == "openai":
        raise SystemExit("trisect serve: --strict-tool-calling needs an upstream that takes grammars (not openai)")
    service = Service(
        served, upstream, strict_tool_calling=args.strict_tool_calling, reasoning_field=args.reasoning_field
    )
    app = create_app(service, api_key=args.api_key, max_body_bytes=args.max_body_bytes)
    uvicorn.run(app, host=args.host, port=args.port, workers=1, log_level=args.log_level)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from ..errors import TrisectError

    try:
        return run(args)
    except ImportError as exc:
        sys.stderr.write(f"trisect serve: {exc}; install the extra: pip install 'trisect[serve]'\n")
        return 2
    except (TrisectError, OSError, ValueError) as exc:
        sys.stderr.write(f"trisect serve: error: {exc}\n")
        return 2


def live_demo(*, threads: int | None = None, out: Any = None, color: bool | None = None) -> int:
    """``trisect demo --live`` (``serve.demo``): reached through this module, the one the
    ``trisect`` command may import from a shell."""
    from .demo import main as demo_main

    return demo_main(threads=threads, out=out, color=color)
