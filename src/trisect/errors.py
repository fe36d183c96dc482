"""Every error trisect raises, declared in one place.

Malformed *model output* is not an error: it degrades by the documented rules of the engine
(see the ``trisect.engine`` package docstring). Errors are for bad *input from the caller*: an unknown format name, a
request whose options contradict each other, a tool schema that cannot be used, a stream that
is fed after it was finished, a stream state that cannot be resumed, or ``strict=True`` parsing
that meets malformed output.
"""

from __future__ import annotations


class TrisectError(Exception):
    """Base class of every error raised by trisect."""


class FormatError(TrisectError):
    """A format name is unknown, or a format description is inconsistent."""


class DetectionError(FormatError):
    """Formats were to be detected from a chat template and detection could not tell one of
    them (that part is unknown): the message names the option that names it instead."""


class RequestError(TrisectError, ValueError):
    """Request options are invalid (unknown option, wrong type, contradictory choices)."""


class ToolSchemaError(RequestError):
    """A tool definition cannot be used (not an OpenAI function tool, bad JSON schema)."""


class TemplateError(TrisectError, ValueError):
    """A chat template cannot be found or compiled, or raised while rendering a request
    (``raise_exception`` in the template, e.g. "roles must alternate")."""


class StreamError(TrisectError):
    """A stream was used out of order (fed after ``finish()``) or given inconsistent input."""


class StateError(TrisectError, ValueError):
    """A stream state (``StreamParser.to_state``) was refused by ``Parser.resume``: altered,
    truncated, signed with another key, made by another trisect state version, for another
    parser, formats, tokenizer or request, expired, or larger than allowed. Nothing was decoded
    from it, so nothing of it reaches any output.

    ``reason`` names the check that refused it: ``"malformed"`` (not a trisect state, or cut
    short), ``"version"``, ``"signature"`` (altered, truncated, or another key), ``"formats"``,
    ``"tokenizer"``, ``"request"``, ``"expired"`` or ``"oversized"``.
    """

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class MalformedOutputError(TrisectError):
    """Raised instead of degrading when a stream or ``parse()`` runs with ``strict=True``.

    ``state`` is the engine state the stream was in and ``position`` the character offset in
    the output where the problem was detected.
    """

    def __init__(self, message: str, *, state: str, position: int) -> None:
        super().__init__(f"{message} (state {state}, output offset {position})")
        self.state = state
        self.position = position
