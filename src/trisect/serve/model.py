"""The model being served: its names, chat template, tokenizer and trisect parser, loaded once.

* Template: ``--chat-template`` (a file, or the Jinja text), else the model directory's
  ``chat_template.jinja`` / ``chat_template.json`` / ``tokenizer_config.json``, else the GGUF's
  metadata (``trisect.templates.load_template``). Content format: ``openai`` (a list of text
  parts) when the template loops over a message's content, else ``string`` — vLLM's detection.
* Tokenizer (the parser's id mode, where the upstream reports ids): ``--tokenizer`` or the model
  directory's ``tokenizer.json``, loaded with the HF ``tokenizers`` library when it is
  installed; without one the parser reads text (ids still count tokens).
* Markers: every marker string of the formats, sent to llama.cpp as ``preserved_tokens`` (a
  control token would otherwise be rendered as ``""``), and the reasoning end markers a
  two-phase request stops at.
* BOS: engines that tokenize the prompt with special tokens added (llama.cpp, SGLang) would add
  a second BOS to a template that renders one; ``strip_bos`` says to cut the rendered BOS
  text for them (from the GGUF's ``tokenizer.ggml.add_bos_token`` or ``tokenizer_config.json``'s
  ``add_bos_token``, true when neither says).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..detect import Detection, detect
from ..engine.spec import FormatSpec
from ..parser import Parser
from ..templates import ChatTemplate, is_gguf, load_template, read_metadata


@dataclass
class ServedModel:
    names: tuple[str, ...]
    parser: Parser
    template: ChatTemplate
    content_format: str = "string"
    developer_role: bool = True
    tokenizer: Any = None
    keep_tokens: tuple[str, ...] = ()
    reasoning_end: tuple[str, ...] = ()
    engine_adds_bos: bool = True
    formats: str = ""  # which formats, and why (named, or detected and how sure): for the banner

    @property
    def name(self) -> str:
        return self.names[0]

    def prompt_for(self, prompt: str, kind: str) -> str:
        """The rendered prompt as sent to an upstream of ``kind`` (see ``strip_bos``)."""
        bos = self.template.bos_token
        if kind in ("llamacpp", "embedded", "sglang") and self.engine_adds_bos and bos and prompt.startswith(bos):
            return prompt[len(bos) :]
        return prompt


def content_format(source: str) -> str:
    """``openai`` when the template iterates over a message's ``content`` (or a ``content``
    variable), else ``string`` (vLLM's ``_detect_content_format``, simplified to direct loops)."""
    import jinja2
    import jinja2.nodes as n

    try:
        tree = jinja2.Environment(extensions=["jinja2.ext.loopcontrols"]).parse(source)
    except jinja2.TemplateSyntaxError:
        return "string"
    message_vars = {
        loop.target.name
        for loop in tree.find_all(n.For)
        if isinstance(loop.iter, n.Name) and loop.iter.name == "messages" and isinstance(loop.target, n.Name)
    } | {"message"}
    for loop in tree.find_all(n.For):
        it = loop.iter
        while isinstance(it, n.Filter) and it.node is not None:
            it = it.node
        if isinstance(it, n.Name) and it.name == "content":
            return "openai"
        if isinstance(it, n.Getattr) and it.attr == "content" and isinstance(it.node, n.Name):
            if it.node.name in message_vars:
                return "openai"
        if isinstance(it, n.Getitem) and isinstance(it.arg, n.Const) and it.arg.value == "content":
            if isinstance(it.node, n.Name) and it.node.name in message_vars:
                return "openai"
    return "string"


@lru_cache(maxsize=8)
def _tokenizer(path: str) -> Any:
    from tokenizers import Tokenizer

    return Tokenizer.from_file(path)


def _add_bos(model: Path | None) -> bool:
    if model is None:
        return True
    if model.is_file() and is_gguf(model):
        value = read_metadata(model).get("tokenizer.ggml.add_bos_token")
        return True if value is None else bool(value)
    config = model / "tokenizer_config.json" if model.is_dir() else None
    if config is not None and config.is_file():
        value = json.loads(config.read_text(encoding="utf-8")).get("add_bos_token")
        return True if value is None else bool(value)
    return True


def _log_detection(detection: Detection) -> None:
    """One line on stderr: what detection chose, so a wrong guess is visible (and overridable)."""
    import sys

    note = "; pass --reasoning-parser / --tool-call-parser to override" if detection.unknown else ""
    sys.stderr.write(f"trisect serve: detected from the chat template: {detection.summary()}{note}\n")


def load_model(
    *,
    model: str | None,
    chat_template: str | None = None,
    reasoning_parser: str | None = None,
    tool_call_parser: str | None = None,
    tokenizer: str | None = None,
    served_model_names: tuple[str, ...] = (),
    content_format_option: str = "auto",
    formats_origin: str = "named on the command line",
) -> ServedModel:
    """Load what ``trisect serve`` serves (``TemplateError`` / ``FormatError`` on bad input)."""
    path = Path(model) if model is not None and Path(model).exists() else None
    source: str | Path | None = chat_template or (path if path is not None else None)
    if source is None:
        from ..errors import TemplateError

        raise TemplateError(
            "no chat template: pass --chat-template FILE, or --model with a model directory or a GGUF file"
        )
    template = load_template(source)
    if chat_template is not None and path is not None and not template.special_tokens:
        # a template file alone has no special tokens: take them from the model
        try:
            template = ChatTemplate(
                source=template.source,
                special_tokens=load_template(path).special_tokens,
                tool_use=template.tool_use,
                origin=template.origin,
            )
        except Exception:  # noqa: BLE001 - the model need not have a template of its own
            pass
    tok = None
    tok_path = (
        Path(tokenizer) if tokenizer else (path / "tokenizer.json" if path is not None and path.is_dir() else None)
    )
    if tok_path is not None and tok_path.is_dir():
        tok_path = tok_path / "tokenizer.json"
    if tok_path is not None and tok_path.is_file():
        try:
            tok = _tokenizer(str(tok_path))
        except ImportError:
            tok = None  # id mode needs the tokenizers package; text mode works without it
    reasoning: str | FormatSpec | None = reasoning_parser
    tools: str | FormatSpec | None = tool_call_parser
    if reasoning is None and tools is None:
        # no format named: the chat template says which (trisect.detect; an unknown part is left out)
        detection = detect(template)
        reasoning, tools = detection.reasoning_spec, detection.tools_spec
        _log_detection(detection)
        formats = f"{detection.summary()} (detected from the chat template)"
    else:
        formats = f"reasoning {reasoning_parser or 'none'}, tools {tool_call_parser or 'none'} ({formats_origin})"
    parser = Parser(reasoning, tools, tokenizer=tok)
    markers = tuple(dict.fromkeys(m for strings in parser.spec.terminals.values() for m in strings if m))
    end: tuple[str, ...] = ()
    if parser.reasoning_spec is not None:
        end = tuple(parser.reasoning_spec.terminals.get("THINK_END", ()))
    names = served_model_names or ((model,) if model else ("trisect",))
    fmt = content_format(template.source) if content_format_option == "auto" else content_format_option
    source_text = template.source + (template.tool_use or "")
    return ServedModel(
        names=tuple(names),
        parser=parser,
        template=template,
        content_format=fmt,
        developer_role="'developer'" in source_text or '"developer"' in source_text,
        tokenizer=tok,
        keep_tokens=markers,
        reasoning_end=end,
        engine_adds_bos=_add_bos(path),
        formats=formats,
    )
