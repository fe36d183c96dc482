"""Request semantics above the engine: options, ``tool_choice``, the event filter, the prompt's
verdict on the initial state, and the token view."""

from __future__ import annotations

from .options import Request, make_request

__all__ = ["Request", "make_request"]
