"""``trisect demo --live``: the embedded default model behind the real server, one question.

It fetches the default model on first use (``default_model``), starts ``trisect serve``'s app
in this process (uvicorn on 127.0.0.1, a free port, the embedded llama.cpp upstream), sends one
streamed chat request with a tool through the official ``openai`` client, prints the
reasoning, the content and the tool call as their deltas arrive, and stops the server.

The request: thinking on (``enable_thinking``; the default model's template has it off), the
``get_weather`` tool, ``tool_choice="auto"`` (the server sends the
format's lazy GBNF grammar: the call the model starts is well formed), greedy sampling (the
same answer on every run and, as far as llama.cpp's arithmetic allows, every machine), and one
worked example turn before the question: a 135M model follows an example far better than an
instruction. Cost: ~0.5 s to load the model, ~1–2 s for the answer on one free core.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any, TextIO

TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather in a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
EXAMPLE: list[Any] = [
    {"role": "user", "content": "What's the weather in Tokyo?"},
    {
        "role": "assistant",
        "reasoning": "The user asks for the weather in Tokyo. The get_weather tool gives it.",
        "content": "Let me look that up.",
        "tool_calls": [
            {"id": "call_0", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Tokyo"}'}}
        ],
    },
]
QUESTION = "What's the weather in Paris?"
_COLORS = {"reasoning": "\033[2;36m", "content": "\033[0m", "tool": "\033[1;33m", "note": "\033[2m"}


class LiveServer:
    """``trisect serve`` with the embedded default model, under uvicorn in a thread."""

    def __init__(self, *, threads: int | None = None, log: TextIO | None = None) -> None:
        import uvicorn

        from .app import create_app
        from .default_model import serve_options
        from .metrics import Metrics
        from .model import load_model
        from .service import Service
        from .upstream.embedded import EmbeddedUpstream

        options = serve_options(log=log)
        started = time.perf_counter()
        self.upstream = EmbeddedUpstream(options["model"], threads=threads, model_name=options["served_model_names"][0])
        self.load_seconds = time.perf_counter() - started
        served = load_model(**options)  # serve_options names load_model's own arguments
        self.model = served.name
        config = uvicorn.Config(
            create_app(Service(served, self.upstream, metrics=Metrics(served.name, self.upstream))),
            host="127.0.0.1",
            port=0,
            log_level="warning",
            lifespan="on",
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="trisect-demo-server", daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the demo server did not start")
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/v1"
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True  # the app's lifespan closes the upstream (the model)
        self.thread.join(30)


def run(*, threads: int | None = None, out: TextIO | None = None, color: bool | None = None) -> int:
    """Run the live demo; returns the exit status."""
    import openai

    out = out if out is not None else sys.stdout
    color = out.isatty() if color is None else color

    def paint(kind: str, text: str) -> str:
        return f"{_COLORS[kind]}{text}\033[0m" if color else text

    with LiveServer(threads=threads, log=sys.stderr) as live:
        out.write(
            paint(
                "note",
                f"trisect serve at {live.url}: {live.model} in-process (llama.cpp, "
                f"{live.upstream.threads} thread{'s' if live.upstream.threads != 1 else ''}, loaded in "
                f"{live.load_seconds:.1f} s); formats qwen3 (reasoning) + hermes (tool calls)\n",
            )
        )
        out.write(f"user: {QUESTION}   (tools: get_weather; one example turn before it)\n")
        client = openai.OpenAI(base_url=live.url, api_key="trisect-demo", max_retries=0)
        started = time.perf_counter()
        stream = client.chat.completions.create(
            model=live.model,
            messages=[*EXAMPLE, {"role": "user", "content": QUESTION}],
            tools=TOOLS,
            stream=True,
            stream_options={"include_usage": True},
            temperature=0,
            seed=0,
            max_tokens=200,
            extra_body={"chat_template_kwargs": {"enable_thinking": True}},
        )
        field, finish, usage, calls, first = None, None, None, {}, None
        for chunk in stream:
            usage = chunk.usage or usage
            if first is None and chunk.choices:
                first = time.perf_counter() - started
            for choice in chunk.choices:
                delta = choice.delta
                finish = choice.finish_reason or finish
                reasoning = getattr(delta, "reasoning", None) or getattr(delta, "reasoning_content", None)
                for kind, value in (("reasoning", reasoning), ("content", delta.content)):
                    if value:
                        if field != kind:
                            out.write(paint(kind, f"\n[{kind}] "))
                            field = kind
                        out.write(paint(kind, value))
                for call in delta.tool_calls or ():
                    fn = call.function
                    if fn is not None and fn.name:
                        out.write(paint("tool", f"\n[tool_call #{call.index}] {fn.name} "))
                        field = "tool"
                        calls[call.index] = [fn.name, ""]
                    if fn is not None and fn.arguments:
                        out.write(paint("tool", fn.arguments))
                        calls[call.index][1] += fn.arguments
                out.flush()
        seconds = time.perf_counter() - started
        prompt_tokens = usage.prompt_tokens if usage is not None else 0
        tokens = usage.completion_tokens if usage is not None else 0
        after = max(seconds - (first or 0.0), 1e-9)
        out.write("\n\n")
        out.write(
            paint(
                "note",
                f"finish_reason: {finish} · first delta after {first or 0.0:.2f} s ({prompt_tokens} prompt tokens), "
                f"then {tokens} tokens at {tokens / after:.0f} tokens/s · {seconds:.1f} s in all, through HTTP, SSE "
                "and trisect's parser\n",
            )
        )
        for index, (name, arguments) in sorted(calls.items()):
            json.loads(arguments)  # the lazy grammar made the call well formed: valid JSON
            out.write(paint("note", f"call #{index}: {name}({arguments}) — valid JSON arguments\n"))
    return 0


def main(threads: int | None = None, out: TextIO | None = None, color: bool | None = None) -> int:
    try:
        import openai  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        missing = exc.name or exc
        sys.stderr.write(
            f"trisect demo --live needs the serve extra ({missing} is missing): pip install 'trisect[serve]'\n"
        )
        return 2
    return run(threads=threads, out=out, color=color)


__all__ = ["EXAMPLE", "QUESTION", "TOOLS", "LiveServer", "main", "run"]
