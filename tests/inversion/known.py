"""The classes the inversion tests find that are not fixed yet, by target: the one list.

Each target here runs as ``xfail(strict=True)``: a fix shows as an unexpected pass and its entry
must go. Each value names the class (issue 20 §2) and the format file that owns it.
"""

from __future__ import annotations

KNOWN: dict[str, str] = {
    "olmo3": "pythonic (olmo3): a template that writes strings raw inside quotes: a raw newline drops the "
    "block into content, a backslash is read as a Python escape (codecs/pythonic.py)",
    "lfm2.5": "pythonic (lfm2): raw strings as olmo3, and the block is split (calls before a bad one "
    "returned, the rest content); qwen3 reasoning: a turn with no think markers after a prompt that "
    "opened none is read as reasoning (formats/qwen3.py, owned by another helper)",
}
