"""The harness itself (``sglang_serving``): it runs SGLang's installed serving code, and where a
test replays a serving path instead (the Responses API), the order it replays is the installed
source's.

With SGLang's own parsers the harness shows SGLang's own behaviour (a check that it is SGLang's
code that runs, not a copy that agrees with trisect by construction).
"""

from __future__ import annotations

import ast
import builtins
import dis
import inspect

import sglang_serving as sg
from sglang.srt.parser.reasoning_parser import ReasoningParser
from sglang.srt.plugins import load_plugins

load_plugins()


def test_the_serving_methods_are_compiled_from_the_installed_file() -> None:
    code = sg.sglang_code()
    for name in (*sg.METHODS, *sg.FUNCTIONS, "_init_reasoning_detector"):
        assert code[name].__code__.co_filename == str(sg.SERVING), name
    source = sg.SERVING.read_text(encoding="utf-8").splitlines()
    first = code["_get_reasoning_from_request"].__code__.co_firstlineno
    assert source[first - 1].strip().startswith("def _get_reasoning_from_request(")


def test_nothing_the_methods_call_is_missing_from_the_namespace() -> None:
    """Every global name those methods load resolves to the real object, a stand-in listed in
    ``STAND_INS``, or a name of a module this venv does not have that they only use in
    annotations (which are not evaluated)."""
    code = sg.sglang_code()
    namespace = code["_get_reasoning_from_request"].__globals__
    loaded: set[str] = set()
    for function in code.values():
        todo = [function.__code__]
        while todo:
            c = todo.pop()
            loaded.update(i.argval for i in dis.get_instructions(c) if i.opname == "LOAD_GLOBAL")
            todo.extend(k for k in c.co_consts if inspect.iscode(k))
    missing = {n for n in loaded if n not in namespace and not hasattr(builtins, n)}
    assert not missing, missing
    unavailable = {n for n in loaded if isinstance(namespace.get(n), sg._Unavailable)}
    assert unavailable <= {"ORJSONResponse"}, unavailable  # only on an ErrorResponse from _decode_response


def test_the_reasoning_detector_is_built_as_sglangs_init_builds_it() -> None:
    srv = sg.Server("trisect_qwen3", None)
    assert type(srv._reasoning_detector).__name__ == "TrisectReasoningDetector[qwen3]"
    assert sg.Server(None, "trisect_hermes")._reasoning_detector is None


def test_with_sglangs_own_parsers_sglang_behaves_as_sglang() -> None:
    # SGLang's qwen3 detector keeps the newlines around the reasoning, and without a template
    # config its default forces reasoning on whatever the output holds
    srv = sg.Server("qwen3", None)
    reply = srv.whole(sg.request(), "<think>\nplan\n</think>\n\nHi")
    assert (reply.reasoning, reply.content) == ("\nplan\n", "\n\nHi")
    assert srv.force_reasoning(sg.request(chat_template_kwargs={"enable_thinking": False})) is False
    assert srv.force_reasoning(sg.request()) is True


def test_force_reasoning_is_computed_by_sglang_from_the_template_facts() -> None:
    request = sg.request(chat_template_kwargs={"enable_thinking": False})
    assert sg.Server("trisect_qwen3", None, sg.UNKNOWN).force_reasoning(request) is False
    always = sg.Template("always", True, sg.rule_config("force_reasoning_pattern"))
    assert sg.Server("trisect_qwen3", None, always).force_reasoning(request) is True
    qwen3 = sg.known("qwen3", (sg.Path(__file__).parent.parent / "data/templates/Qwen-Qwen3-0.6B.jinja").read_text())
    assert qwen3.reasoning_config is not None and qwen3.reasoning_config.toggle_param == "enable_thinking"


def test_a_choice_each_in_one_stream() -> None:
    srv = sg.Server("trisect_qwen3", "trisect_hermes")
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
    first = ["<think>a</think>", "One."]
    second = ["<think>b</think>", 'Two.<tool_call>{"name": "f", "arguments": {}}</tool_call>']
    one, two = srv.stream_choices(sg.request(tools, stream=True, n=2), [first, second])
    assert (one.reasoning, one.content, one.tool_calls, one.finish_reason) == ("a", "One.", [], "stop")
    assert (two.reasoning, two.content, [c[1:] for c in two.tool_calls]) == ("b", "Two.", [("f", "{}")])
    assert two.finish_reason == "tool_calls"


