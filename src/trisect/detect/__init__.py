"""Detection: the formats a model needs, from its chat template (render, diff, confirm).

``detect(source)`` renders the template with controlled conversations, diffs the renders to
isolate the reasoning markers and the tool-call wire format, and keeps only registered formats
that parse the renders back to exactly the sentinels they were made from; when none does but
the structure is clear, it builds one, and offers it only if it parses the template's own turns
back exactly. Modules: ``probe`` (the conversations rendered), ``diff`` and ``evidence`` (what the
renders show), ``confirm`` (the trials), ``priority`` (how ties between equally good names are
broken), ``confidence`` (how sure each part is), ``synth`` and ``shapes`` (formats built from the
evidence), ``inverse`` (the template's own turns, parsed back), ``emit`` (a built format as a format
file), ``detector`` (the steps), ``result`` (``Detection``). docs/detect.md has the method, the
policy, the calibration and the accuracy tables.
"""

from __future__ import annotations

from .detector import detect
from .result import CONFIRMED, NONE, SYNTHESISED, UNKNOWN, Detection, Part

__all__ = ["CONFIRMED", "NONE", "SYNTHESISED", "UNKNOWN", "Detection", "Part", "detect"]
