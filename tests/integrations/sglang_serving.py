"""SGLang 0.5.23's chat serving with no model: what a client receives, from SGLang's own code.

``serving_chat.py`` does not import in the minimal venv: its imports reach the model runtime
(``io_struct`` needs zmq, ``utils/common`` triton and PIL, the multimodal processors torchvision
and with it the CUDA build of torch). So the methods of ``OpenAIServingChat`` that turn engine
output into a response are compiled from the installed file itself (``SERVING``, the source as
it is, its own line numbers in tracebacks) and run as methods of a stand-in server (``Server``):
nothing of the parsing half is a copy. They run over the real ``ReasoningParser`` and
``FunctionCallParser`` with the plugin's detectors, in SGLang's order:

* start-up: the block of ``OpenAIServingChat.__init__`` that builds ``_reasoning_detector``
  (``ReasoningParser(name, stream_reasoning=True, tokenizer=...)``), whose ``reasoning_default``
  ``_get_reasoning_from_request`` reads when the template gave SGLang no reasoning config;
* streaming: ``_generate_chat_stream`` over a stand-in ``tokenizer_manager.generate_request``
  (the engine: the output's text cut at token boundaries, cumulative, as SGLang's detokenizer
  sends it with ``incremental_streaming_output`` off, its default), down through
  ``_generate_stream_content``, ``_process_reasoning_stream`` (``force_reasoning`` =
  ``template_manager.force_reasoning or _get_reasoning_from_request(request)``),
  ``_process_tool_call_stream``, ``_check_for_unstreamed_tool_args`` and the ``finish_reason``
  rewrite; the SSE chunks are folded as a client folds them;
* non-streaming: ``_build_chat_response`` (``ReasoningParser(stream_reasoning=False)
  .parse_non_stream``, then ``_process_tool_calls``).

The template manager is SGLang's two facts about the chat template: ``force_reasoning`` and
``reasoning_config``, from SGLang's own ``detect_reasoning_pattern`` of a template (``known``), or
none (``UNKNOWN``: no template, or one SGLang's rules do not match). What stands in for the rest
is listed in ``STAND_INS`` with the reason for each.
"""

from __future__ import annotations
import __future__

import ast
import asyncio
import contextlib
import contextvars
import functools
import importlib
import importlib.util
import json
import logging
import sys
import types
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hf_tokenizers

MODEL = "trisect-test/model"