def _method(path: sg.Path, cls: str, name: str) -> ast.AST:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    klass = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    return next(n for n in klass.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name)


def test_the_responses_path_builds_the_tool_parser_first_and_feeds_reasoning_first() -> None:
    """What ``test_sglang_harmony``'s Responses-order test replays: in the installed
    ``serving_responses.py``, the streaming generator builds ``FunctionCallParser`` before
    ``ReasoningParser`` and calls the reasoning parser's ``parse_stream_chunk`` before the tool
    parser's."""
    path = sg._installed("sglang.srt.entrypoints.openai.serving_responses")
    method = _method(path, "OpenAIServingResponses", "_responses_stream_generator_non_harmony")

    def line(predicate: object) -> int:
        return min(n.lineno for n in ast.walk(method) if isinstance(n, ast.Call) and predicate(n))  # type: ignore[operator]

    def calls(name: str) -> object:
        return lambda n: isinstance(n.func, ast.Name) and n.func.id == name

    def method_of(owner: str, attr: str) -> object:
        return lambda n: (
            isinstance(n.func, ast.Attribute)
            and n.func.attr == attr
            and isinstance(n.func.value, ast.Name)
            and n.func.value.id == owner
        )

    assert line(calls("FunctionCallParser")) < line(calls("ReasoningParser"))
    assert line(method_of("reasoning_parser_obj", "parse_stream_chunk")) < line(
        method_of("tool_parser", "parse_stream_chunk")
    )
    assert ReasoningParser.__init__.__trisect__  # type: ignore[attr-defined]


def _token_output(module: str, cls: str, reasoning: str | None, tools: str | None, **names: str) -> bool:
    """What ``cls.__init__`` in the installed ``module`` sets ``self._token_output`` to (whether
    SGLang parses the output from token ids itself) for these parser names: its own statements,
    evaluated (the adapter itself needs the model's tokenizer and renderers)."""
    init = _method(sg._installed(module), cls, "__init__")
    scope: dict[str, object] = {"reasoning_parser": reasoning, "tool_call_parser": tools, **names}
    for node in ast.walk(init):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id == "parsers":
                scope["parsers"] = eval(compile(ast.Expression(node.value), module, "eval"), scope)
            if isinstance(target, ast.Attribute) and target.attr == "_token_output":
                return bool(eval(compile(ast.Expression(node.value), module, "eval"), scope))
    raise AssertionError(f"{cls}.__init__ no longer sets _token_output")


def test_models_sglang_encodes_itself_leave_trisects_names_to_the_detectors() -> None:
    """DeepSeek V4 / V4.1 and Inkling: SGLang renders the prompt with its own encoder and parses
    the output from token ids only under its own parser names; under trisect's the text path
    (the detectors) runs, the path ``sglang_serving`` drives."""
    from sglang.srt.entrypoints.openai.chat_encoding_adapters import ADAPTER_OUTPUT_PARSERS

    recipe = ("sglang.srt.entrypoints.openai.serving_deepseek_recipe", "DeepSeekRecipeChatEncodingAdapter")
    inkling = ("sglang.srt.entrypoints.openai.serving_inkling", "InklingChatEncodingAdapter")
    assert set(ADAPTER_OUTPUT_PARSERS) == {"dsv4", "dsv41"}
    for spec, (reasoning_name, tool_name) in ADAPTER_OUTPUT_PARSERS.items():
        names = {"reasoning_name": reasoning_name, "tool_name": tool_name}
        trisect_names = (f"trisect_{spec.replace('dsv', 'deepseek_v')}",) * 2
        assert _token_output(*recipe, reasoning_name, tool_name, **names)  # SGLang's own: token output
        assert not _token_output(*recipe, *trisect_names, **names)
    assert _token_output(*inkling, "inkling", "inkling")
    assert not _token_output(*inkling, "trisect_inkling", "trisect_inkling")
