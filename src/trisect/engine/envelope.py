"""A stream's state as bytes: the value encoding and the signed envelope around it.

``seal(value, key, binding)`` writes a state value (nested tuples of ``None``, bools, ints,
strs and bytes: what a stream's components give) as bytes a client can carry;
``unseal(data, key, binding)`` gives the value back, or raises ``StateError`` and decodes
nothing. Layout (integers big-endian)::

    offset  size  field
         0     2  magic b"\\xd5\\x7b"
         2     1  STATE_VERSION
         3     1  flags (bit 0: the payload is zlib-compressed, done from 4 KiB on)
         4     4  expires: Unix seconds after which the state is refused (0: never)
         8    16  formats digest (the compiled formats the stream parses)
        24    16  tokenizer digest (zeros: no tokenizer)
        40    16  request digest (the canonical request options)
        56     n  payload: the value (``marshal``, below), zlib-compressed only when that pays
      56+n    32  HMAC-SHA256 under the key, of everything before it

So a state costs 88 bytes plus its payload. The digests are not secrets: they let ``unseal``
say *why* a state does not fit (another parser, tokenizer or request) once the signature shows
it is genuine; a forger cannot change them without the key.

Checks, in this order, each before anything later is read: the size limit (``max_bytes``,
before any decoding), the header's shape, the version, the signature (constant-time compare),
the bindings, the expiry, then the payload, decompressed to at most ``max_bytes``.

The payload is the value in ``marshal`` format version 4 (the standard library's serialiser of
plain values, written in C: a state costs microseconds to write and read), with each enum member
written as ``complex(which enum, which member)`` (the enums the caller names, in their fixed
order; no value of a stream is a complex number). No pickle: nothing is imported or
constructed from a state but these plain values. ``marshal``'s reader is not meant for
untrusted bytes, so it reads a payload only after the signature proved this deployment's key
made it, and every node it returns is then checked (tuples, ``None``, bools, ints, strs, bytes,
enum codes; nothing nested deeper than ``MAX_DEPTH``) before anything uses it.

What a state reveals: it is signed, not encrypted. Whoever holds it can read the text the
stream still holds (a marker prefix, whitespace, an undecided value, the open call's raw text,
held reasoning) and small counters (calls streamed, offsets); it never holds text already
emitted. The client that carries it was sent that text (or will be), so signing is what
matters: it keeps the server from acting on a state it did not make. Encrypt the transport (TLS)
where the path between the tiers is not trusted.

Cost: O(size of the value) to seal and to unseal, plus one HMAC and, for large payloads, zlib.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import hmac
import marshal
import struct
import time
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import RequestError, StateError

STATE_VERSION = 1
"""The layout of the envelope and of the state values in it. A state of another version is
refused: states are made and resumed by the same trisect release (or one that kept its
layout), which is how replicas of one deployment run."""

MAGIC = b"\xd5\x7b"
DIGEST_SIZE = 16
TAG_SIZE = 32
HEADER = struct.Struct(">2sBBI16s16s16s")
OVERHEAD = HEADER.size + TAG_SIZE
DEFAULT_MAX_BYTES = 4 * 1024 * 1024
"""The largest state ``unseal`` reads (compressed or not). A state is bounded by the text its
stream holds plus a constant; this is far above any stream's but bounds what a client can make
a server decode."""
MAX_DEPTH = 32
_MARSHAL_VERSION = 4  # the payload's format, read the same by every Python trisect supports
_COMPRESSED = 1
# zlib.compress costs ~50 µs of CPU whatever the size (deflate's state is set up each time), ten
# times the rest of a small state's sealing: only a payload this long (an open call's kept raw
# text, long held reasoning) is worth it, where the bytes a client carries are what cost
_COMPRESS_FROM = 4096
NO_TOKENIZER = bytes(DIGEST_SIZE)

Value = Any  # None | bool | int | str | bytes | enum.Enum | tuple[Value, ...]
Enums = Sequence[type[enum.Enum]]


@dataclass(frozen=True, slots=True)
class Binding:
    """What a state is made for: ``unseal`` refuses it anywhere else."""

    formats: bytes
    tokenizer: bytes
    request: bytes

    def __post_init__(self) -> None:
        for name in ("formats", "tokenizer", "request"):
            if len(getattr(self, name)) != DIGEST_SIZE:
                raise ValueError(f"a binding's {name} digest is {DIGEST_SIZE} bytes")


def digest(data: bytes) -> bytes:
    """The digest a binding holds: SHA-256, cut to ``DIGEST_SIZE`` bytes."""
    return hashlib.sha256(data).digest()[:DIGEST_SIZE]


def key_bytes(key: bytes | str) -> bytes:
    """The HMAC key (a str is UTF-8); an empty key signs nothing."""
    raw = key.encode("utf-8") if isinstance(key, str) else key
    if not isinstance(raw, bytes) or not raw:
        raise RequestError("the state key must be non-empty bytes or str")
    return raw


def seal(value: Value, key: bytes | str, binding: Binding, *, ttl: float | None = None, enums: Enums = ()) -> bytes:
    """``value`` as a signed state (``ttl``: seconds from now until ``unseal`` refuses it;
    ``enums``: the enums whose members the value may hold, in a fixed order)."""
    payload = encode(value, enums)
    flags = 0
    if len(payload) >= _COMPRESS_FROM:
        packed = zlib.compress(payload, 6)
        if len(packed) < len(payload):
            payload, flags = packed, _COMPRESSED
    expires = 0 if ttl is None else max(1, int(time.time() + ttl))
    head = HEADER.pack(MAGIC, STATE_VERSION, flags, expires, binding.formats, binding.tokenizer, binding.request)
    body = head + payload
    return body + hmac.digest(key_bytes(key), body, "sha256")


def unseal(
    data: object,  # bytes-like; anything else is refused as malformed (a compiled build checks annotations)
    key: bytes | str,
    binding: Binding,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    now: float | None = None,
    enums: Enums = (),
) -> Value:
    """The value of a state ``seal`` made with ``key`` for ``binding`` (``StateError`` otherwise;
    see the module docstring for the order of the checks)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise StateError(f"a state is bytes, not {type(data).__name__}", reason="malformed")
    if len(data) > max_bytes:
        raise StateError(f"the state is {len(data)} bytes, more than the {max_bytes} allowed", reason="oversized")
    data = bytes(data)
    if len(data) < OVERHEAD or data[:2] != MAGIC:
        raise StateError("not a trisect stream state (or cut short)", reason="malformed")
    _magic, version, flags, expires, formats, tokenizer, request = HEADER.unpack_from(data)
    if version != STATE_VERSION:
        raise StateError(
            f"the state was made by trisect state version {version}; this is version {STATE_VERSION}",
            reason="version",
        )
    body, tag = data[:-TAG_SIZE], data[-TAG_SIZE:]
    if not hmac.compare_digest(tag, hmac.digest(key_bytes(key), body, "sha256")):
        raise StateError("the state's signature does not match: altered, cut short, or another key", reason="signature")
    if formats != binding.formats:
        raise StateError("the state was made by a parser of other formats", reason="formats")
    if tokenizer != binding.tokenizer:
        raise StateError("the state was made with another tokenizer", reason="tokenizer")
    if request != binding.request:
        raise StateError("the state was made for another request (other options)", reason="request")
    if expires and (time.time() if now is None else now) > expires:
        raise StateError("the state has expired", reason="expired")
    payload = body[HEADER.size :]
    if flags & _COMPRESSED:
        inflate = zlib.decompressobj()
        try:
            payload = inflate.decompress(payload, max_bytes)
        except zlib.error:
            raise StateError("the state's payload does not decompress", reason="malformed") from None
        if inflate.unconsumed_tail or not inflate.eof:
            raise StateError(f"the state's payload inflates past {max_bytes} bytes", reason="oversized")
    elif flags:
        raise StateError(f"unknown state flags {flags:#x}", reason="malformed")
    return decode(payload, enums)


