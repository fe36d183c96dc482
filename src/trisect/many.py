"""``parse_many``: finished outputs (rows) parsed on every core, in input order.

A row is a mapping that holds one model output. Which keys mean what is ``BatchOptions``: the
output's text (``text_field``), optionally its token ids (``ids_field``, decoded with
``tokenizer``), and per row the request's tool definitions (a list, or its JSON text as Parquet
and Ray columns often carry it), ``tool_choice``, ``chat_template_kwargs`` (a mapping or its JSON
text), the rendered ``prompt`` (text; a list of chat messages is not read) and the format names
when a file mixes models (vLLM's ``reasoning_parser`` / ``tool_call_parser``); a key the row lacks
(or holds ``null`` in) takes the job's default.

Formats from the chat template: with ``chat_template`` (a model directory, GGUF file,
``tokenizer_config.json``, ``.jinja`` file or the template text) the job's formats not named by
``reasoning`` / ``tools`` are ``trisect.detect``'s (``job_formats``, once, before any row is
read); a part detection calls unknown is a ``DetectionError`` naming the option to pass.
Registered formats go to the workers by name; a synthesised one (a ``FormatSpec`` with closures,
which does not pickle) is rebuilt in each worker from the loaded template (detection is
deterministic and cached per process).

Every row gives exactly one result: the row with ``message`` (the OpenAI message shape of
``Message.to_dict()``, plus any further facts the message carries) and ``error`` (``None``, or
``{"type": …, "message": …}``). A row that cannot be parsed (a missing field, an unknown format,
invalid tools, ids that do not decode) gets ``message: None`` and an error, and the run goes on.

Workers: ``workers`` processes (``None``: the cores free now, ``free_cores()``; 1: in this
process), each with its own
parsers, fed chunks of rows (only the fields the parser reads); at most ``2 * workers + 1``
chunks are in flight, so memory stays bounded whatever the input's length, and results come back
in input order. Worker processes start with ``forkserver`` (``spawn`` where it is missing), so a
script that uses workers needs ``if __name__ == "__main__":`` (without it, the workers die at
start and ``BrokenProcessPool`` says so); they ignore SIGINT: Ctrl-C reaches the caller, which
stops the pool. The standard library only; the file formats, the CLI command
(``trisect batch``) and Ray Data are shells over this (``trisect.batch``,
``trisect.integrations.ray``).

Cost: ``parse()`` per row (the whole-output path) plus pickling each chunk to a worker. Workers
scale only onto free cores: the caller's process reads, slices and merges rows beside them, so
two workers on two cores that other processes already keep busy are slower than one (measured:
0.4-0.95x at a load average of 5 on 2 cores), hence the default.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import asdict, dataclass, fields, is_dataclass, replace
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .engine.spec import FormatSpec
from .errors import StreamError, TrisectError
from .message import Message
from .parser import Parser

if TYPE_CHECKING:
    from .detect import Detection

__all__ = [
    "BatchOptions",
    "RowParser",
    "arrow_types",
    "chunked",
    "free_cores",
    "job_formats",
    "json_line_results",
    "message_dict",
    "message_from_columns",
    "ordered_map",
    "parse_arrow_table",
    "parse_json_lines",
    "parse_many",
    "parse_rows",
]

Result = tuple[dict[str, Any] | None, dict[str, str] | None]  # (message, error) of one row


@dataclass(frozen=True)
class BatchOptions:
    """What every row of a job shares, and which row keys override it. Plain data: it is sent to
    the workers."""

    reasoning: str | None = None  # reasoning format (vLLM's --reasoning-parser)
    tools: str | None = None  # tool-call format (vLLM's --tool-call-parser)
    tool_definitions: Sequence[Mapping[str, Any]] | None = None  # the request's tools, for rows without their own
    tool_choice: Any = None
    chat_template_kwargs: Mapping[str, Any] | None = None
    tokenizer: Any = None  # for rows with token ids: an HF / transformers / tiktoken tokenizer object
    text_field: str = "output"
    ids_field: str | None = None
    tools_field: str = "tools"
    tool_choice_field: str = "tool_choice"
    kwargs_field: str = "chat_template_kwargs"
    prompt_field: str = "prompt"
    reasoning_field: str = "reasoning_parser"
    tool_parser_field: str = "tool_call_parser"
    # what trisect.detect reads (a path, the template text, or a loaded ChatTemplate): the formats
    # not named above come from it (see the module docstring)
    chat_template: Any = None
    # call ids the model did not write: random (None), or drawn from this seed and the row's
    # output, so that two runs over the same rows give the same ids
    seed: int | None = None

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> BatchOptions:
        """From keyword options; an unknown keyword is a ``TypeError`` naming it."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise TypeError(f"unknown batch option(s): {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        return cls(**options)


PYTHON_OPTIONS = {"reasoning": "reasoning=NAME", "tools": "tools=NAME"}  # what a DetectionError tells to pass


def job_formats(
    options: BatchOptions, flags: Mapping[str, str] = PYTHON_OPTIONS
) -> tuple[BatchOptions, Detection | None]:
    """The job with the formats its ``chat_template`` implies for the parts it does not name,
    and the detection (``None`` when nothing was detected). Registered and absent parts become
    names and ``chat_template`` is dropped; a synthesised part keeps it, as the loaded template,
    for each ``RowParser`` to rebuild the format from. An unknown part is a ``DetectionError``
    naming its option (``flags``: part -> option, e.g. ``--tools NAME`` for the CLI)."""
    missing = [part for part, named in (("reasoning", options.reasoning), ("tools", options.tools)) if not named]
    if options.chat_template is None or not missing:
        return replace(options, chat_template=None), None
    from .detect import SYNTHESISED, detect
    from .templates import ChatTemplate, load_template

    template = options.chat_template
    if not isinstance(template, ChatTemplate) and isinstance(template, (str, Path)):
        template = load_template(template)
    detection = detect(template)
    detection.require(missing, flags=flags)
    names: dict[str, Any] = {}
    rebuild = False
    for part in missing:
        found = detection.reasoning_part if part == "reasoning" else detection.tools_part
        if found.status == SYNTHESISED:
            rebuild = True  # by the RowParser: a synthesised spec does not pickle
        else:
            names[part] = found.name  # a registered name, or None (the template has no such part)
    return replace(options, **names, chat_template=template if rebuild else None), detection


def _default_formats(options: BatchOptions) -> tuple[str | FormatSpec | None, str | FormatSpec | None]:
    """The job's formats in this process: names, or the specs detection synthesised."""
    if options.chat_template is None:
        return options.reasoning, options.tools
    options, detection = job_formats(options)
    if detection is None:
        return options.reasoning, options.tools
    reasoning = options.reasoning or detection.reasoning_spec
    tools = options.tools or detection.tools_spec
    return reasoning, tools


def _error(kind: str, message: str) -> Result:
    return None, {"type": kind, "message": message}


def message_dict(msg: Message) -> dict[str, Any]:
    """The OpenAI message shape, plus the message's further facts (e.g. a call cut off by the
    end of the output), whatever the message layer adds."""
    out = msg.to_dict()
    for name in getattr(type(msg), "__dataclass_fields__", {}):
        if name not in ("reasoning", "content", "tool_calls") and name not in out:
            value = getattr(msg, name)
            if value is None:
                continue  # a fact the message does not have is left out
            if hasattr(value, "to_dict"):
                value = value.to_dict()
            elif is_dataclass(value) and not isinstance(value, type):
                value = asdict(value)
            out[name] = value
    return out


def message_from_columns(message: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A ``message`` read back from an Arrow struct, in ``message_dict``'s shape: the facts it
    does not have (null ``tool_calls``, a null cut-off call) left out again."""
    if message is None:
        return None
    out = {k: v for k, v in message.items() if v is not None or k in _ALWAYS}
    if not out.get("tool_calls"):
        out.pop("tool_calls", None)
    return out


_ALWAYS = ("role", "content", "reasoning")  # the keys of every message, null or not


class RowParser:
    """Parses rows for one job: parsers per format pair, the tokenizer, and decoded JSON text
    of per-row tools cached (rows of one file repeat the same few)."""

    def __init__(self, options: BatchOptions) -> None:
        self.options = options
        self.formats = _default_formats(options)  # the job's (reasoning, tools): names or specs
        self._parsers: dict[tuple[object, object, bool], Parser] = {}
        self._json: dict[str, Any] = {}

    def tokenizer(self) -> Any:
        if self.options.tokenizer is None:
            raise _RowError("MissingTokenizer", "rows with token ids need a tokenizer (--tokenizer FILE)")
        return self.options.tokenizer

    def parser(self, reasoning: str | FormatSpec | None, tools: str | FormatSpec | None, with_ids: bool) -> Parser:
        # a spec (unhashable) is one of self.formats, alive as long as this row parser: its id
        key = (_key(reasoning), _key(tools), with_ids)
        parser = self._parsers.get(key)
        if parser is None:
            parser = Parser(reasoning, tools, tokenizer=self.tokenizer() if with_ids else None)
            if len(self._parsers) >= 64:
                self._parsers.clear()
            self._parsers[key] = parser
        return parser

    def _decoded(self, value: Any, what: str) -> Any:
        """A row value that may be JSON text (Parquet and Ray columns): decoded once."""
        if not isinstance(value, str):
            return value
        hit = self._json.get(value)
        if hit is None:
            try:
                hit = json.loads(value)
            except ValueError as exc:
                raise _RowError("InvalidRow", f"{what} is neither a list nor JSON text: {exc}") from None
            if len(self._json) >= 256:
                self._json.clear()
            self._json[value] = hit
        return hit

    def parse(self, row: Any) -> Result:
        """(message, error) of one row."""
        if not isinstance(row, Mapping):
            return _error("InvalidRow", f"a row is a JSON object, not {type(row).__name__}")
        try:
            return self._parse(row), None
        except _RowError as exc:
            return _error(exc.kind, exc.message)
        except TrisectError as exc:
            return _error(type(exc).__name__, str(exc))

    def _parse(self, row: Mapping[str, Any]) -> dict[str, Any]:
        o = self.options
        text = row.get(o.text_field)
        ids = row.get(o.ids_field) if o.ids_field is not None else None
        if text is None and ids is None:
            wanted = o.text_field if o.ids_field is None else f"{o.text_field} or {o.ids_field}"
            raise _RowError("MissingField", f"the row has no {wanted} field")
        if text is not None and not isinstance(text, str):
            raise _RowError("InvalidRow", f"{o.text_field} must be a string, not {type(text).__name__}")
        options: dict[str, Any] = {}
        tools = _given(row, o.tools_field)
        tools = o.tool_definitions if tools is None else self._decoded(tools, o.tools_field)
        if tools is not None:
            options["tools"] = tools
        choice = _given(row, o.tool_choice_field)
        if choice is None:
            choice = o.tool_choice
        elif isinstance(choice, str) and choice.lstrip().startswith("{"):
            choice = self._decoded(choice, o.tool_choice_field)
        if choice is not None:
            options["tool_choice"] = choice
        kwargs = _given(row, o.kwargs_field)
        kwargs = o.chat_template_kwargs if kwargs is None else self._decoded(kwargs, o.kwargs_field)
        if kwargs is not None:
            options["chat_template_kwargs"] = kwargs
        prompt = _given(row, o.prompt_field)
        if isinstance(prompt, str):
            options["prompt_text"] = prompt
        if o.seed is not None:
            options["id_factory"] = seeded_ids(o.seed, text if text is not None else repr(ids))
        reasoning = _given(row, o.reasoning_field) or self.formats[0]
        tool_format = _given(row, o.tool_parser_field) or self.formats[1]
        if ids is None:
            return message_dict(self.parser(reasoning, tool_format, False).parse(text, **options))
        ids = _token_ids(ids, o.ids_field)
        parser = self.parser(reasoning, tool_format, True)
        try:
            msg = parser.parse(text, token_ids=ids, **options)
        except StreamError as exc:  # an id outside the vocabulary, or text and ids that disagree
            raise _RowError("TokenIdError", f"{o.ids_field}: {exc}") from None
        except TrisectError:
            raise
        except Exception as exc:  # the tokenizer's own error for an id it does not know
            raise _RowError("TokenIdError", f"{o.ids_field} do not decode: {type(exc).__name__}: {exc}") from None
        return message_dict(msg)


def seeded_ids(seed: int, output: str) -> Callable[[int], str]:
    """Call ids for one output, a function of ``seed``, the output and the call's index only."""
    key = hashlib.sha256(f"{seed}\x00{output}".encode("utf-8", "surrogatepass")).hexdigest()
    return lambda index: "call_" + hashlib.sha256(f"{key}:{index}".encode()).hexdigest()[:24]


def _key(fmt: str | FormatSpec | None) -> object:
    return fmt if fmt is None or isinstance(fmt, str) else id(fmt)


class _RowError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _given(row: Mapping[str, Any], key: str) -> Any:
    value = row.get(key)
    return None if value is None else value


def _token_ids(value: Any, field: str | None) -> list[int]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise _RowError("InvalidRow", f"{field} must be a list of token ids, not {type(value).__name__}")
    ids = list(value)
    for token_id in ids:
        if isinstance(token_id, bool) or not isinstance(token_id, int):
            try:
                if int(token_id) != token_id:
                    raise ValueError
            except (TypeError, ValueError):
                raise _RowError("InvalidRow", f"{field} must be a list of integers, not {token_id!r}") from None
    return [int(t) for t in ids]


# ---------------------------------------------------------------------------- workers

_ROWS: RowParser | None = None  # a worker process's row parser (made by its initializer)

T = TypeVar("T")
R = TypeVar("R")


def _init_worker(options: BatchOptions) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's to handle
    global _ROWS
    _ROWS = RowParser(options)


def _in_worker(func: Callable[[RowParser, T], R], chunk: T) -> R:
    assert _ROWS is not None, "not a worker of ordered_map"
    return func(_ROWS, chunk)


def parse_rows(rows: RowParser, chunk: Sequence[Any]) -> list[Result]:
    """A chunk of rows: (message, error) of each."""
    parse = rows.parse
    return [parse(row) for row in chunk]


def _without_results(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row without ``message`` / ``error`` of an earlier run: they come last, new."""
    out = dict(row)
    out.pop("message", None)
    out.pop("error", None)
    return out


def parse_json_lines(rows: RowParser, chunk: Sequence[bytes | str]) -> tuple[bytes, int]:
    """A chunk of JSON lines: the output lines (UTF-8, each ending with a newline) and how many
    rows failed. A line that is not JSON becomes ``{"input": line, "message": null, "error": …}``."""
    out: list[str] = []
    failed = 0
    for line in chunk:
        try:
            row = json.loads(line)
        except ValueError as exc:  # includes invalid UTF-8
            raw = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
            result: dict[str, Any] = {"input": raw.rstrip("\r\n")}
            result["message"], result["error"] = _error("InvalidJSON", f"the line is not JSON: {exc}")
        else:
            result = _without_results(row) if isinstance(row, dict) else {"input": row}
            result["message"], result["error"] = rows.parse(row)
        failed += result["error"] is not None
        out.append(json.dumps(result, ensure_ascii=False))
    text = "\n".join(out) + "\n"
    try:
        return text.encode("utf-8"), failed
    except UnicodeEncodeError:  # a lone surrogate (a "\ud800" escape): that line in ASCII escapes
        lines = []
        for line_text in out:
            try:
                lines.append(line_text.encode("utf-8"))
            except UnicodeEncodeError:
                lines.append(json.dumps(json.loads(line_text)).encode("ascii"))
        return b"\n".join(lines) + b"\n", failed


def json_line_results(rows: RowParser, values: Iterable[Any]) -> tuple[list[str], list[bool]]:
    """Raw input JSON lines, one value a row: each one's output line (no newline) and whether
    that row failed (``parse_json_lines`` one line at a time)."""
    lines: list[str] = []
    failed: list[bool] = []
    for value in values:
        data, bad = parse_json_lines(rows, [value if isinstance(value, (str, bytes)) else str(value)])
        lines.append(data.decode("utf-8").rstrip("\n"))
        failed.append(bool(bad))
    return lines, failed


def arrow_types(pa: Any) -> tuple[Any, Any]:
    """The Arrow types of the ``message`` and ``error`` columns (Parquet, Ray), built with the
    caller's ``pyarrow`` module (the core does not import it).

    A struct has every field in every row: a fact a message does not have (no tool calls, no
    cut-off call) is null there, where ``message_dict`` leaves it out. ``pa.array`` drops a key
    its struct does not name without a word, so each further fact of ``Message`` needs its field
    here (``tests/test_batch.py`` checks that they match)."""
    function = pa.struct([("name", pa.string()), ("arguments", pa.string())])
    call = pa.struct([("id", pa.string()), ("type", pa.string()), ("function", function)])
    unfinished = pa.struct([("text", pa.string()), ("reason", pa.string())])
    message = pa.struct(
        [
            ("role", pa.string()),
            ("content", pa.string()),
            ("reasoning", pa.string()),
            ("tool_calls", pa.list_(call)),
            ("unfinished_call", unfinished),
        ]
    )
    error = pa.struct([("type", pa.string()), ("message", pa.string())])
    return message, error


def parse_arrow_table(rows: RowParser, table: Any, pa: Any, json_lines: str | None = None) -> Any:
    """A ``pyarrow.Table`` of rows with ``message`` and ``error`` columns added (replacing earlier
    ones); with ``json_lines``, that column holds raw JSON lines and the result is a ``line``
    column of output JSON lines and a ``failed`` column. ``pa`` is the caller's pyarrow module."""
    if json_lines is not None:
        lines, failed = json_line_results(rows, table.column(json_lines).to_pylist())
        return pa.table({"line": pa.array(lines, pa.string()), "failed": pa.array(failed, pa.bool_())})
    results = [rows.parse(row) for row in table.to_pylist()]
    message, error = arrow_types(pa)
    for name in ("message", "error"):
        if name in table.column_names:
            table = table.drop_columns([name])
    table = table.append_column(pa.field("message", message), pa.array([m for m, _ in results], type=message))
    return table.append_column(pa.field("error", error), pa.array([e for _, e in results], type=error))


def free_cores() -> int:
    """The CPUs this process may use minus the 1-minute load average (rounded down), at least 1;
    half the CPUs where there is no load average (Windows)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):
        return max(1, cpus // 2)
    return max(1, min(cpus, int(cpus - load)))


def ordered_map(
    func: Callable[[RowParser, T], R], chunks: Iterable[T], options: BatchOptions, workers: int | None = None
) -> Iterator[R]:
    """``func(row_parser, chunk)`` for each chunk, in order, on ``workers`` processes (see the
    module docstring). ``func`` must be a module-level function (workers receive it by name); the
    options go to each worker once, when it starts."""
    count = free_cores() if workers is None else workers
    if count < 1:
        raise ValueError("workers must be at least 1")
    if count == 1:
        rows = RowParser(options)
        for chunk in chunks:
            yield func(rows, chunk)
        return
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    # a pool of futures, not multiprocessing.Pool: a worker that dies (a script that starts the
    # pool without `if __name__ == "__main__":`, killed by the OOM killer) fails every pending
    # chunk with BrokenProcessPool at once, where Pool would start new workers forever
    pool = ProcessPoolExecutor(count, mp_context=context, initializer=_init_worker, initargs=(options,))
    try:
        pending: deque[Future[R]] = deque()
        for chunk in chunks:
            pending.append(pool.submit(_in_worker, func, chunk))
            while pending and (len(pending) > 2 * count or pending[0].done()):
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def chunked(items: Iterable[T], size: int) -> Iterator[list[T]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def parse_many(
    rows: Iterable[Mapping[str, Any]], *, workers: int | None = None, chunk_size: int = 256, **options: Any
) -> Iterator[dict[str, Any]]:
    """Parse each row's output; yields ``{**row, "message": …, "error": …}`` in input order.

    ``options`` are ``BatchOptions`` fields: ``reasoning``, ``tools`` (the format names),
    ``tool_definitions``, ``tool_choice``, ``chat_template_kwargs``, ``text_field`` (default
    ``"output"``), ``ids_field``, ``tokenizer`` (a tokenizer object), the per-row field names,
    ``chat_template`` (the formats not named are detected from it; see the module docstring).
    ``workers``: processes (``None``: the cores free now, ``free_cores()``; 1: this process).
    """
    job, _ = job_formats(BatchOptions.of(options))  # here, not in the workers: a DetectionError is the caller's
    pending: deque[list[Mapping[str, Any]]] = deque()
    keys = {job.text_field, job.tools_field, job.tool_choice_field, job.kwargs_field}
    keys |= {job.prompt_field, job.reasoning_field, job.tool_parser_field}
    if job.ids_field is not None:
        keys.add(job.ids_field)

    def feed() -> Iterator[list[Any]]:
        for chunk in chunked(rows, chunk_size):
            pending.append(chunk)
            # only the fields the parser reads go to a worker (the rest stays here, to be merged)
            yield [{k: row[k] for k in keys if k in row} if isinstance(row, Mapping) else row for row in chunk]

    for results in ordered_map(parse_rows, feed(), job, workers):
        chunk = pending.popleft()
        for row, (message, error) in zip(chunk, results, strict=True):
            out = _without_results(row) if isinstance(row, Mapping) else {"input": row}
            out["message"] = message
            out["error"] = error
            yield out
