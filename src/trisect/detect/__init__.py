"""Detection: the formats a model needs, from its chat template (render, diff, confirm).

``detect(source)`` renders the template with controlled conversations, diffs the renders to
isolate the reasoning markers and the tool-call wire format, and keeps only registered formats
that parse the renders back to exactly the sentinels they were made from; when none does but
the structure is clear, it builds one. See ``detector`` for the steps and ``priority`` for how
ties between equally good names are broken.
"""

from __future__ import annotations

from .detector import detect
from .result import CONFIRMED, NONE, SYNTHESISED, UNKNOWN, Detection, Part

__all__ = ["CONFIRMED", "NONE", "SYNTHESISED", "UNKNOWN", "Detection", "Part", "detect"]