def _installed(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    return Path(spec.origin)


SERVING = _installed("sglang.srt.entrypoints.openai.serving_chat")
CLASS = "OpenAIServingChat"
# The methods of OpenAIServingChat the parsing half runs, compiled from SERVING.
METHODS = (
    "_generate_chat_stream",
    "_generate_stream_content",
    "_process_reasoning_stream",
    "_process_tool_call_stream",
    "_check_for_unstreamed_tool_args",
    "_build_chat_response",
    "_process_tool_calls",
    "_process_tool_call_id",
    "_get_reasoning_from_request",
    "_reasoning_default_mode",
    "_tool_call_parsing_active",
    "_effective_tools",
    "_answer_started",
    "_get_history_tool_calls_cnt",
    "_should_return_input_ids",
    "_should_return_output_ids",
    "_reported_prompt_tokens",
    "_continuous_usage_cached_details",
    "_decode_response",
    "_get_parsed_response_fields",
    "_settle_response_template_stop",
    "_encoding_output",
)
FUNCTIONS = ("_incomplete_tool_call_indices",)  # module-level helpers those methods call


# The serving config (``get_serving()``) those methods and the plugin read, as the launcher
# publishes it: SGLang's defaults (``srt/arg_groups/fields/serving.py``) and the parser names.
SERVING_DEFAULTS: dict[str, Any] = {
    "incremental_streaming_output": False,
    "stream_response_default_include_usage": False,
    "enable_cache_report": False,
    "return_input_ids": False,
    "return_output_ids": False,
    "default_chat_template_kwargs": None,
}


@contextlib.contextmanager
def serving_config(reasoning: str | None, tools: str | None) -> Iterator[None]:
    """``get_serving()`` answers as in a server launched with these parser names: the launcher's
    ``publish`` builds the bags from ``ServerArgs`` (not built here); the ``serving`` bag is
    installed on the process context directly, and the previous bags are put back after."""
    from sglang.srt import runtime_context

    bag = runtime_context._ConfigBag("serving")
    for name, value in {**SERVING_DEFAULTS, "reasoning_parser": reasoning, "tool_call_parser": tools}.items():
        bag._set(name, value)
    context = runtime_context._CONTEXT
    saved = context._config_bags
    context._config_bags = {"serving": bag}
    try:
        yield
    finally:
        context._config_bags = saved


class _Unavailable:
    """A name of serving_chat's imports whose module does not import here; those methods only
    name it in annotations (not evaluated), and any other use fails loudly."""

    def __init__(self, name: str, error: str) -> None:
        self._what = f"{name} ({error})"

    def __getattr__(self, attr: str) -> Any:
        raise RuntimeError(f"serving_chat used {self._what}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"serving_chat used {self._what}")


def _weight_version_metadata(meta_info: dict[str, Any]) -> dict[str, Any]:
    return {"weight_version": meta_info["weight_version"]}


STAND_INS: dict[str, Any] = {
    # sglang.srt.utils.weight_versions imports the runtime (triton); its function, one line
    "build_endpoint_weight_version_metadata": _weight_version_metadata,
}


@functools.cache
def _tree() -> ast.Module:
    return ast.parse(SERVING.read_text(encoding="utf-8"), str(SERVING))


def _imports() -> dict[str, tuple[str, str | None]]:
    """serving_chat's top-level imports: name -> (module, attribute or None)."""
    out: dict[str, tuple[str, str | None]] = {}
    for node in ast.walk(_tree()):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                out.setdefault(alias.asname or alias.name, (node.module, alias.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                out.setdefault(alias.asname or alias.name.split(".")[0], (alias.name, None))
    return out


def _resolve(name: str, where: tuple[str, str | None]) -> Any:
    module, attr = where
    try:
        imported = importlib.import_module(module)
    except Exception as exc:  # the runtime modules this venv leaves out
        return _Unavailable(name, f"{module}: {type(exc).__name__}: {exc}")
    if attr is None:
        return importlib.import_module(module.split(".")[0]) if "." in module else imported
    try:
        return getattr(imported, attr)
    except AttributeError:
        return importlib.import_module(f"{module}.{attr}")


def _namespace() -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "sglang.srt.entrypoints.openai.serving_chat", "__builtins__": __builtins__}
    namespace["logger"] = logging.getLogger(namespace["__name__"])
    for name, where in _imports().items():
        namespace[name] = STAND_INS[name] if name in STAND_INS else _resolve(name, where)
    namespace.update({k: v for k, v in STAND_INS.items() if k not in namespace})
    return namespace


def _compile(nodes: list[ast.stmt], namespace: dict[str, Any]) -> None:
    code = compile(
        ast.fix_missing_locations(ast.Module(body=nodes, type_ignores=[])),
        str(SERVING),
        "exec",
        flags=__future__.annotations.compiler_flag,
        dont_inherit=True,
    )
    exec(code, namespace)


def _class() -> ast.ClassDef:
    return next(n for n in _tree().body if isinstance(n, ast.ClassDef) and n.name == CLASS)


def _method_nodes() -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {n.name: n for n in _class().body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _detector_block() -> list[ast.stmt]:
    """The statements of ``__init__`` that build ``self._reasoning_detector``: its assignment to
    None and the ``if self.reasoning_parser:`` block after it."""
    body = _method_nodes()["__init__"].body
    for i, node in enumerate(body):
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(target, ast.Attribute) and target.attr == "_reasoning_detector":
            block = body[i : i + 2]
            assert isinstance(block[1], ast.If) and ast.unparse(block[1].test) == "self.reasoning_parser"
            return block
    raise AssertionError("OpenAIServingChat.__init__ no longer builds _reasoning_detector")


@functools.cache
def sglang_code() -> dict[str, Any]:
    """The compiled functions: ``METHODS``, ``FUNCTIONS`` and ``_init_reasoning_detector``."""
    namespace = _namespace()
    methods = _method_nodes()
    missing = [m for m in METHODS if m not in methods]
    assert not missing, f"{SERVING} has no {missing}"
    nodes: list[ast.stmt] = [methods[m] for m in METHODS]
    nodes += [n for n in _tree().body if isinstance(n, ast.FunctionDef) and n.name in FUNCTIONS]
    init = ast.FunctionDef(
        name="_init_reasoning_detector",
        args=ast.arguments(posonlyargs=[], args=[ast.arg("self")], kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=_detector_block(),
        decorator_list=[],
        returns=None,
    )
    ast.copy_location(init, init.body[0])
    nodes.append(init)
    for node in nodes:
        node.decorator_list = [d for d in node.decorator_list if ast.unparse(d) != "staticmethod"]
    _compile(nodes, namespace)
    return {name: namespace[name] for name in (*METHODS, *FUNCTIONS, "_init_reasoning_detector")}


# ---------------------------------------------------------------------------------------- template


@functools.cache
def _template_detection() -> types.ModuleType:
    """SGLang's ``template_detection``. Its module imports two ``arg_groups`` modules (for
    ``resolve_auto_parsers``, the launcher's auto parsers) whose imports reach the runtime; they
    are bare modules while it loads, and nothing this harness runs uses them."""
    name = "sglang.srt.parser.template_detection"
    if name in sys.modules:
        return sys.modules[name]
    stubs = {
        "sglang.srt.arg_groups.muse_spark_hook": {"muse_spark_chat_template_default": None},
        "sglang.srt.arg_groups.overrides": {"declare_resolution": None, "resolving_view": None},
    }
    added = []
    for module, names in stubs.items():
        if module not in sys.modules:
            stub = types.ModuleType(module)
            stub.__dict__.update(names)
            sys.modules[module] = stub
            added.append(module)
    try:
        return importlib.import_module(name)
    finally:
        for module in added:
            del sys.modules[module]


@dataclass(frozen=True)
class Template:
    """What ``TemplateManager`` holds about the chat template and the parsing half reads."""

    name: str
    force_reasoning: bool = False
    reasoning_config: Any = None
    chat_template_name: str | None = None


UNKNOWN = Template("unknown")


def known(name: str, text: str) -> Template:
    """The template as SGLang's ``TemplateManager._run_template_detection`` reads it."""
    force, config = _template_detection().detect_reasoning_pattern(text)
    return Template(name, force, config)


def rule_config(rule: str) -> Any:
    """The reasoning config of one of SGLang's ``REASONING_MODE_RULES``, by rule name."""
    return next(r.value for r in _template_detection().REASONING_MODE_RULES if r.name == rule)


# ---------------------------------------------------------------------------------------- tokenizers


@functools.cache
def tokenizer(name: str, chat_template: str | None = None) -> Any:
    """The HF tokenizer SGLang's tokenizer manager holds (``chat_template`` as TemplateManager
    leaves it on the tokenizer)."""
    from transformers import PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(tokenizer_file=str(hf_tokenizers.hf_dir(name) / "tokenizer.json"))
    tok.chat_template = chat_template
    return tok


def chunks(name: str, ids: Sequence[int], per: int) -> list[str]:
    """The text an incremental detokenizer emits for ``ids``, ``per`` ids per chunk."""
    from tokenizers.decoders import DecodeStream

    tk = _hf(name)
    stream = DecodeStream(skip_special_tokens=False)
    return ["".join(stream.step(tk, i) or "" for i in ids[k : k + per]) for k in range(0, len(ids), per)] or [""]


@functools.cache
def _hf(name: str) -> Any:
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(hf_tokenizers.hf_dir(name) / "tokenizer.json"))


# ---------------------------------------------------------------------------------------- server


@dataclass
class Reply:
    """What the client holds at the end: the fields, the calls (id, name, arguments) and the
    arguments SGLang's back-fill sent after the detector's own."""

    reasoning: str | None = None
    content: str | None = None
    tool_calls: list[tuple[str | None, str | None, str]] = field(default_factory=list)
    finish_reason: str | None = None
    backfill: list[str] = field(default_factory=list)

    def view(self) -> dict[str, Any]:
        return {
            "reasoning": self.reasoning or None,
            "content": self.content or None,
            "tool_calls": [(name, arguments) for _, name, arguments in self.tool_calls],
            "finish_reason": self.finish_reason,
        }


class _Engine:
    """``tokenizer_manager.generate_request``: each choice's chunks as SGLang's engine sends them,
    the choices' chunks interleaved."""

    def __init__(self, tok: Any) -> None:
        self.tokenizer = tok
        self.choices: list[list[str]] = []
        self.finish: dict[str, Any] | None = None

    async def generate_request(self, adapted_request: Any, raw_request: Any) -> Any:
        texts = [""] * len(self.choices)
        for n in range(max(map(len, self.choices), default=0)):
            for index, pieces in enumerate(self.choices):
                if n < len(pieces):
                    texts[index] += pieces[n]  # cumulative: incremental_streaming_output is off
                    finish = self.finish if n == len(pieces) - 1 else None
                    yield {"index": index, "text": texts[index], "meta_info": meta_info(n + 1, finish)}


def meta_info(tokens: int, finish: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-trisect",
        "finish_reason": finish,
        "prompt_tokens": 1,
        "completion_tokens": tokens,
        "cached_tokens": 0,
        "weight_version": "default",
    }


def finish_reason(kind: str) -> dict[str, Any]:
    """The engine's finish_reason dict (``srt/managers/schedule_batch.py``: FINISH_MATCHED_TOKEN /
    FINISH_LENGTH ``to_json``)."""
    return {"type": kind, "length": 1} if kind == "length" else {"type": kind, "matched": None}


class Server:
    """The parts of ``OpenAIServingChat`` the parsing half reads, with its methods from SGLang's
    source (``sglang_code``)."""

    chat_encoding_spec = None
    _encoding_adapter = None
    _KIMI_K3_GENERATION_STUB_TOKENS = 3

    def __init__(self, reasoning: str | None, tools: str | None, template: Template = UNKNOWN, tok: Any = None) -> None:
        self.reasoning_parser = reasoning
        self.tool_call_parser = tools
        self.template_manager = template
        self.tokenizer_manager = _Engine(tok)
        self.backfill: list[str] = []
        with self.config():
            self._init_reasoning_detector()

    def config(self) -> contextlib.AbstractContextManager[None]:
        return serving_config(self.reasoning_parser, self.tool_call_parser)

    def _check_for_unstreamed_tool_args(self, *args: Any, **kwargs: Any) -> str | None:
        sent = sglang_code()["_check_for_unstreamed_tool_args"](self, *args, **kwargs)
        if sent:
            self.backfill.append(sent)
        return sent

    def force_reasoning(self, request: Any) -> bool:
        """What ``_process_reasoning_stream`` and ``_build_chat_response`` pass as ``force_reasoning``."""
        return bool(self.template_manager.force_reasoning or self._get_reasoning_from_request(request))

    def stream(self, request: Any, pieces: Sequence[str], finish: str = "stop") -> Reply:
        reply = self.stream_choices(request, [pieces], finish)[0]
        reply.backfill = self.backfill
        return reply

    def stream_choices(self, request: Any, choices: Sequence[Sequence[str]], finish: str = "stop") -> list[Reply]:
        """One streamed request whose choices (``n``) are these outputs, in chunks."""
        engine = self.tokenizer_manager
        engine.choices, engine.finish = [list(p) for p in choices], finish_reason(finish)
        self.backfill = []

        async def run() -> list[str]:
            return [c async for c in self._generate_chat_stream(None, request, None)]

        with self.config():
            replies = fold(asyncio.run(run()))
        return [replies.get(index, Reply()) for index in range(len(choices))]

    def whole(self, request: Any, text: str, finish: str = "stop") -> Reply:
        ret = [{"index": 0, "text": text, "output_ids": [], "meta_info": meta_info(1, finish_reason(finish))}]
        with self.config():  # in a context of its own, as each request's task has in the server
            response = contextvars.copy_context().run(self._build_chat_response, request, ret, 0)
        choice = response.choices[0]
        message = choice.message
        calls = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []]
        return Reply(message.reasoning_content, message.content, calls, choice.finish_reason)


def _bind() -> None:
    code = sglang_code()
    for name in (*METHODS, "_init_reasoning_detector"):
        if name not in Server.__dict__:
            function = code[name]
            setattr(Server, name, staticmethod(function) if name == "_answer_started" else function)


def fold(sse: list[str]) -> dict[int, Reply]:
    """The stream's chunks as a client folds them, per choice (a call's id and name are taken
    once)."""
    replies: dict[int, Reply] = {}
    texts: dict[tuple[int, str], list[str]] = {}
    calls: dict[int, dict[int, list[Any]]] = {}
    for chunk in sse:
        assert chunk.startswith("data: "), chunk
        data = chunk[len("data: ") :].strip()
        if data == "[DONE]":
            continue
        for choice in json.loads(data).get("choices", []):
            index = choice["index"]
            reply = replies.setdefault(index, Reply())
            delta = choice.get("delta") or {}
            for key in ("reasoning_content", "content"):
                if delta.get(key):
                    texts.setdefault((index, key), []).append(delta[key])
            for call in delta.get("tool_calls") or []:
                slot = calls.setdefault(index, {}).setdefault(call["index"], [None, None, ""])
                function = call.get("function") or {}
                if function.get("name"):
                    assert slot[1] is None, f"call {call['index']}: name sent twice"
                    slot[0], slot[1] = call.get("id"), function["name"]
                slot[2] += function.get("arguments") or ""
            if choice.get("finish_reason"):
                reply.finish_reason = choice["finish_reason"]
    for index, reply in replies.items():
        reply.reasoning = "".join(texts.get((index, "reasoning_content"), ())) or None
        reply.content = "".join(texts.get((index, "content"), ())) or None
        mine = calls.get(index, {})
        reply.tool_calls = [tuple(mine[k]) for k in sorted(mine)]  # type: ignore[misc]
    return replies


def request(tools: Any = None, **body: Any) -> Any:
    """A chat request as SGLang's protocol validates it (its ``reasoning_effort`` sets both
    thinking switches in ``chat_template_kwargs``, ``normalize_reasoning_inputs``)."""
    from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest

    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], **body}
    if tools:
        body["tools"] = tools
    return ChatCompletionRequest(**body)


_bind()
