"""Read the metadata of a GGUF file (llama.cpp's model format) with the standard library only.

A GGUF file starts with ``b"GGUF"``, a ``uint32`` version, the tensor count and the number of
key-value pairs (``uint64`` from version 2, ``uint32`` in version 1), then the pairs: a string
key, a ``uint32`` value type and the value. Strings are a length (``uint64``; ``uint32`` in
version 1) and UTF-8 bytes; arrays are an item type, a count and the items. Everything is
little-endian. Only the header is read, never the tensors.

``read_metadata(path)`` returns the pairs as a dict. Large arrays (the vocabulary: 50k-250k
strings) are read only for the keys asked for in ``arrays`` (default: none, they are skipped
by seeking past them), so reading the chat template of a multi-GB model costs milliseconds.

Reference: ggml-org/ggml ``docs/gguf.md`` (GGUF v3).
"""

from __future__ import annotations

import struct
from collections.abc import Collection
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import FormatError

MAGIC = b"GGUF"

# value type -> (struct format, size)
_SCALARS: dict[int, tuple[str, int]] = {
    0: ("<B", 1),  # UINT8
    1: ("<b", 1),  # INT8
    2: ("<H", 2),  # UINT16
    3: ("<h", 2),  # INT16
    4: ("<I", 4),  # UINT32
    5: ("<i", 4),  # INT32
    6: ("<f", 4),  # FLOAT32
    7: ("<?", 1),  # BOOL
    10: ("<Q", 8),  # UINT64
    11: ("<q", 8),  # INT64
    12: ("<d", 8),  # FLOAT64
}
_STRING, _ARRAY = 8, 9


class _Reader:
    def __init__(self, f: BinaryIO, path: Path) -> None:
        self.f = f
        self.path = path
        self.wide = True  # lengths are uint64 (version >= 2)

    def exact(self, n: int) -> bytes:
        data = self.f.read(n)
        if len(data) != n:
            raise FormatError(f"{self.path}: truncated GGUF header")
        return data

    def scalar(self, kind: int) -> Any:
        fmt, size = _SCALARS[kind]
        return struct.unpack(fmt, self.exact(size))[0]

    def length(self) -> int:
        value: int = struct.unpack("<Q" if self.wide else "<I", self.exact(8 if self.wide else 4))[0]
        return value

    def string(self) -> str:
        return self.exact(self.length()).decode("utf-8", errors="replace")

    def skip_string(self) -> None:
        self.f.seek(self.length(), 1)

    def value(self, kind: int, keep_array: bool) -> Any:
        if kind in _SCALARS:
            return self.scalar(kind)
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item = self.scalar(4)
            count = self.length()
            if keep_array:
                return [self.value(item, True) for _ in range(count)]
            if item in _SCALARS:
                self.f.seek(_SCALARS[item][1] * count, 1)
            elif item == _STRING:
                for _ in range(count):
                    self.skip_string()
            else:
                for _ in range(count):
                    self.value(item, False)
            return None
        raise FormatError(f"{self.path}: unknown GGUF value type {kind}")


def read_metadata(path: str | Path, *, arrays: Collection[str] = ()) -> dict[str, Any]:
    """The key-value metadata of a GGUF file. Arrays are read only for the keys in ``arrays``
    (others map to ``None``). ``FormatError`` if the file is not GGUF."""
    path = Path(path)
    with path.open("rb") as f:
        r = _Reader(f, path)
        if r.exact(4) != MAGIC:
            raise FormatError(f"{path}: not a GGUF file (no GGUF magic)")
        version = r.scalar(4)
        if version < 1 or version > 3:
            raise FormatError(f"{path}: GGUF version {version} is not supported (1-3)")
        r.wide = version >= 2
        r.length()  # tensor count
        count = r.length()
        out: dict[str, Any] = {"general.gguf_version": version}
        for _ in range(count):
            key = r.string()
            kind = r.scalar(4)
            out[key] = r.value(kind, key in arrays)
        return out


def is_gguf(path: str | Path) -> bool:
    try:
        with Path(path).open("rb") as f:
            return f.read(4) == MAGIC
    except OSError:
        return False


def write_metadata(path: str | Path, metadata: dict[str, Any]) -> None:
    """Write a GGUF v3 file with this metadata and no tensors (tests and tools; values: str,
    bool, int (as INT64), float (FLOAT64), lists of str or int)."""

    def string(s: str) -> bytes:
        data = s.encode("utf-8")
        return struct.pack("<Q", len(data)) + data

    def value(v: Any) -> bytes:
        if isinstance(v, bool):
            return struct.pack("<I?", 7, v)
        if isinstance(v, int):
            return struct.pack("<Iq", 11, v)
        if isinstance(v, float):
            return struct.pack("<Id", 12, v)
        if isinstance(v, str):
            return struct.pack("<I", _STRING) + string(v)
        if isinstance(v, list):
            if all(isinstance(x, str) for x in v):
                return struct.pack("<IIQ", _ARRAY, _STRING, len(v)) + b"".join(string(x) for x in v)
            return struct.pack("<IIQ", _ARRAY, 11, len(v)) + b"".join(struct.pack("<q", x) for x in v)
        raise TypeError(f"unsupported GGUF value {v!r}")

    body = b"".join(string(k) + value(v) for k, v in metadata.items())
    Path(path).write_bytes(MAGIC + struct.pack("<IQQ", 3, 0, len(metadata)) + body)
