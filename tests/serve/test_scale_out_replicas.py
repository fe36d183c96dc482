"""``trisect serve --scale-out`` as users run it: several processes started by the command line,
sharing a state key, behind a client that sends each chunk of a stream wherever it likes.

* every chunk of one stream to a different replica gives what one replica gives, and what the
  non-streamed derender gives;
* 256 streams at once through two replicas, chunks alternating;
* a replica killed mid-stream (SIGKILL, by pid): the client retries the chunk on the other one
  and the stream ends as if nothing happened;
* a replica with another key refuses the state (400 naming ``stream_state``); one started
  with no key warns that replicas cannot share streams.

Heavy (servers and 256 concurrent streams): ``-m scale_out``, a CI step of its own. The
DeepSeek V3 tokenizer (``tests/data/tokenizers``) and the DeepSeek V3.2 cases of ``tests/cases``;
servers on 127.0.0.1, one worker each, stopped by pid.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from support import cases, tokenizers
from support.work import HANG

pytestmark = pytest.mark.scale_out

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "tests" / "data" / "templates" / "deepseek-ai-DeepSeek-V3.2.jinja"
FAMILY = ("deepseek_v3", "deepseek_v3", "deepseek_v32")
CASES = [
    c
    for c in cases.load_cases()
    if (c["tokenizer"], c["reasoning"], c["tools_format"]) == FAMILY and not (c.get("truncated") or c.get("malformed"))
]
KEY = b"the shared state key of this tier\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Replica:
    """One ``trisect serve --scale-out`` process."""

    def __init__(self, folder: Path, key_file: Path | None) -> None:
        self.port = _free_port()
        command = [
            sys.executable,
            "-m",
            "trisect",
            "serve",
            "--scale-out",
            "--tokenizer",
            str(folder / "tokenizer.json"),
            "--chat-template",
            str(TEMPLATE),
            "--reasoning-parser",
            "deepseek_v3",
            "--tool-call-parser",
            "deepseek_v32",
            "--served-model-name",
            "ds",
            "--port",
            str(self.port),
            "--log-level",
            "warning",
        ]
        if key_file is not None:
            command += ["--state-key-file", str(key_file)]
        env = {k: v for k, v in os.environ.items() if k != "TRISECT_STATE_KEY"}
        self.log = folder / f"replica-{self.port}.log"
        with self.log.open("w") as err:
            self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, env=env)
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + HANG  # against a hang only: the wait is for the server to answer
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the replica exited: {self.log.read_text()}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return
            time.sleep(0.2)
        raise RuntimeError("the replica did not start")

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("scale-out")
    source = tokenizers.DEEPSEEK_DIR
    with gzip.open(source / "tokenizer.json.gz", "rb") as f:
        (out / "tokenizer.json").write_bytes(f.read())
    if (source / "tokenizer_config.json").is_file():
        shutil.copy(source / "tokenizer_config.json", out / "tokenizer_config.json")
    (out / "state.key").write_bytes(KEY)
    return out


@pytest.fixture(scope="module")
def replicas(folder: Path) -> Iterator[list[Replica]]:
    started = [Replica(folder, folder / "state.key") for _ in range(3)]
    try:
        yield started
    finally:
        for r in started:
            r.stop()


def _chat_request(case: dict[str, Any]) -> dict[str, Any]:
    chat: dict[str, Any] = {"model": "ds", "messages": [{"role": "user", "content": "hi"}]}
    if case.get("tools"):
        chat["tools"] = case["tools"]
    chat.update({k: v for k, v in case["options"].items() if k in ("chat_template_kwargs", "reasoning_effort")})
    return chat


def _chunk_body(case: dict[str, Any], ids: list[int], last: bool, state: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "stream": True,
        "model": "ds",
        "generate_chunk": {"request_id": case["id"], "choices": [{"index": 0, "token_ids": ids}]},
        "stream_state": state,
        "chat_request": _chat_request(case),
    }
    if last:
        body["generate_chunk"]["choices"][0]["finish_reason"] = "stop"
    if state is None:
        body["prompt_token_ids"] = []
    return body


def _fold(message: dict[str, Any], chunk: dict[str, Any]) -> None:
    for choice in chunk["choices"]:
        delta = choice["delta"]
        message["reasoning"] += delta["reasoning"] or ""
        message["content"] += delta["content"] or ""
        for tc in delta["tool_calls"]:
            if tc["index"] == len(message["tool_calls"]):
                message["tool_calls"].append([tc["function"]["name"], ""])
            message["tool_calls"][tc["index"]][1] += tc["function"]["arguments"] or ""
        if choice["finish_reason"] is not None:
            message["finish_reason"] = choice["finish_reason"]


def _empty() -> dict[str, Any]:
    return {"reasoning": "", "content": "", "tool_calls": [], "finish_reason": None}


async def _stream(
    client: Any, urls: list[str], case: dict[str, Any], *, kill: Any = None, at: int = -1
) -> dict[str, Any]:
    """One stream, one token per chunk, chunk ``k`` to ``urls[k % len(urls)]``; a chunk whose
    replica does not answer is sent to the next one (the same body: the state is the client's)."""
    ids = cases.token_ids(case)
    assert ids
    message = _empty()
    state = None
    for k, token in enumerate(ids):
        if k == at and kill is not None:
            kill()
        body = _chunk_body(case, [token], k == len(ids) - 1, state)
        for attempt in range(len(urls)):
            url = urls[(k + attempt) % len(urls)]
            try:
                response = await client.post(url + "/v1/chat/completions/derender", json=body)
            except httpx.TransportError:
                continue  # that replica is gone: the next one takes the same chunk
            break
        else:
            raise AssertionError("no replica answered")
        assert response.status_code == 200, response.text
        answer = response.json()
        state = answer["stream_state"]
        _fold(message, answer["chunk"])
    return message


def _whole(url: str, case: dict[str, Any]) -> dict[str, Any]:
    ids = cases.token_ids(case)
    body = {
        "model": "ds",
        "generate_response": {"request_id": case["id"], "choices": [{"index": 0, "token_ids": ids}]},
        "chat_request": _chat_request(case),
        "prompt_token_ids": [],
    }
    response = httpx.post(url + "/v1/chat/completions/derender", json=body, timeout=60)
    assert response.status_code == 200, response.text
    (choice,) = response.json()["choices"]
    msg = choice["message"]
    return {
        "reasoning": msg["reasoning"] or "",
        "content": msg["content"] or "",
        "tool_calls": [[c["function"]["name"], c["function"]["arguments"]] for c in msg["tool_calls"]],
        "finish_reason": choice["finish_reason"],
    }


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    calls = [[n, json.loads(args)] for n, args in a["tool_calls"]] == [[n, json.loads(x)] for n, x in b["tool_calls"]]
    return calls and all(a[k] == b[k] for k in ("reasoning", "content", "finish_reason"))


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


async def _client_streams(urls: list[str], chosen: list[dict[str, Any]], **kw: Any) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(timeout=60) as client:
        return [await _stream(client, urls, case, **kw) for case in chosen]


def test_each_chunk_on_another_replica_gives_what_one_replica_gives(replicas: list[Replica]) -> None:
    urls = [r.url for r in replicas]
    one = _run(_client_streams(urls[:1], CASES))
    spread = _run(_client_streams(urls, CASES))
    for case, a, b in zip(CASES, one, spread, strict=True):
        assert _same(a, b), case["id"]
        assert _same(a, _whole(urls[1], case)), case["id"]


def test_256_concurrent_streams_through_two_replicas(replicas: list[Replica]) -> None:
    urls = [r.url for r in replicas[:2]]
    chosen = [CASES[i % len(CASES)] for i in range(256)]
    wants = {c["id"]: _whole(urls[0], c) for c in CASES}

    async def main() -> list[dict[str, Any]]:
        limits = httpx.Limits(max_connections=512, max_keepalive_connections=512)
        async with httpx.AsyncClient(timeout=300, limits=limits) as client:
            streams = [_stream(client, urls[::-1] if i % 2 else urls, c) for i, c in enumerate(chosen)]
            return await asyncio.gather(*streams)

    got = _run(main())
    assert len(got) == 256
    for case, message in zip(chosen, got, strict=True):
        assert _same(message, wants[case["id"]]), case["id"]


def test_a_replica_killed_mid_stream_the_chunk_retried_on_the_other(folder: Path, replicas: list[Replica]) -> None:
    doomed = Replica(folder, folder / "state.key")
    try:
        case = max(CASES, key=lambda c: len(cases.token_ids(c) or []))
        n = len(cases.token_ids(case) or [])
        survivor = replicas[0].url
        got = _run(_client_streams([doomed.url, survivor], [case], kill=doomed.kill, at=n // 2))[0]
        assert doomed.proc.poll() is not None  # it really died mid-stream
        assert _same(got, _whole(survivor, case))
    finally:
        doomed.stop()


def test_a_replica_with_another_key_refuses_the_state(folder: Path, replicas: list[Replica]) -> None:
    other_key = folder / "other.key"
    other_key.write_bytes(b"another key, not the tier's one\n")
    stranger = Replica(folder, other_key)
    try:
        case = CASES[0]
        ids = cases.token_ids(case) or []
        path = "/v1/chat/completions/derender"
        first = httpx.post(replicas[0].url + path, json=_chunk_body(case, ids[:3], False, None))
        state = first.json()["stream_state"]
        refused = httpx.post(stranger.url + path, json=_chunk_body(case, ids[3:4], False, state))
        assert refused.status_code == 400
        error = refused.json()["error"]
        assert error["param"] == "stream_state" and error["code"] == 400
    finally:
        stranger.stop()


def test_a_replica_without_a_key_warns_that_replicas_cannot_share_streams(folder: Path) -> None:
    alone = Replica(folder, None)
    try:
        alone.stop()
        assert "replicas cannot share streams" in alone.log.read_text()
    finally:
        alone.stop()
