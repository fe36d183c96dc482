"""trisect as vLLM's reasoning and tool-call parsers: registration and the two guarded patches.

    vllm serve M --reasoning-parser trisect_qwen3 --tool-call-parser trisect_qwen3_coder \\
        --enable-auto-tool-choice

**Registration.** ``register()`` is the ``vllm.general_plugins`` entry point: vLLM calls it in
every process (API servers, engine core, workers). It also runs when this module is imported,
so ``--tool-parser-plugin trisect.integrations.vllm`` works where entry points are filtered
(``VLLM_PLUGINS``). It imports nothing of vLLM: each of vLLM's modules it needs is acted on
when that module is imported, in the processes that import it (``_after_import``). The engine
core thus gets the reasoning names without importing ``vllm.tool_parsers`` (about 2 s there).
Names: ``trisect_<name>`` for every name and alias ``trisect.Parser`` accepts, reasoning and tool
formats, read from ``trisect.formats()`` when vLLM's parser managers load; each is a lazy entry
(``register_lazy_module``) whose class is made on first lookup (``_vllm_parsers``). And
``trisect_auto`` (both kinds): the formats ``trisect.detect`` finds in the chat template of the
tokenizer vLLM gives the parser (``_common.detected``; an unknown part is a ``DetectionError``
when vLLM first builds the parser, naming the flag to pass).

**Patches, on vLLM 0.33.x only** (the installed version, from package metadata; on any other
version nothing is patched and vLLM composes trisect's split parsers itself, in two phases):

* ``ParserManager._compose_parser`` (a private classmethod, vLLM's only composer): when every
  parser name given is trisect's, it returns one ``TrisectParser``, so one trisect stream per
  choice handles reasoning and tool calls together. Any other combination goes to vLLM's own
  code unchanged (``TRISECT_VLLM_UNIFIED=0`` sends every combination there).
* ``OnlineDerenderer._derender_chat_stream_parsed`` (the scale-out tier's streaming chat
  derender, ``vllm serve --enable-scale-out``): for a ``trisect_*`` parser, each chunk resumes
  the trisect stream from ``stream_state.trisect_state`` (its signed state) instead of replaying
  every earlier token through a fresh parser (``_vllm_derender``): O(chunk) per chunk, not
  O(output). ``DerenderStreamState`` takes the extra field (its models are rebuilt with
  ``extra="allow"``). ``TRISECT_VLLM_DERENDER=0`` leaves vLLM's replay in place; replicas share
  the signing key through ``$TRISECT_STATE_KEY``.
* ``ChatStreamProcessor.step``: vLLM reports ``finish_reason: "tool_calls"`` once any call was
  streamed. With incremental tool-call streaming (opt-in, see below) a call can be streamed and
  then cut off; the wrapper then reports the engine's own reason (``stop`` / ``length``).
  Without the wrapper (other versions) incremental streaming is not offered: calls are atomic.

**Truncation rule.** By default calls reach the client whole, once complete (atomic): a call
cut off by ``max_tokens`` or a stop string is never sent, and its markup is not content (trisect's
rule for an unfinished call), so a vLLM client never sees a cut-off call with
``finish_reason: "tool_calls"``. ``TRISECT_TOOL_CALLS=incremental`` (all requests) or
``vllm_xargs: {"trisect_tool_calls": "incremental"}`` (one request) streams arguments as they
are generated; a call cut off then has been partly sent, and ``finish_reason`` is the engine's.

**Grammars.** For ``tool_choice="required"`` or a named function, ``adjust_request`` applies
``trisect.grammar.for_request`` (the JSON schema, or the format's structural tag where the format
keeps its markers under constraint). For ``"auto"`` it applies the format's structural tag only
when asked: ``TRISECT_AUTO_GRAMMAR=1`` or ``vllm_xargs: {"trisect_auto_grammar": 1}``.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import logging
import os
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import Any

from ._common import engine_names, trisect_name

SUPPORTED = "0.33."  # the vLLM release line the patches are written against
CLASSES = "trisect.integrations._vllm_parsers"
UNIFIED_ENV = "TRISECT_VLLM_UNIFIED"

_REASONING_MODULE = "vllm.reasoning.abs_reasoning_parsers"
_TOOLS_MODULE = "vllm.tool_parsers.abstract_tool_parser"
_COMPOSER_MODULE = "vllm.parser.parser_manager"
_STREAM_MODULE = "vllm.entrypoints.openai.chat_completion.stream_processor"
_PROTOCOL_MODULE = "vllm.entrypoints.scale_out.token_in_token_out.protocol"
_DERENDER_MODULE = "vllm.renderers.online_derenderer"
DERENDER_ENV = "TRISECT_VLLM_DERENDER"
_STATE_MODELS = (
    "DerenderStreamState",
    "DerenderChatStreamRequest",
    "DerenderChatStreamResponse",
    "DerenderCompletionStreamRequest",
    "DerenderCompletionStreamResponse",
)

log = logging.getLogger(__name__)
_registered = False


def supported_version() -> bool:
    try:
        return version("vllm").startswith(SUPPORTED)
    except PackageNotFoundError:
        return False


def register() -> None:
    """Register every trisect format with vLLM (idempotent; cheap until vLLM loads its parsers)."""
    global _registered
    if _registered:
        return
    _registered = True
    _after_import(_REASONING_MODULE, _register_reasoning)
    _after_import(_TOOLS_MODULE, _register_tools)
    if supported_version():
        _after_import(_COMPOSER_MODULE, _install_composer)
        _after_import(_STREAM_MODULE, _install_step_guard)
        _after_import(_PROTOCOL_MODULE, _open_stream_state)
        _after_import(_DERENDER_MODULE, _install_derender)


def vllm_names(kind: str) -> dict[str, str]:
    """The plugin's names of one kind: every format's, and ``trisect_auto`` (vLLM gives each parser
    its tokenizer, whose chat template says the format)."""
    return engine_names(kind)


def _register_reasoning(module: ModuleType) -> None:
    manager = module.ReasoningParserManager
    for name, fmt in vllm_names("reasoning").items():
        manager.register_lazy_module(name, CLASSES, f"reasoning:{fmt}")


def _register_tools(module: ModuleType) -> None:
    manager = module.ToolParserManager
    for name, fmt in vllm_names("tools").items():
        manager.register_lazy_module(name, CLASSES, f"tools:{fmt}")


# ---------------------------------------------------------------------------------------- patches


def _install_composer(module: ModuleType) -> None:
    manager = module.ParserManager
    original = manager.__dict__["_compose_parser"]
    if getattr(original, "__trisect__", False):
        return
    compose = original.__func__

    def _compose_parser(
        cls: Any,
        tool_parser_name: str | None,
        reasoning_parser_name: str | None,
        enable_auto_tools: bool,
        model_name: str | None,
        is_harmony: bool,
        tool_strict_level: str | None,
        tokenizer: Any,
    ) -> Any:
        pair = unified_pair(reasoning_parser_name, tool_parser_name if enable_auto_tools else None)
        if pair is not None:
            from ._vllm_parsers import unified_parser

            return unified_parser(*pair)
        return compose(
            cls,
            tool_parser_name,
            reasoning_parser_name,
            enable_auto_tools,
            model_name,
            is_harmony,
            tool_strict_level,
            tokenizer,
        )

    _compose_parser.__trisect__ = True  # type: ignore[attr-defined]
    _compose_parser.__wrapped__ = compose  # type: ignore[attr-defined]
    manager._compose_parser = classmethod(_compose_parser)


def unified_pair(reasoning: str | None, tools: str | None) -> tuple[str | None, str | None] | None:
    """The trisect formats of one ``TrisectParser`` for these names, or ``None`` when a name
    is vLLM's (or unknown) and vLLM composes."""
    if os.environ.get(UNIFIED_ENV, "1") == "0" or not (reasoning or tools):
        return None
    r, t = trisect_name(reasoning or None), trisect_name(tools or None)
    if (reasoning and reasoning not in vllm_names("reasoning")) or (tools and tools not in vllm_names("tools")):
        return None
    return r, t


