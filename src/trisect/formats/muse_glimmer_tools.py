"""MuseGlimmer tool calls (``muse_glimmer``): ATEM XML.

Wire format::

    <atem:function_calls>
    <atem:invoke name="weather.get">
    <atem:parameter name="city">Paris</atem:parameter>
    </atem:invoke>
    </atem:function_calls>

The same invoke/parameter grammar as DeepSeek's DSML (``deepseek_dsml``) under the ``atem:``
namespace: one block of one or more invokes, names as written (dots included), values kept
verbatim and typed by the tool schema, a closing tag inside a value counting only where the
structure goes on after it, the same recovered shapes. The tags are text (no tokenizer staged).

Reference: FORMATS.md muse_glimmer (vLLM MuseGlimmerToolParser: ``<atem:function_calls>``,
``<atem:invoke name="weather.get">``, ``<atem:parameter name="city">Paris</atem:parameter>``).
No template is staged; the closers ``</atem:invoke>`` / ``</atem:function_calls>`` are assumed
to mirror the openers, and the whitespace between tags follows the DSML template's layout.
The channel grammar of MuseGlimmer's reasoning is a separate reasoning format.
"""

from __future__ import annotations

from .deepseek_dsml import dsml_format

FORMATS = [
    dsml_format(
        "muse_glimmer",
        dsml="atem:",
        block="function_calls",
        special=False,
        unwrap=(),
        models=("MuseGlimmer",),
        reference="FORMATS.md muse_glimmer (ATEM XML); closers assumed",
    ),
]
