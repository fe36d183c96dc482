"""``identity``: no reasoning block; the whole output is content.

Wire format::

    CONTENT

Reference: vLLM ``IdentityReasoningParser`` (used when a family's thinking is off).
"""

from __future__ import annotations

from ..engine.spec import IDENTITY

FORMATS = [IDENTITY]
