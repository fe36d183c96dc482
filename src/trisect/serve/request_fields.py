"""Every chat-completions request field the server knows, and what it does with it (one table).

``FIELDS`` maps each field to how it is honoured: ``template`` (a variable of the chat template),
``parser`` (a request option of trisect's parser), ``grammar`` (a constraint sent to the engine),
``sampling`` (sent to the engine, renamed per kind by ``upstream.sampling.SAMPLING``), ``server``
(handled here: streaming, ``n``, usage, ids), ``ignored`` (accepted, no effect on the output,
as vLLM does) or ``rejected`` (a 400 naming it, unless set to its neutral value).
``kinds`` lists the upstream kinds that take the field (``None``: all); on any other kind it is a
400 naming the parameter and the kind. A field that is not in the table is a 400 too (OpenAI's
own API rejects unknown parameters; silently dropping one would change the answer the client
asked for). ``null`` is the same as leaving a field out.

``docs/serve.md``'s request-field table is generated from this table (``markdown_table()``; a
test keeps the two equal).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import APIError
from .upstream.sampling import KINDS, SAMPLING

CONSTRAINING = frozenset({"vllm", "sglang", "llamacpp", "embedded"})  # kinds that take a grammar
WITH_IDS = frozenset({"vllm", "sglang", "llamacpp", "embedded"})  # kinds that report token ids


@dataclass(frozen=True)
class Field:
    how: str
    note: str
    kinds: frozenset[str] | None = None
    neutral: tuple[Any, ...] = ()  # values of a rejected field that mean "not used"


def _sampling(note: str) -> Field:
    return Field("sampling", note)


FIELDS: dict[str, Field] = {
    "messages": Field("template", "every role; text parts joined; assistant tool_calls and reasoning kept"),
    "model": Field("server", "one of the served names (404 otherwise)"),
    "tools": Field("template", "rendered by the template; the parser validates calls against them"),
    "tool_choice": Field(
        "grammar",
        "none/auto: parser; required/named: a grammar from the format, after reasoning (400 on openai)",
    ),
    "parallel_tool_calls": Field("parser", "false: at most one call returned, and the grammar allows one"),
    "stream": Field("server", "SSE chat.completion.chunk objects, then data: [DONE]"),
    "stream_options": Field("server", "include_usage (a final usage chunk), continuous_usage_stats (vLLM)"),
    "max_tokens": _sampling("deprecated alias of max_completion_tokens"),
    "max_completion_tokens": _sampling("null: up to the context length"),
    "stop": _sampling("a string or a list of strings"),
    "n": Field("server", "native n on vllm/openai; one request per choice elsewhere (seed + i)"),
    "seed": _sampling("fanned-out choice i gets seed + i"),
    "temperature": _sampling(""),
    "top_p": _sampling(""),
    "logprobs": Field("sampling", "chat shape; hidden with reasoning when include_reasoning is false"),
    "top_logprobs": Field("sampling", "0-20 alternatives; needs logprobs"),
    "response_format": Field(
        "grammar", "json_object / json_schema: a JSON-schema constraint after reasoning; text: none", CONSTRAINING
    ),
    "reasoning_effort": Field("template", "template variable (and enable_thinking), and the parser's initial state"),
    "include_reasoning": Field("parser", "false: reasoning, logprobs and token ids are not returned"),
    "chat_template_kwargs": Field("template", "template variables; the parser reads thinking switches from them"),
    "documents": Field("template", "template variable"),
    "add_generation_prompt": Field("template", "default true"),
    "continue_final_message": Field("template", "the prompt ends inside the final message"),
    "return_token_ids": Field("server", "token_ids on each choice / chunk", WITH_IDS),
    "skip_special_tokens": Field(
        "rejected", "the parser needs special tokens in the text; false is accepted", neutral=(False,)
    ),
    # accepted without effect, as vLLM does
    "user": Field("ignored", ""),
    "metadata": Field("ignored", ""),
    "store": Field("ignored", "nothing is stored"),
    "service_tier": Field("ignored", ""),
    "prompt_cache_key": Field("ignored", "engines cache prefixes themselves"),
    "safety_identifier": Field("ignored", ""),
    "request_id": Field("ignored", ""),
    # not supported: a 400 unless neutral
    "echo": Field("rejected", "", neutral=(False,)),
    "best_of": Field("rejected", "", neutral=(1,)),
    "use_beam_search": Field("rejected", "", neutral=(False,)),
    "length_penalty": Field("rejected", "beam search only", neutral=(1, 1.0)),
    "prompt_logprobs": Field("rejected", ""),
    "logprob_token_ids": Field("rejected", ""),
    "return_tokens_as_token_ids": Field("rejected", "use return_token_ids", neutral=(False,)),
    "include_stop_str_in_output": Field("rejected", "", neutral=(False,)),
    "structured_outputs": Field("rejected", "use response_format / tool_choice"),
    "guided_json": Field("rejected", "use response_format"),
    "guided_regex": Field("rejected", ""),
    "guided_choice": Field("rejected", ""),
    "guided_grammar": Field("rejected", ""),
    "chat_template": Field("rejected", "the server's template is fixed at start-up (--chat-template)"),
    "mm_processor_kwargs": Field("rejected", "text only"),
    "media_io_kwargs": Field("rejected", "text only"),
    "functions": Field("rejected", "deprecated: use tools"),
    "function_call": Field("rejected", "deprecated: use tool_choice"),
    "audio": Field("rejected", "text only"),
    "modalities": Field("rejected", "text only", neutral=(["text"],)),
    "prediction": Field("rejected", ""),
    "web_search_options": Field("rejected", ""),
    "thinking_token_budget": Field("rejected", ""),
    "truncation_side": Field("rejected", ""),
    "repetition_detection": Field("rejected", ""),
    "stream_interval": Field("rejected", ""),
    "kv_transfer_params": Field("rejected", ""),
    "vllm_xargs": Field("rejected", ""),
    "verbosity": Field("rejected", ""),
}
for _name in SAMPLING:
    FIELDS[_name] = Field("sampling", "", frozenset(SAMPLING[_name]))

COLUMNS = ("vllm", "sglang", "llamacpp", "embedded", "openai")


def check_fields(body: Mapping[str, Any], kind: str) -> None:
    """400 for a field that is unknown, rejected, or not taken by ``kind``."""
    for name, value in body.items():
        field = FIELDS.get(name)
        if field is None:
            raise APIError(f"unrecognized request argument: {name}", param=name)
        if value is None or field.how == "ignored":
            continue
        if field.how == "rejected":
            if value in field.neutral:
                continue
            why = f": {field.note}" if field.note else ""
            raise APIError(f"{name} is not supported by trisect serve{why}", param=name)
        if field.kinds is not None and kind not in field.kinds:
            raise APIError(f"{name} is not supported by the {kind} upstream", param=name)


def _cell(name: str, field: Field, kind: str) -> str:
    if field.how == "rejected":
        return "400"
    if field.how == "ignored":
        return "ignored"
    if field.kinds is not None and kind not in field.kinds:
        return "400"
    if name in SAMPLING:
        return f"`{SAMPLING[name][kind]}`"
    return "yes"


def markdown_table() -> str:
    """The request-field table for ``docs/serve.md``."""
    lines = [
        "| field | how | " + " | ".join(COLUMNS) + " | notes |",
        "|---|---|" + "---|" * len(COLUMNS) + "---|",
    ]
    for name, field in FIELDS.items():
        cells = " | ".join(_cell(name, field, kind) for kind in COLUMNS)
        lines.append(f"| `{name}` | {field.how} | {cells} | {field.note} |")
    return "\n".join(lines) + "\n"


assert set(COLUMNS) == set(KINDS)
