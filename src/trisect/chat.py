"""``trisect.chat``: the public name of the OpenAI chat layer (``trisect.openai.chunks``)."""

from __future__ import annotations

from .openai.call_ids import ID_STYLES, make_call_id
from .openai.chunks import ChatStream, chat_completion, resolve_finish_reason

__all__ = ["ID_STYLES", "ChatStream", "chat_completion", "make_call_id", "resolve_finish_reason"]
