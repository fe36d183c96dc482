"""IBM Granite 3.2 / 3.3 reasoning: plain-text markers, no special tokens.

Wire format (with ``chat_template_kwargs: {"thinking": true}``)::

    Here's my thought process:
    REASONING
    Here's my response:
    CONTENT

Both spellings are accepted for each marker (``Here's`` / ``Here is``). The markers are
ordinary text, matched as text even when token ids are given. The output starts in content:
reasoning is the text after the thought-process marker, so an answer without it is all content
(thinking on or off). A response marker in content is content text: without the
thought-process marker vLLM's parser returns the whole output as content, and after the first
response marker its content is all the rest (``(.*)``), a second marker included. A second
thought-process marker inside the reasoning is reasoning text: the block only opens at the
output's own marker (the generation prompt writes none), and vLLM's lazy ``(.*?)`` between the
two markers keeps it in the reasoning too; it used to be dropped, deleting the model's words.

Reference: vLLM 0.33 ``vllm/reasoning/granite_reasoning_parser.py`` (``(?:Here's|Here is) my
thought process:`` / ``(?:Here's|Here is) my response:``, matched as text); ibm-granite
granite-3.3-2b-instruct chat template (the ``thinking`` switch and the generation prompt,
tests/data/templates/ibm-granite-granite-3.3-2B-Instruct.jinja; that template's system prompt
asks for ``<think>``/``<response>`` tags, which are not this parser's markers).
"""

from __future__ import annotations

from ._think import think_format


def _content(_request: object) -> str:
    """the output starts in content; the thought-process marker opens reasoning"""
    return "CONTENT"


FORMATS = [
    think_format(
        "granite",
        start=("Here's my thought process:", "Here is my thought process:"),
        end=("Here's my response:", "Here is my response:"),
        special=False,
        initial=_content,
        opens_in_content=True,
        start_in_reasoning_is_text=True,
        turn_markers=("<|start_of_role|>", "<|end_of_role|>", "<|end_of_text|>"),
        models=("granite-3.2-8b-instruct", "granite-3.3-8b-instruct", "granite-3.3-2b-instruct"),
        reference="vLLM 0.33 granite_reasoning_parser.py; Granite 3.3 chat template",
    ),
]
