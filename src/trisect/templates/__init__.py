"""Chat templates: find a model's template and render it with transformers' semantics.

``load_template(source)`` reads a template string, a ``.jinja`` file, a ``tokenizer_config.json``,
a model directory or a GGUF file; ``ChatTemplate.render(messages, tools=…, …)`` renders it as
``apply_chat_template`` does. Needs jinja2 (the ``templates`` extra) to render; reading a GGUF
header needs only the standard library.
"""

from __future__ import annotations

from .gguf import is_gguf, read_metadata
from .render import ChatTemplate
from .source import load_template

__all__ = ["ChatTemplate", "is_gguf", "load_template", "read_metadata"]