def _install_step_guard(module: ModuleType) -> None:
    processor = module.ChatStreamProcessor
    original = processor.step
    if getattr(original, "__trisect__", False):
        return
    resolve = module.resolve_finish_reason

    def step(
        self: Any, delta_text: str, delta_token_ids: list[int], finish_reason: str | None, prompt_token_ids: Any
    ) -> Any:
        result = original(self, delta_text, delta_token_ids, finish_reason, prompt_token_ids)
        if result.finish_reason == "tool_calls" and _cut_off(self.parser):
            return result._replace(finish_reason=resolve(finish_reason, self.request, False))
        return result

    step.__trisect__ = True  # type: ignore[attr-defined]
    step.__wrapped__ = original  # type: ignore[attr-defined]
    processor.step = step
    from . import _vllm_parsers

    _vllm_parsers.step_guard_installed = True  # incremental calls only where the guard is in


def _open_stream_state(module: ModuleType) -> None:
    """``DerenderStreamState`` keeps fields it does not declare (``trisect_state``), and the models
    that hold it are rebuilt around that, before any route is built over them."""
    state = module.DerenderStreamState
    if state.model_config.get("extra") == "allow":
        return
    state.model_config["extra"] = "allow"
    for name in _STATE_MODELS:
        getattr(module, name).model_rebuild(force=True)


