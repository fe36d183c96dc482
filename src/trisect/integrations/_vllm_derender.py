"""vLLM 0.33's streaming chat derender for trisect's parsers: the stream's state travels in
``stream_state`` instead of being rebuilt by replay.

vLLM's ``OnlineDerenderer._derender_chat_stream_parsed`` (``renderers/online_derenderer.py``)
cannot keep a parser between chunks, so ``DerenderStreamState.output_token_ids`` holds every
output token and each chunk replays them all through a fresh parser. For ``trisect_*`` parsers
the patch in ``vllm.py`` routes a chunk here instead, which does what vLLM's method does for the
chunk itself (its own helpers: ``_decode_params``, ``_seed_stream_state``, ``_detokenize_delta``,
``ChatStreamProcessor.step``, ``_resolve_logprobs``, id pinning, the role, usage) and replaces the
replay by the trisect stream's signed state:

* ``stream_state.trisect_state`` (an extra field vLLM's ``DerenderStreamState`` is opened to):
  base64url of ``StreamParser.to_state``, carrying the calls seen cut off and the output ids
  counted (``ChatStreamProcessor`` reads both);
* ``prev_tokens`` / ``prefix_offset`` / ``read_offset``: vLLM's own bounded detokenization
  window, carried from chunk to chunk as in its plain streaming path (so a character split
  across chunks decodes as in coupled serving);
* ``output_token_ids`` / ``output_chunk_lens`` stay empty: nothing is replayed.

The first chunk needs ``prompt_token_ids`` (vLLM's serving layer asks for them on every chunk
when a parser is configured; only the first one's are read here). A state that does not verify
raises ``StateError``, which vLLM's ``ServingDerender`` answers as a 400 (``invalid
stream_state``). The key: ``$TRISECT_STATE_KEY`` (every replica of a derender tier must share
it), else random per process, with a warning that replicas cannot share streams.

Cost per chunk: O(its tokens), against vLLM's O(all tokens so far).
"""

from __future__ import annotations

import base64
import logging
import os
from types import ModuleType
from typing import Any

FIELD = "trisect_state"
KEY_ENV = "TRISECT_STATE_KEY"

log = logging.getLogger("trisect.integrations.vllm")
_key: bytes | None = None


def state_key() -> bytes:
    global _key
    if _key is None:
        given = os.environ.get(KEY_ENV, "").strip()
        if given:
            _key = given.encode("utf-8")
        else:
            log.warning(
                "trisect: no $%s: a random stream-state key for this process; derender replicas "
                "cannot share streams (each refuses the others' stream_state)",
                KEY_ENV,
            )
            _key = os.urandom(32)
    return _key


def derender_chunk(
    m: ModuleType,
    self: Any,
    parser_cls: Any,
    model: str,
    generate_chunk: Any,
    state: Any,
    chat_request: Any,
    prompt_tokens: int | None,
    prompt_token_ids: list[int] | None,
) -> tuple[Any, Any]:
    """One chunk of ``OnlineDerenderer._derender_chat_stream_parsed``, resumed from the state."""
    key = state_key()
    tokenizer = self.renderer.get_tokenizer()
    top_limit = m._chat_top_logprobs_limit(chat_request)
    parser = parser_cls(
        tokenizer,
        chat_request.tools,
        chat_template_kwargs=self._resolve_chat_template_kwargs(chat_request),
        model_config=self.model_config,
    )
    processor = m.ChatStreamProcessor(
        chat_request, parser, enable_auto_tools=self.enable_auto_tools, parser_cls=parser_cls
    )
    skip_special, spaces_between = m._decode_params(tokenizer, chat_request, preserve_special=True)
    carried = (state.model_extra or {}).get(FIELD)
    if carried is None:
        detok = m._seed_stream_state(tokenizer, prompt_token_ids, skip_special_tokens=skip_special)
    else:
        processor.num_output_tokens = parser.trisect_resume(base64.urlsafe_b64decode(carried), key, chat_request)
        processor.tools_streamed = state.tools_streamed
        detok = state

    stream_choices = []
    role_sent = state.role_sent
    last_tool_call_ids = list(state.last_tool_call_ids)
    logprob_context = list(state.logprob_context_token_ids)
    hide_metadata = processor.hide_metadata
    return_token_ids = chat_request.return_token_ids and not hide_metadata
    if generate_chunk.choices:
        choice = generate_chunk.choices[0]
        delta_tids = choice.token_ids or []
        delta_message = None
        finish_reason = None
        text_tids, stop_reason = self._drop_stop_token(
            delta_tids, choice.finish_reason, choice.stop_reason, chat_request
        )
        if delta_tids or choice.finish_reason is not None:
            text = ""
            if delta_tids:
                text, detok = self._detokenize_delta(
                    tokenizer,
                    text_tids,
                    detok,
                    skip_special_tokens=skip_special,
                    spaces_between_special_tokens=spaces_between,
                )
            delta_message, finish_reason = processor.step(
                text, delta_tids, choice.finish_reason, prompt_token_ids if carried is None else None
            )
        resolved_logprobs = None
        if choice.logprobs is not None and not hide_metadata:
            resolved_logprobs = m._resolve_logprobs(
                choice.logprobs,
                tokenizer,
                initial_context_token_ids=state.logprob_context_token_ids,
                top_limit=top_limit,
            )
        logprob_context = m._logprob_context_tail(state.logprob_context_token_ids, delta_tids)
        if delta_message is None:
            delta_message = m.DeltaMessage()
        for tc in delta_message.tool_calls or ():
            if tc.id is None:
                continue
            if tc.index < len(last_tool_call_ids):
                tc.id = last_tool_call_ids[tc.index]
            else:
                last_tool_call_ids.append(tc.id)
        if not role_sent:
            delta_message.role = "assistant"
            role_sent = True
        stream_choices.append(
            m.ChatCompletionResponseStreamChoice(
                index=choice.index,
                delta=delta_message,
                logprobs=resolved_logprobs,
                finish_reason=finish_reason,
                stop_reason=stop_reason,
                token_ids=choice.token_ids if return_token_ids else None,
            )
        )
    if parser.trisect_stream() is None:  # nothing parsed yet (a usage chunk first): start the stream
        parser.parse_delta("", [], chat_request, prompt_token_ids, finished=False)
    updated = state.model_copy(
        update={
            "prev_tokens": list(detok.prev_tokens),
            "prefix_offset": detok.prefix_offset,
            "read_offset": detok.read_offset,
            "output_token_ids": [],
            "output_chunk_lens": [],
            "role_sent": role_sent,
            "tools_streamed": processor.tools_streamed,
            "last_tool_call_ids": last_tool_call_ids,
            "logprob_context_token_ids": logprob_context,
        }
    )
    sealed = parser.trisect_state(key, processor.num_output_tokens)
    updated.__pydantic_extra__ = {**(updated.__pydantic_extra__ or {}), FIELD: _b64(sealed)}
    usage = None
    if generate_chunk.usage is not None:
        u = generate_chunk.usage
        pt = prompt_tokens if prompt_tokens is not None else (u.prompt_tokens or 0)
        ct = u.completion_tokens or 0
        usage = m.UsageInfo(prompt_tokens=pt, completion_tokens=ct, total_tokens=pt + ct)
    chunk = m.ChatCompletionStreamResponse(
        id=generate_chunk.request_id, model=model, choices=stream_choices, usage=usage, metrics=generate_chunk.metrics
    )
    return chunk, updated


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii")
