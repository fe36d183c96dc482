"""The key that signs stream states: every replica of one derender tier must hold the same one.

From ``--state-key-file F`` (the file's bytes, surrounding whitespace removed: a key written by
``head -c 32 /dev/urandom | base64 > F`` or by hand), else ``$TRISECT_STATE_KEY`` (its UTF-8
bytes), else 32 random bytes made at start-up: then only this process can resume its streams,
and the log says so, since replicas behind a router would refuse each other's ``stream_state``.
A key shorter than ``MIN_KEY`` bytes is refused (HMAC-SHA256's strength is the key's).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ENV = "TRISECT_STATE_KEY"
MIN_KEY = 16

log = logging.getLogger("trisect.serve.scale_out")


@dataclass(frozen=True)
class StateKey:
    key: bytes
    source: str  # "file", "env" or "random"

    @property
    def shared(self) -> bool:
        """Other processes can hold the same key (a random one is this process's alone)."""
        return self.source != "random"


def load_key(path: str | None = None, environ: Mapping[str, str] | None = None) -> StateKey:
    """The state key (``ValueError`` for a key file that cannot be read or a key too short)."""
    env = os.environ if environ is None else environ
    if path is not None:
        try:
            key = Path(path).read_bytes().strip()
        except OSError as exc:
            raise ValueError(f"--state-key-file {path}: {exc.strerror or exc}") from None
        source = "file"
    elif env.get(ENV):
        key, source = env[ENV].strip().encode("utf-8"), "env"
    else:
        log.warning(
            "trisect serve --scale-out: no --state-key-file or $%s: a random state key for this process; "
            "replicas cannot share streams (each refuses the others' stream_state)",
            ENV,
        )
        return StateKey(os.urandom(32), "random")
    if len(key) < MIN_KEY:
        raise ValueError(f"the state key ({source}) is {len(key)} bytes; it must be at least {MIN_KEY}")
    return StateKey(key, source)