# ---------------------------------------------------------------------------------------- values

_PLAIN = frozenset({str, int, bytes, bool, type(None)})


@functools.lru_cache(maxsize=16)
def _members(enums: tuple[type[enum.Enum], ...]) -> tuple[dict[enum.Enum, complex], tuple[tuple[enum.Enum, ...], ...]]:
    """Each member's code (``complex(enum index, member index)``) and the members by index."""
    codes = {member: complex(i, j) for i, kind in enumerate(enums) for j, member in enumerate(kind)}
    return codes, tuple(tuple(kind) for kind in enums)


def encode(value: Value, enums: Enums = ()) -> bytes:
    """``value`` as the payload of the module docstring (``TypeError`` for anything but plain
    values, an enum member of an enum not in ``enums`` included)."""
    codes, _ = _members(enums if type(enums) is tuple else tuple(enums))
    return marshal.dumps(_lift(value, codes, 0), _MARSHAL_VERSION)


def _lift(value: Value, codes: dict[enum.Enum, complex], depth: int) -> Any:
    kind = type(value)
    if kind is not tuple:
        if kind in _PLAIN:
            return value
        code = codes.get(value) if isinstance(value, enum.Enum) else None
        if code is None:
            raise TypeError(f"a state value holds plain values, tuples and named enums, not {value!r}")
        return code
    if depth >= MAX_DEPTH:
        raise TypeError(f"a state value nests deeper than {MAX_DEPTH}")
    out: list[Any] = []
    add = out.append
    plain = _PLAIN
    for v in value:  # a loop, not a comprehension: the commonest item is plain (cheapest this way)
        if type(v) in plain:
            add(v)
        else:
            add(_lift(v, codes, depth + 1))
    return tuple(out)