def _install_derender(module: ModuleType) -> None:
    derenderer = module.OnlineDerenderer
    original = derenderer._derender_chat_stream_parsed
    if getattr(original, "__trisect__", False):
        return

    def _derender_chat_stream_parsed(
        self: Any,
        parser_cls: Any,
        model: str,
        generate_chunk: Any,
        state: Any,
        chat_request: Any,
        prompt_tokens: int | None,
        prompt_token_ids: list[int] | None,
    ) -> Any:
        args = (parser_cls, model, generate_chunk, state, chat_request, prompt_tokens, prompt_token_ids)
        if os.environ.get(DERENDER_ENV, "1") == "0" or getattr(parser_cls, "trisect_formats", None) is None:
            return original(self, *args)
        from ._vllm_derender import derender_chunk

        return derender_chunk(module, self, *args)

    _derender_chat_stream_parsed.__trisect__ = True  # type: ignore[attr-defined]
    _derender_chat_stream_parsed.__wrapped__ = original  # type: ignore[attr-defined]
    derenderer._derender_chat_stream_parsed = _derender_chat_stream_parsed


def _cut_off(parser: Any) -> bool:
    """Did a trisect stream of this serving parser stream a call that was then cut off?"""
    for candidate in (parser, getattr(parser, "tool_parser", None)):
        check = getattr(candidate, "trisect_cut_off", None)
        if check is not None:
            return bool(check())
    return False


# ---------------------------------------------------------------------------------------- after import


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs callbacks right after a module's code ran (once each), wherever it is imported."""

    def __init__(self) -> None:
        self.pending: dict[str, list[Callable[[ModuleType], None]]] = {}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.pending:
            return None
        spec: importlib.machinery.ModuleSpec | None = None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        if spec is None:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _Then(spec.loader, self.pending.pop(fullname))
        return spec


class _Then(importlib.abc.Loader):
    def __init__(self, loader: Any, callbacks: list[Callable[[ModuleType], None]]) -> None:
        self.loader = loader
        self.callbacks = callbacks

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        created: ModuleType | None = self.loader.create_module(spec)
        return created

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = self.loader  # the module keeps its own loader (resources, reload)
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        for callback in self.callbacks:
            _run(callback, module)


def _run(callback: Callable[[ModuleType], None], module: ModuleType) -> None:
    try:
        callback(module)
    except Exception:  # a plugin must not break the engine's own import; it logs and stays out
        log.exception("trisect: could not hook into %s; trisect's vLLM parsers are not registered", module.__name__)


_FINDER = _AfterImport()


def _after_import(name: str, callback: Callable[[ModuleType], None]) -> None:
    module = sys.modules.get(name)
    if module is not None:
        _run(callback, module)
        return
    _FINDER.pending.setdefault(name, []).append(callback)
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


register()
