"""The signed envelope of a stream state (``trisect.engine.envelope``): every way a state can be
wrong is refused with a ``StateError`` naming why, before anything of it is decoded."""

from __future__ import annotations

import enum
import hashlib
import hmac
import marshal
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trisect.engine import envelope
from trisect.engine.envelope import NO_TOKENIZER, Binding, decode, digest, encode, seal, unseal
from trisect.errors import RequestError, StateError, TrisectError

KEY = b"k" * 32
BINDING = Binding(digest(b"formats"), NO_TOKENIZER, digest(b"request"))

values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63) + 1, 2**63 - 1) | st.text() | st.binary(),
    lambda inner: st.lists(inner, max_size=5).map(tuple),
    max_leaves=30,
)


@given(values)
def test_every_value_round_trips_through_the_payload_encoding(value: object) -> None:
    assert decode(encode(value)) == value


@given(values)
def test_every_value_round_trips_signed(value: object) -> None:
    assert unseal(seal(value, KEY, BINDING), KEY, BINDING) == value


def test_text_with_lone_surrogates_round_trips() -> None:
    value = ("a\ud800b", "\udfff")
    assert unseal(seal(value, KEY, BINDING), KEY, BINDING) == value


def test_a_state_is_deterministic_without_a_ttl() -> None:
    assert seal((1, "x"), KEY, BINDING) == seal((1, "x"), KEY, BINDING)


def test_a_small_state_costs_the_overhead_plus_its_payload() -> None:
    value = (1, "held", None)
    assert len(seal(value, KEY, BINDING)) == envelope.OVERHEAD + len(encode(value))


def test_a_large_payload_is_compressed_and_still_round_trips() -> None:
    value = ("abc" * 2000,)
    sealed = seal(value, KEY, BINDING)
    assert len(sealed) < len(encode(value)) // 4
    assert unseal(sealed, KEY, BINDING) == value


def test_only_plain_values_are_written() -> None:
    for bad in ({"a": 1}, 1.5, object(), {1, 2}, [1], 1j):
        with pytest.raises(TypeError):
            encode(bad)


def test_state_error_is_a_trisect_error() -> None:
    assert issubclass(StateError, TrisectError)


def _reason(data: bytes, key: bytes = KEY, binding: Binding = BINDING, **kw: object) -> str:
    with pytest.raises(StateError) as info:
        unseal(data, key, binding, **kw)  # type: ignore[arg-type]
    return info.value.reason


def test_every_altered_byte_is_refused() -> None:
    sealed = seal(("held text", 3, (True, None)), KEY, BINDING)
    for i in range(len(sealed)):
        for flip in (0x01, 0x80):
            altered = sealed[:i] + bytes([sealed[i] ^ flip]) + sealed[i + 1 :]
            assert _reason(altered) in ("malformed", "version", "signature")


def test_every_truncation_is_refused() -> None:
    sealed = seal(("held text", 3), KEY, BINDING)
    for n in range(len(sealed)):
        assert _reason(sealed[:n]) in ("malformed", "signature")
    assert _reason(sealed + b"\0") == "signature"


def test_another_key_is_refused() -> None:
    sealed = seal((1,), KEY, BINDING)
    assert _reason(sealed, key=b"another key of 32 bytes........") == "signature"


def test_another_version_is_refused() -> None:
    sealed = bytearray(seal((1,), KEY, BINDING))
    sealed[2] = envelope.STATE_VERSION + 1
    assert _reason(bytes(sealed)) == "version"


@pytest.mark.parametrize("part", ["formats", "tokenizer", "request"])
def test_another_binding_is_refused_and_named(part: str) -> None:
    sealed = seal((1,), KEY, BINDING)
    other = Binding(**{**{n: getattr(BINDING, n) for n in ("formats", "tokenizer", "request")}, part: digest(b"x")})
    assert _reason(sealed, binding=other) == part


def test_an_expired_state_is_refused() -> None:
    sealed = seal((1,), KEY, BINDING, ttl=60)
    assert unseal(sealed, KEY, BINDING) == (1,)
    assert _reason(sealed, now=10**11) == "expired"


def test_an_oversized_state_is_refused_before_anything_is_read() -> None:
    # garbage of the right size is refused as oversized: the size is the first thing checked
    assert _reason(b"\xff" * 101, max_bytes=100) == "oversized"
    sealed = seal(("x" * 500,), KEY, BINDING)
    assert _reason(sealed, max_bytes=len(sealed) - 1) == "oversized"


def test_a_payload_that_inflates_past_the_limit_is_refused() -> None:
    sealed = seal(("a" * 100_000,), KEY, BINDING)
    assert len(sealed) < 2_000
    assert _reason(sealed, max_bytes=10_000) == "oversized"


def _signed(payload: bytes, flags: int = 0) -> bytes:
    parts = (BINDING.formats, BINDING.tokenizer, BINDING.request)
    body = envelope.HEADER.pack(envelope.MAGIC, envelope.STATE_VERSION, flags, 0, *parts) + payload
    return body + hmac.new(KEY, body, hashlib.sha256).digest()


def test_a_signed_payload_that_does_not_read_is_refused() -> None:
    # a genuine signature over a payload that is not a plain value (as another release's layout
    # under the same version would be, or a leaked key's forgery): malformed, never a crash, and
    # nothing but plain values ever comes out
    deep: object = ()
    for _ in range(envelope.MAX_DEPTH + 2):
        deep = (deep,)
    bad = [
        (b"\xff", 0),
        (b"", 0),
        (marshal.dumps(1.5), 0),
        (marshal.dumps([1, 2]), 0),
        (marshal.dumps({1: 2}), 0),
        (marshal.dumps(frozenset()), 0),
        (marshal.dumps(complex(9, 9)), 0),
        (marshal.dumps(complex(0.5, 0)), 0),
        (marshal.dumps((1, (2, 3.0))), 0),
        (marshal.dumps(compile("1", "x", "eval")), 0),
        (marshal.dumps(deep), 0),
        (zlib.compress(marshal.dumps([1])), 1),
        (b"not zlib", 1),
        (marshal.dumps(1), 4),
    ]
    for payload, flags in bad:
        assert _reason(_signed(payload, flags)) == "malformed", payload


def test_not_bytes_is_refused() -> None:
    assert _reason("a state", key=KEY) == "malformed"  # type: ignore[arg-type]


def test_an_empty_key_is_a_request_error() -> None:
    with pytest.raises(RequestError):
        seal((1,), b"", BINDING)


class Colour(enum.Enum):
    RED = "red"
    PAIR = (True, 2)


def test_enum_members_round_trip_by_their_value() -> None:
    value = (Colour.RED, (Colour.PAIR, 1))
    assert decode(encode(value, (Colour,)), (Colour,)) == value


def test_an_enum_not_named_is_not_written_nor_read() -> None:
    with pytest.raises(TypeError):
        encode(Colour.RED)
    data = encode(Colour.RED, (Colour,))
    with pytest.raises(StateError):
        decode(data)