def decode(payload: bytes, enums: Enums = ()) -> Value:
    """The value ``encode`` wrote (``StateError`` for anything else)."""
    try:
        value = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        raise StateError("the state's payload does not read", reason="malformed") from None
    _, members = _members(enums if type(enums) is tuple else tuple(enums))
    return _lower(value, members, 0)


def _lower(value: Any, members: tuple[tuple[enum.Enum, ...], ...], depth: int) -> Value:
    """The plain value back, every node checked: tuples, the plain kinds, and enum codes."""
    kind = type(value)
    if kind is tuple:
        if depth >= MAX_DEPTH:
            raise StateError(f"the state's payload nests deeper than {MAX_DEPTH}", reason="malformed")
        out: list[Value] = []
        add = out.append
        plain = _PLAIN
        for v in value:
            if type(v) in plain:
                add(v)
            else:
                add(_lower(v, members, depth + 1))
        return tuple(out)
    if kind in _PLAIN:
        return value
    if kind is complex:
        i, j = int(value.real), int(value.imag)
        if i == value.real and j == value.imag and 0 <= i < len(members) and 0 <= j < len(members[i]):
            return members[i][j]
    raise StateError(f"the state's payload holds {kind.__name__}, not a plain value", reason="malformed")


# ---------------------------------------------------------------------------------------- digests


def canonical(value: Any, seen: frozenset[int] = frozenset()) -> str:
    """A stable text of a format description's data (``formats_digest``): mappings sorted,
    dataclasses by field, enums by name, functions by module and qualified name. Not a
    serialisation: two descriptions that read the same give the same text."""
    kind = type(value)
    if value is None or kind in (bool, int, float, str, bytes):
        return repr(value)
    if id(value) in seen:
        return "<cycle>"
    seen = seen | {id(value)}
    if isinstance(value, enum.Enum):
        return f"{kind.__qualname__}.{value.name}"
    if isinstance(value, (tuple, list)):
        return "(" + ",".join(canonical(v, seen) for v in value) + ")"
    if isinstance(value, (set, frozenset)):
        return "{" + ",".join(sorted(canonical(v, seen) for v in value)) + "}"
    if isinstance(value, Mapping):
        items = sorted((canonical(k, seen), canonical(v, seen)) for k, v in value.items())
        return "{" + ",".join(f"{k}:{v}" for k, v in items) + "}"
    if isinstance(value, functools.partial):
        return f"partial({canonical(value.func, seen)},{canonical(value.args, seen)},{canonical(value.keywords, seen)})"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = ",".join(f"{f.name}={canonical(getattr(value, f.name), seen)}" for f in dataclasses.fields(value))
        return f"{kind.__module__}.{kind.__qualname__}({fields})"
    name = getattr(value, "__qualname__", None)
    if name is not None:  # functions, classes, methods
        return f"{getattr(value, '__module__', '')}.{name}"
    if hasattr(value, "pattern") and hasattr(value, "flags"):  # a compiled regex
        return f"re({value.pattern!r},{value.flags})"
    state = getattr(value, "__dict__", None)
    slots = [n for c in kind.__mro__ for n in getattr(c, "__slots__", ()) if hasattr(value, n)]
    parts = dict(state or {}) | {n: getattr(value, n) for n in slots}
    return f"{kind.__module__}.{kind.__qualname__}{canonical(parts, seen)}"


def sequence_digest(parts: Sequence[bytes]) -> bytes:
    """The digest of several byte strings, each length-prefixed (no two lists collide)."""
    h = hashlib.sha256()
    for part in parts:
        h.update(struct.pack(">Q", len(part)))
        h.update(part)
    return h.digest()[:DIGEST_SIZE]
