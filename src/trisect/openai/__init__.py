"""The OpenAI protocol layer: ``chat.completion(.chunk)`` objects from a parser stream.

Standard library only: the results are plain dicts shaped like the official objects.
"""

from __future__ import annotations

from .call_ids import ID_STYLES, make_call_id
from .chunks import ChatStream, chat_completion, resolve_finish_reason

__all__ = ["ID_STYLES", "ChatStream", "chat_completion", "make_call_id", "resolve_finish_reason"]
