"""Test harness for ``trisect serve``: a replay engine and the server, both real HTTP on
127.0.0.1 (random ports), each in a thread of its own with one event loop, one uvicorn worker.

``replay_pieces(case)`` cuts a recorded case into the steps an engine streams: one token per
step with the text a detokenizer releases for it (text held while it ends inside a UTF-8
character), or 3-character steps without ids for cases without a tokenizer.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

from support import cases, tokenizers
from support.work import HANG
from trisect import Parser
from trisect.serve.app import create_app
from trisect.serve.model import ServedModel
from trisect.serve.replay import ReplayChoice, ReplayPiece, ReplayServer
from trisect.serve.service import Service
from trisect.serve.upstream.http import HTTPUpstream
from trisect.templates import ChatTemplate

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}"
    "{% if m.tool_calls %}{% for c in m.tool_calls %}<tool_call>{{ c.function | tojson }}</tool_call>{% endfor %}"
    "{% endif %}<|im_end|>\n{% endfor %}"
    "{% if tools %}<|im_start|>tools\n{{ tools | tojson }}<|im_end|>\n{% endif %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def replay_pieces(case: dict[str, Any]) -> tuple[ReplayPiece, ...]:
    ids = cases.token_ids(case)
    output = case["output"]
    if ids is None:
        return tuple(ReplayPiece(output[i : i + 3]) for i in range(0, len(output), 3))
    out = []
    sent = 0
    pending: list[int] = []
    for k, token in enumerate(ids, 1):
        pending.append(token)
        text = tokenizers.decode(case["tokenizer"], ids[:k])
        if text.endswith("\ufffd") and k < len(ids):
            out.append(ReplayPiece("", (token,)))  # the detokenizer holds the text back
            continue
        out.append(ReplayPiece(text[sent:], (token,)))
        sent = len(text)
    assert "".join(p.text for p in out) == tokenizers.decode(case["tokenizer"], ids)
    return tuple(out)


def served_model(
    reasoning: str | None,
    tools: str | None,
    tokenizer: Any = None,
    template: str = CHATML,
    names: tuple[str, ...] = ("test-model",),
) -> ServedModel:
    parser = Parser(reasoning, tools, tokenizer=tokenizer)
    from trisect.formats import reasoning_format

    end = tuple(reasoning_format(reasoning).terminals.get("THINK_END", ())) if reasoning else ()
    return ServedModel(
        names=names,
        parser=parser,
        template=ChatTemplate(source=template, special_tokens={"eos_token": "<|im_end|>"}),
        tokenizer=tokenizer,
        keep_tokens=tuple(m for ms in parser.spec.terminals.values() for m in ms),
        reasoning_end=end,
    )


class AppServer:
    """The trisect app under uvicorn in a thread."""

    def __init__(self, service: Service, **app_options: Any) -> None:
        import uvicorn

        self.service = service
        config = uvicorn.Config(
            create_app(service, **app_options),
            host="127.0.0.1",
            port=0,
            log_level="warning",
            lifespan="on",
            workers=1,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="trisect-serve", daemon=True)

    def __enter__(self) -> AppServer:
        self.thread.start()
        deadline = time.monotonic() + HANG
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the server did not start")
            time.sleep(0.005)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(HANG)


@contextlib.contextmanager
def stack(kind: str, responder: Any, served: ServedModel, **options: Any) -> Iterator[tuple[ReplayServer, AppServer]]:
    """A replay engine of ``kind`` and the trisect server in front of it."""
    app_options = {k: options.pop(k) for k in ("api_key", "max_body_bytes") if k in options}
    with ReplayServer(kind, responder) as replay:
        # a busy machine may take long to connect 256 streams: only a hang is a failure here
        upstream = HTTPUpstream(replay.url, kind, timeout=HANG, connect_timeout=HANG)
        with AppServer(Service(served, upstream, **options), **app_options) as app:
            yield replay, app


__all__ = ["AppServer", "ReplayChoice", "ReplayPiece", "replay_pieces", "served_model", "stack"]
