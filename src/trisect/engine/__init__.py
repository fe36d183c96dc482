"""The engine: a ``FormatSpec`` compiled once, run per request by one ``EventStream``.

Imports only the standard library and ``trisect.errors``: nothing of the request, message,
OpenAI, grammar or shell layers. Its one output is typed events (``events``). Modules:
``spec`` (how a format is described), ``compile`` (the per-state tables), ``event_stream`` (the
public stream: feed, finish, copy, fast paths; ``whole``: a whole output in one pass, markers
found and JSON decoded at C speed) over ``machine`` (the table interpreter), which
composes the stream's state components, each with its own ``copy()`` and plain value
(``value``): ``lexer`` (held-back text, token-id alignment), ``tracker`` and ``call`` (the calls
streamed and the open tool call with its phase and codec), ``fields`` (whitespace of reasoning
and content), ``headers`` (message headers), ``block`` (a block or list of calls), ``deferred``
(reasoning held for a fallback). Also ``guards`` (whether a guarded marker counts), ``trace``
(what a stream consumed, for ``trisect.testing``'s nothing-lost check), ``codec`` (the
argument-codec protocol), ``jsonscan``, ``vocab`` (the tokenizer as the engine sees it),
``stream_options``.

Rules, all formats alike (each implemented in the module named in brackets):

* A marker split across deltas is recognised; text that may still become a marker is held,
  never more than the longest live-marker prefix, and released as soon as it cannot. A marker
  that is complete but is also the start of a longer live marker waits for the next delta
  (``[`` before ``[ARGS]``), so the longest marker wins wherever the stream is cut. [lexer, event_stream]
* A terminal with no table entry in the current state is ordinary text of that state. A
  state with a ``FIRST_TEXT`` rule is left by its first text, which is read in the next
  state (a label that counts only where a block begins: Gemma 4's ``thought``); one with a
  ``STRAY_TEXT`` rule is left by its first text that is not whitespace, read in the next state
  (a word between the calls of a list, which breaks it: ``Act.LIST_BREAK``). [machine]
* With a tokenizer and token ids, a special-token marker counts only where its token id is:
  text that spells the marker with ordinary tokens stays text. Ids may arrive before their
  text (detokenizer hold-back); the terminal then waits for its text, so events keep text
  order. Text and ids are aligned by the bytes of the ordinary tokens (tolerating a few bytes
  of decoder drift, re-synchronised at each special token; a special token with no entry in
  the current state is text there, and its id is used up in place). When text is given with
  ids it must contain the special tokens' text (``skip_special_tokens=False``), as every
  engine sets it when a tool or reasoning parser runs; or pass ids alone and trisect
  detokenizes. [lexer]
* Inside structured (JSON) arguments, the JSON decides where the arguments end: a marker
  inside a JSON string is string text, even a special token given by id (templates tokenize a
  marker string inside an argument as that special token); a special token outside a string
  interrupts the JSON. In raw-text values (XML parameters) a marker may carry a guard: a
  closer counts only if the structure goes on after it (``Rule.follow``; the end of the output
  only for ``follow_end``), the next parameter's opener only before a key the codec accepts
  (``Rule.key_end``: a new key of the tool, so no call holds a key twice), a call's opener is
  value text (``Rule.value_text``); a ``follow`` can also guard a separator where no call is
  open. A structured codec that completes fires the
  state's ``ARGS_DONE`` rule; one that fails fires its ``ARGS_FAILED`` rule (else
  ``ARGS_DONE``), which ends the call at once (not a call: its text is content) and scans the
  rest again. [event_stream]
* Message headers (``Region.HEADER``, Harmony): the header's text, markers included, is
  collected and never emitted; at a ``HEADER_END`` marker ``FormatSpec.header`` maps it to the
  body's state and, for a tool call, the tool name (the call's raw text starts with the
  header). A header the spec cannot read, one left by any other marker, one replaced by a new
  ``HEADER_START`` and one cut off by the end of the output is content, markers included;
  but a cut-off header that already reads as a call's is that call cut off
  (``ToolCallUnfinished``). [headers, event_stream]
* Reasoning and content are each stripped of leading and trailing whitespace as a whole
  (``FormatSpec.strip``): the newlines templates put around markers are formatting.
  Whitespace between two pieces of one field (content before and after a tool call) is kept.
  Streams hold trailing whitespace until more text of that field arrives. Whitespace in
  envelope regions (``Region.SKIP``) is dropped; other text there outside a call is content,
  with the whitespace around it between two markers kept only between non-whitespace text.
  [fields]
* Call ids: the id the model wrote (an envelope key, a ``Region.CALL_ID`` region, or split off
  the name by ``FormatSpec.parse_name``), else ``StreamOptions.id_factory``, else the family's
  ``FormatSpec.call_id`` style, else ``call_`` + random. [tracker]
* Reasoning ends once per block: ``reasoning_ended`` turns true (one ``ReasoningEnd``) at the
  block's end marker, and false again where a transition from content (or an envelope, or a
  message header) opens a new block (formats whose reasoning is opted into by a marker:
  Mistral ``[THINK]``, Gemma 4 channels, Granite). ``FormatSpec.content_prefix`` is content
  before the output's first text. With ``FormatSpec.reasoning_fallback`` (Nemotron), a stream
  that starts in reasoning holds that reasoning until it ends; if the output ends first, the
  held text is content. [event_stream]
* A call is held (its exact text kept) until its name is known and valid, then streamed;
  ``atomic`` streams hold every call until it is complete, so they stream exactly what
  ``parse()`` returns. A tool name that is not valid Unicode (a lone surrogate) is not valid.
  Malformed calls (invalid arguments, no name, a name not among the tools where the family
  validates names) are content when they end: their exact text, markers included; one already
  streamed is reported in ``ToolCallAborted`` first, and its text follows as content, so a
  client that drops aborted calls ends with ``parse()``'s message. [tracker]
* A block of calls (an envelope such as ``<tool_calls>`` … ``</tool_calls>``) is all of its text
  or none of it: its content (text between calls, rejected calls) is held until the block
  yields a call (then its markers were structure and the held text is content, in order) or
  ends without one (then all of its text, its markers included, is content — unless it was
  markers and whitespace only). [block, machine]
* A call cut off by the end of the output is not content: ``finish()`` reports it in
  ``ToolCallUnfinished`` with its raw text, from its first marker to the end of the output (the
  message's ``unfinished_call``; one already streamed is discarded by its index), so no protocol
  markup reaches the answer and every stream of the output gives ``parse()``'s message. So is
  the markup of a block of calls the output ends inside before its next call (``<tool_calls>
  <inv``; with token ids, only a marker ordinary tokens spell: part of a special token's
  marker spelled with ordinary tokens is text), unless part of that block already became
  content; a block that yielded no call goes with the call it was cut inside (the unfinished
  text starts at the block's opener). The text is at most ``StreamOptions.call_text_limit``
  characters (65,536), its first ones, and the reason says how many more were not kept.
  [tracker, event_stream]
* A streamed call keeps no more than ``call_text_limit`` characters of its raw text (a held one
  keeps all of it, since it may still be content), so a long argument streams in bounded
  memory; one found malformed past the limit gives back its first ``call_text_limit`` characters
  as content, reported aborted (its arguments had reached the client). Lists of calls that must
  close keep all of their text. [call, tracker]
* ``finish()`` releases held text and ends reasoning. ``strict=True`` raises
  ``MalformedOutputError`` instead of degrading. [event_stream, tracker]
* Bad input is a ``StreamError``: text that is not a string; token ids that are not integers
  of the vocabulary (naming the id and its position); text and ids given together that tell
  different stories past the alignment tolerance (naming the output offset). [lexer]
* ``copy()`` forks a stream at the current point: an independent stream in the same state
  (``n > 1`` sampling from one prompt, beam search, speculative rollback). A stream's state is
  a plain value (``to_value`` / ``from_value``: ints, strs, bytes, enums, tuples; bounded by the
  text it holds), and ``copy()`` is that value read back. [value, every component]

Cost: O(len(delta) + tokens in delta) per ``feed``, amortised; memory O(open call + held
text); ``copy()`` O(that state).
"""

from __future__ import annotations

from .codec import CallCodec, CodecFactory
from .compile import CompiledFormat, compile_format
from .event_stream import EventStream
from .events import (
    ContentText,
    Event,
    ReasoningEnd,
    ReasoningText,
    ToolCallAborted,
    ToolCallArguments,
    ToolCallEnd,
    ToolCallStart,
    ToolCallUnfinished,
)
from .spec import ARGS_DONE, ARGS_FAILED, CONTENT, REASONING, Act, FormatSpec, Region, Rule, combine, rules
from .stream_options import StreamOptions, ToolIndex
from .vocab import Vocab

__all__ = [
    "ARGS_DONE",
    "ARGS_FAILED",
    "CONTENT",
    "REASONING",
    "Act",
    "CallCodec",
    "CodecFactory",
    "CompiledFormat",
    "ContentText",
    "Event",
    "EventStream",
    "FormatSpec",
    "ReasoningEnd",
    "ReasoningText",
    "Region",
    "Rule",
    "StreamOptions",
    "ToolCallAborted",
    "ToolCallArguments",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolCallUnfinished",
    "ToolIndex",
    "Vocab",
    "combine",
    "compile_format",
    "rules",
]
