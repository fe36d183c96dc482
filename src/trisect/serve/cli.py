"""``trisect serve``: the command line (flags named as vLLM names them, where vLLM has one).

    trisect serve --upstream http://127.0.0.1:8001 --upstream-kind vllm \\
        --model /models/Qwen3-8B --reasoning-parser qwen3 --tool-call-parser hermes
    trisect serve --scale-out --tokenizer /models/Qwen3-8B --reasoning-parser qwen3 \\
        --tool-call-parser hermes --state-key-file /etc/trisect/state.key

Without ``--upstream`` the embedded llama.cpp model serves (``upstream/embedded.py``);
``--scale-out`` serves vLLM's render / derender protocol instead, calling no engine
(``scale_out``). ``--upstream-kind vllm-generate`` talks to vLLM's token-in, token-out
``/inference/v1/generate`` (render and parse here, ids there; needs ``--tokenizer``). Binds
127.0.0.1 unless ``--host`` says otherwise; one uvicorn worker. This module imports only the
standard library until ``run()``: the ``trisect`` command can list it without the extra.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

KINDS = ("vllm", "vllm-generate", "sglang", "llamacpp", "openai")


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
    srv.add_argument(
        "--seed",
        type=int,
        metavar="N",
        help="call ids the model did not write drawn from N, in request order: the same on every run (default: random)",
    )
    srv.add_argument("--max-body-bytes", type=int, default=8 * 1024 * 1024)
    srv.add_argument("--log-level", default="info")
    scale = ap.add_argument_group("scale-out (vLLM's render / derender protocol; no upstream)")
    scale.add_argument(
        "--scale-out",
        action="store_true",
        help="serve /v1/chat/completions/render and .../derender (needs --tokenizer)",
    )
    scale.add_argument(
        "--state-key-file",
        metavar="F",
        help="the key that signs stream_state, shared by every replica (default: $TRISECT_STATE_KEY, else random)",
    )
    scale.add_argument(
        "--state-ttl", type=float, default=0, metavar="S", help="seconds a stream_state stays valid (default: no limit)"
    )
    return ap


class UsageError(Exception):
    """The command line asks for something that cannot work (the message says what to pass)."""


def _check_embedded_model(model: str) -> None:
    """The embedded upstream loads a GGUF file; anything else needs an engine (``--upstream``)."""
    from ..templates import is_gguf

    path = Path(model)
    if path.is_file() and is_gguf(path):
        return
    what = "a model directory" if path.is_dir() else "not a file" if not path.exists() else "not a GGUF file"
    raise UsageError(
        f"--model {model}: {what}. Without --upstream, trisect serves the embedded llama.cpp model, which "
        "loads a GGUF file. Pass a GGUF path (--model ./model.gguf); or run the model in an engine and pass "
        f"--upstream URL --upstream-kind vllm|sglang|llamacpp|openai (vllm serve {model} --port 8001, then "
        f"trisect serve --upstream http://127.0.0.1:8001 --model {model}); or leave --model out for the "
        "default model."
    )


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
    if args.model is not None:
        _check_embedded_model(args.model)  # before any import: the message says what to pass instead
    from . import default_model
    from .upstream.embedded import EmbeddedUpstream

    if args.model is None:
        defaults = default_model.serve_options(log=sys.stderr)
        args.model = defaults["model"]
        args.chat_template = args.chat_template or defaults["chat_template"]
        args.reasoning_parser = args.reasoning_parser or defaults["reasoning_parser"]
        args.tool_call_parser = args.tool_call_parser or defaults["tool_call_parser"]
        args.served_model_name = args.served_model_name or list(defaults["served_model_names"])
        if (
            args.reasoning_parser == defaults["reasoning_parser"]
            and args.tool_call_parser == defaults["tool_call_parser"]
        ):
            args.formats_origin = "the formats trisect's template for the default model teaches it"
    return EmbeddedUpstream(args.model, threads=args.threads)


def run(args: argparse.Namespace) -> int:
    if args.scale_out:
        from .scale_out import run as run_scale_out

        return run_scale_out(args)
    import uvicorn

    from .app import create_app
    from .metrics import Metrics
    from .model import load_model
    from .service import Service

    generate = args.upstream_kind == "vllm-generate"
    if generate and not args.upstream:
        raise SystemExit("trisect serve: --upstream-kind vllm-generate needs --upstream URL")
    upstream = make_upstream(args) if not generate else None
    served = load_model(
        model=args.model,
        chat_template=args.chat_template,
        reasoning_parser=args.reasoning_parser,
        tool_call_parser=args.tool_call_parser,
        tokenizer=args.tokenizer,
        served_model_names=tuple(args.served_model_name or ()),
        content_format_option=args.chat_template_content_format,
        formats_origin=getattr(args, "formats_origin", "named on the command line"),
    )
    if upstream is None:  # vllm-generate: the prompt is tokenized here, with the served model's tokenizer
        from .upstream.http import HTTPUpstream

        if served.parser.vocab is None:
            raise SystemExit("trisect serve: --upstream-kind vllm-generate needs --tokenizer (or --model with one)")
        upstream = HTTPUpstream(
            args.upstream,
            args.upstream_kind,
            model=args.upstream_model,
            api_key=args.upstream_api_key,
            timeout=args.upstream_timeout,
            vocab=served.parser.vocab,
        )
    if args.strict_tool_calling and upstream.kind == "openai":
        raise SystemExit("trisect serve: --strict-tool-calling needs an upstream that takes grammars (not openai)")
    service = Service(
        served,
        upstream,
        strict_tool_calling=args.strict_tool_calling,
        reasoning_field=args.reasoning_field,
        seed=args.seed,
        metrics=Metrics(served.name, upstream),
    )
    app = create_app(service, api_key=args.api_key, max_body_bytes=args.max_body_bytes)
    sys.stderr.write(banner(served, upstream, args.host, args.port))
    uvicorn.run(app, host=args.host, port=args.port, workers=1, log_level=args.log_level)
    return 0


def banner(served: Any, upstream: Any, host: str, port: int) -> str:
    """What ``trisect serve`` says when it starts: the model, the formats and why, where to send
    requests, and a one-line client to try."""
    from .default_model import MODEL_NAME

    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    base = f"http://{shown}:{port}/v1"
    where = getattr(upstream, "base_url", None) or "embedded llama.cpp, in this process"
    lines = [f"trisect serve: model {served.name} ({upstream.kind}: {where})"]
    if served.name == MODEL_NAME and upstream.kind == "embedded":
        lines.append(
            "  the default model: 135M parameters, for trying trisect out; it calls tools reliably only under "
            "tool_choice required or a named tool (docs/serve.md, 'The default model')"
        )
    lines.append(f"  formats: {served.formats}")
    lines.append(f"  OpenAI API at {base} (chat/completions, responses, completions); Anthropic API at {base[:-3]}")
    lines.append(f"  probes: {base[:-3]}/health (alive), /ready (the engine answers), /metrics (Prometheus)")
    example = (
        f"from openai import OpenAI; print(OpenAI(base_url='{base}', api_key='-').chat.completions.create("
        f"model='{served.name}', messages=[{{'role': 'user', 'content': 'Hi'}}]).choices[0].message.content)"
    )
    lines.append(f'  try: python -c "{example}"')
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from ..errors import TrisectError

    try:
        return run(args)
    except UsageError as exc:
        sys.stderr.write(f"trisect serve: {exc}\n")
        return 2
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
