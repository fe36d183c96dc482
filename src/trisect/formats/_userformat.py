"""Formats read from TOML at run time (``trisect.load_format``): the same ``FormatSpec`` a format
module builds in Python, written as data.

What a file may say (``docs/CONTRIBUTING-FORMATS.md`` documents every key with an example):
``name``, ``kind``, ``aliases``, ``models``, ``reference``, ``terminals`` (name -> marker or
markers), ``special`` (the terminals that are special tokens, or ``true`` for all), ``regions``
(state -> field), ``transitions.rows`` (``[state, terminal, next, [acts], guard]``, one row
per line), ``strip``; for reasoning formats ``initial`` (a state, or a thinking switch),
``tool_start_ends_reasoning``, ``plain_when_off``, ``model_opens``, ``turn_markers``,
``content_prefix``; for tool formats ``codec`` (``type`` and that codec's options), ``call_name``
(how the name region reads), ``call_id``, ``validate_names`` and ``grammar``. What Python formats express with functions
(Harmony's message headers, Nemotron's reasoning fallback) has no TOML form.

Every key is checked: an unknown key, a wrong type or an unknown name is a ``FormatError`` that
names the file, the line and the key (``qwen.toml:12: transitions.rows[3]: unknown act 'call_stat'``);
the spec's own checks (states, terminals, codec) and the compiler's run last. Cost: one parse
of the file; the result is an ordinary spec (compile it once, as any other).
"""

from __future__ import annotations

import html
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..codecs import (
    JSON_TEXT,
    GemmaArgs,
    JsonArgsCodec,
    JsonEnvelope,
    MistralCallCodec,
    NameKeyCodec,
    PythonicCallCodec,
    XmlParams,
)
from ..codecs.xml_params import TRIMS, KeyReader, attribute_pairs
from ..engine.codec import CodecFactory
from ..engine.spec import CONTENT, PSEUDO, REASONING, Act, FormatSpec, GrammarFacts, Region, Rule
from ..engine.stream_options import StreamOptions
from ..errors import FormatError
from ._xml_invoke import first_quoted, unquote

SCHEMA_VERSION = 1
REGIONS: dict[str, Region] = {r.value: r for r in Region if r is not Region.HEADER}  # headers need a Python function
ACTS: dict[str, Act] = {a.value: a for a in Act if a not in (Act.HEADER_START, Act.HEADER_END)}
CODECS = ("json_args", "json_envelope", "xml_params", "gemma_args", "pythonic", "mistral", "name_key")
READERS = ("as_is", "unquote", "first_quoted", "attribute", "pattern")

_TOP = {
    "version": int,
    "name": str,
    "kind": str,
    "aliases": list,
    "models": list,
    "reference": str,
    "terminals": dict,
    "special": (list, bool),
    "regions": dict,
    "transitions": dict,
    "strip": str,
    "initial": (str, dict),
    "tool_start_ends_reasoning": bool,
    "plain_when_off": bool,
    "model_opens": bool,
    "turn_markers": list,
    "content_prefix": str,
    "codec": dict,
    "call_name": dict,
    "call_id": str,
    "validate_names": bool,
    "grammar": dict,
}
_INITIAL = {"thinking": str, "no_thinking": str, "switch": list, "default": bool, "effort_off": list}
_CODEC_OPTIONS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "json_args": {},
    "json_envelope": {
        "name_keys": list,
        "args_keys": list,
        "id_keys": list,
        "list_opener": bool,
        "requires_args": bool,
    },
    "xml_params": {
        "param_start": str,
        "param_end": str,
        "key_end": str,
        "trim": str,
        "key_marker": str,
        "value_start": str,
        "unwrap": list,
        "style": str,
        "key": str,
        "key_attribute": str,
        "string_attribute": str,
        "type_attribute": str,
    },
    "gemma_args": {"quote": str},
    "pythonic": {},
    "mistral": {},
    "name_key": {},
}
_KIND_NAMES = {dict: "a table", list: "an array", str: "a string", bool: "a boolean", int: "an integer"}
_CALL_NAME = {"read": str, "attribute": str, "pattern": (str, list)}
_GRAMMAR = {"unsupported": str, "name_pattern": str, "native_under_constraint": bool}


# ---------------------------------------------------------------------------- entry points


def load_format(path: str | Path) -> FormatSpec:
    """Read a format from a TOML file (see the module docstring); ``FormatError`` if it is not one."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise FormatError(f"{file}: cannot read the format: {exc}") from None
    return format_from_toml(text, source=str(file))


def format_from_toml(text: str, *, source: str = "<toml>") -> FormatSpec:
    """A format from TOML text; ``source`` names it in errors."""
    toml = _toml()
    try:
        data = toml.loads(text)
    except toml.TOMLDecodeError as exc:
        raise FormatError(f"{source}: not valid TOML: {exc}") from None
    return _Reader(data, source, _KeyLines(text)).spec()


def _toml() -> Any:
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    try:  # Python 3.10: the tomli backport, a dependency there (pyproject.toml)
        import tomli
    except ImportError:  # pragma: no cover
        raise FormatError("reading TOML formats on Python 3.10 needs tomli (pip install tomli)") from None
    return tomli


# ---------------------------------------------------------------------------- where a key is


class _KeyLines:
    """The line of each key in the TOML text, to name it in errors: ``[table]`` and
    ``[[array]]`` headers, ``key = …`` lines, and the rows of a multi-line array (one row per
    line). A best effort: a key it cannot place is reported without a line."""

    _HEADER = re.compile(r"\s*\[(\[)?\s*([^\]]+?)\s*\]")
    _KEY = re.compile(r"""\s*("[^"]*"|'[^']*'|[A-Za-z0-9_.-]+)\s*=""")

    def __init__(self, text: str) -> None:
        self.lines: dict[tuple[str | int, ...], int] = {}
        table: tuple[str | int, ...] = ()
        counts: dict[str, int] = {}
        array: tuple[str | int, ...] | None = None  # the key of an open multi-line array
        row = 0
        for number, line in enumerate(text.splitlines(), start=1):
            stripped = line.strip()
            if array is not None:
                if stripped.startswith("["):
                    self.lines.setdefault((*array, row), number)
                    row += 1
                if stripped.startswith("]"):
                    array = None
                continue
            header = self._HEADER.match(line)
            if header and not self._KEY.match(line):
                name = tuple(p.strip().strip("\"'") for p in header.group(2).split("."))
                if header.group(1):  # [[array]]
                    index = counts.get(header.group(2), 0)
                    counts[header.group(2)] = index + 1
                    table = (*name, index)
                else:
                    table = name
                self.lines.setdefault(table, number)
                continue
            key = self._KEY.match(line)
            if key:
                path = (*table, *(p.strip("\"'") for p in key.group(1).split(".")))
                self.lines.setdefault(path, number)
                rest = line[key.end() :].split("#", 1)[0].strip()
                if rest == "[" or (rest.startswith("[") and not rest.rstrip(",").endswith("]")):
                    array, row = path, 0
                    if rest.startswith("[[") or (rest.startswith("[") and rest[1:].strip().startswith("[")):
                        self.lines.setdefault((*path, 0), number)
                        row = 1

    def line(self, path: tuple[str | int, ...]) -> int | None:
        for end in range(len(path), 0, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
        return None


# ---------------------------------------------------------------------------- the reader


def _path(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


class _Reader:
    def __init__(self, data: dict[str, Any], source: str, lines: _KeyLines) -> None:
        self.data = data
        self.source = source
        self.where = lines

    def error(self, path: tuple[str | int, ...], message: str) -> FormatError:
        line = self.where.line(path) if path else None
        at = f"{self.source}:{line}" if line is not None else self.source
        return FormatError(f"{at}: {_path(path)}: {message}" if path else f"{at}: {message}")

    def keys(self, table: Mapping[str, Any], allowed: Mapping[str, Any], path: tuple[str | int, ...]) -> None:
        for key, value in table.items():
            if key not in allowed:
                raise self.error((*path, key), f"unknown key; known: {', '.join(allowed)}")
            want = allowed[key]
            if not isinstance(value, want) or (want is int and isinstance(value, bool)):
                kinds = want if isinstance(want, tuple) else (want,)
                raise self.error((*path, key), f"must be {' or '.join(_KIND_NAMES[t] for t in kinds)}")

    def guard(self, value: Any, path: tuple[str | int, ...]) -> dict[str, Any]:
        """A row's guard: the follow strings, or a table of ``Rule`` guards."""
        if not isinstance(value, dict):
            return {"follow": self.strings(value, path)}
        unknown = set(value) - {"follow", "follow_end", "key_end", "value_text", "by_id", "after_interrupt"}
        if unknown:
            known = "follow, follow_end, key_end, value_text, by_id, after_interrupt"
            raise self.error(path, f"unknown guard {sorted(unknown)}; guards: {known}")
        guard: dict[str, Any] = {}
        if "follow" in value:
            guard["follow"] = self.strings(value["follow"], path)
        for flag in ("follow_end", "value_text", "by_id", "after_interrupt"):
            if flag in value:
                if not isinstance(value[flag], bool):
                    raise self.error(path, f"{flag} must be true or false")
                guard[flag] = value[flag]
        if "key_end" in value:
            if not isinstance(value["key_end"], str) or not value["key_end"]:
                raise self.error(path, "key_end must be a non-empty string")
            guard["key_end"] = value["key_end"]
        return guard

    def strings(self, value: Any, path: tuple[str | int, ...]) -> tuple[str, ...]:
        if isinstance(value, str):
            return (value,)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(path, "must be a string or an array of strings")
        return tuple(value)

    # -- the spec

    def spec(self) -> FormatSpec:
        data = self.data
        self.keys(data, _TOP, ())
        version = data.get("version", SCHEMA_VERSION)
        if version != SCHEMA_VERSION:
            raise self.error(("version",), f"this trisect reads format files of version {SCHEMA_VERSION}")
        for key in ("name", "kind", "terminals", "regions", "transitions"):
            if key not in data:
                raise self.error((), f"the format needs a {key!r} key")
        self.keys(data["transitions"], {"rows": list}, ("transitions",))
        kind = data["kind"]
        if kind not in ("reasoning", "tools"):
            raise self.error(("kind",), f"must be 'reasoning' or 'tools', not {kind!r}")
        terminals = {name: self.strings(v, ("terminals", name)) for name, v in data["terminals"].items()}
        for name, markers in terminals.items():
            if not markers or any(not m for m in markers):
                raise self.error(("terminals", name), "a terminal needs at least one non-empty marker")
        regions = self.regions(data["regions"])
        table = self.table(data["transitions"].get("rows", []), terminals, regions)
        special = data.get("special", [])
        if special is True:
            special = list(terminals)
        elif special is False:
            special = []
        for k, terminal in enumerate(special):
            if terminal not in terminals:
                raise self.error(("special", k), f"{terminal!r} is not a terminal")
        if kind == "tools" and "initial" in data:
            raise self.error(("initial",), "a tool format starts in CONTENT; the reasoning format decides the start")
        if kind == "reasoning":
            for key in ("codec", "call_name", "call_id", "validate_names", "grammar"):
                if key in data:
                    raise self.error((key,), "only tool formats have this key")
        fields: dict[str, Any] = {
            "name": data["name"],
            "kind": kind,
            "terminals": terminals,
            "regions": regions,
            "table": table,
            "special": frozenset(special),
            "aliases": self.strings(data.get("aliases", []), ("aliases",)),
            "models": self.strings(data.get("models", []), ("models",)),
            "reference": data.get("reference", ""),
        }
        if "strip" in data:
            fields["strip"] = data["strip"]
        if "initial" in data:
            fields["initial"] = self.initial(data["initial"], regions)
        for key in ("tool_start_ends_reasoning", "plain_when_off", "model_opens", "content_prefix", "validate_names"):
            if key in data:
                fields[key] = data[key]
        if "turn_markers" in data:
            fields["turn_markers"] = self.strings(data["turn_markers"], ("turn_markers",))
        if "codec" in data:
            fields["codec"] = self.codec(data["codec"], terminals)
        if "call_name" in data:
            fields["parse_name"] = self.call_name(data["call_name"])
        if "call_id" in data:
            fields["call_id"] = self.call_id(data["call_id"])
        if "grammar" in data:
            self.keys(data["grammar"], _GRAMMAR, ("grammar",))
            fields["grammar"] = GrammarFacts(**data["grammar"])
        try:
            spec = FormatSpec(**fields)
            from ..engine.compile import compile_format

            compile_format(spec)
        except FormatError as exc:
            raise FormatError(f"{self.source}: {exc}") from None
        return spec

    def regions(self, table: dict[str, Any]) -> dict[str, Region]:
        out: dict[str, Region] = {}
        for state, value in table.items():
            if value not in REGIONS:
                raise self.error(("regions", state), f"unknown region {value!r}; known: {', '.join(REGIONS)}")
            out[state] = REGIONS[value]
        if out.get(CONTENT) is not Region.CONTENT:
            raise self.error(("regions",), f'the state {CONTENT} must be declared, as {CONTENT} = "content"')
        if REASONING in out and out[REASONING] is not Region.REASONING:
            raise self.error(("regions", REASONING), f'the state {REASONING} is "reasoning"')
        return out

    def table(
        self, rows: list[Any], terminals: Mapping[str, tuple[str, ...]], regions: Mapping[str, Region]
    ) -> dict[tuple[str, str], Rule]:
        table: dict[tuple[str, str], Rule] = {}
        for k, row in enumerate(rows):
            at = ("transitions", "rows", k)
            if not isinstance(row, list) or len(row) not in (4, 5):
                raise self.error(
                    at, "a row is [state, terminal, next, [acts]] or [state, terminal, next, [acts], guard]"
                )
            state, terminal, nxt, acts, *follow = row
            if state not in regions:
                raise self.error(at, f"state {state!r} is not in regions")
            if nxt not in regions:
                raise self.error(at, f"next state {nxt!r} is not in regions")
            if terminal not in terminals and terminal not in PSEUDO:
                raise self.error(at, f"{terminal!r} is not a terminal (nor {' / '.join(PSEUDO)})")
            if not isinstance(acts, list) or any(a not in ACTS for a in acts):
                bad = [a for a in acts if a not in ACTS] if isinstance(acts, list) else acts
                raise self.error(at, f"unknown act {bad!r}; acts: {', '.join(ACTS)}")
            guard = self.guard(follow[0], at) if follow else {}
            if (state, terminal) in table:
                raise self.error(at, f"({state}, {terminal}) has a row already")
            table[(state, terminal)] = Rule(nxt, tuple(ACTS[a] for a in acts), **guard)
        return table

    def initial(self, value: str | dict[str, Any], regions: Mapping[str, Region]) -> Callable[[StreamOptions], str]:
        if isinstance(value, str):
            if value not in regions:
                raise self.error(("initial",), f"state {value!r} is not in regions")

            def constant(_request: StreamOptions) -> str:
                return value

            constant.__doc__ = f"the output starts in {value}"
            return constant
        self.keys(value, _INITIAL, ("initial",))
        on: str = value.get("thinking", REASONING)
        off: str = value.get("no_thinking", CONTENT)
        for key, state in (("thinking", on), ("no_thinking", off)):
            if state not in regions:
                raise self.error(("initial", key), f"state {state!r} is not in regions")
        names = self.strings(value.get("switch", []), ("initial", "switch"))
        effort_off = self.strings(value.get("effort_off", []), ("initial", "effort_off"))
        default = value.get("default", True)

        def initial(request: StreamOptions) -> str:
            effort = request.chat_template_kwargs.get("reasoning_effort") or request.reasoning_effort
            if effort is not None and effort in effort_off:
                return off
            return on if request.switch(*names, default=default) else off

        switches = "/".join(names) or "no switch"
        initial.__doc__ = f"thinking from chat_template_kwargs {switches}, default {'on' if default else 'off'}"
        return initial

    def codec(self, table: dict[str, Any], terminals: Mapping[str, tuple[str, ...]]) -> CodecFactory:
        kind = table.get("type")
        if kind not in CODECS:
            raise self.error(("codec", "type"), f"unknown codec {kind!r}; codecs: {', '.join(CODECS)}")
        options = {k: v for k, v in table.items() if k != "type"}
        self.keys(options, _CODEC_OPTIONS[kind], ("codec",))
        simple: dict[str, CodecFactory] = {
            "json_args": JsonArgsCodec,
            "pythonic": PythonicCallCodec,
            "mistral": MistralCallCodec,
            "name_key": NameKeyCodec,
        }
        if kind in simple:
            return simple[kind]
        if kind == "json_envelope":
            flags = ("list_opener", "requires_args")
            keys = {k: self.strings(v, ("codec", k)) for k, v in options.items() if k not in flags}
            return JsonEnvelope(
                **keys,
                list_opener=options.get("list_opener", False),
                requires_args=options.get("requires_args", False),
            )
        if kind == "gemma_args":
            if "quote" not in options:
                raise self.error(("codec",), "gemma_args needs quote (the family's string delimiter)")
            return GemmaArgs(options["quote"])
        for key in ("param_start", "param_end"):
            if key not in options:
                raise self.error(("codec",), f"xml_params needs {key} (a terminal)")
        for key in ("param_start", "param_end", "key_marker", "value_start"):
            if key in options and options[key] not in terminals:
                raise self.error(("codec", key), f"{options[key]!r} is not a terminal")
        if options.get("trim", "newline") not in TRIMS:
            raise self.error(("codec", "trim"), f"must be one of {', '.join(TRIMS)}")
        reader = options.pop("key", "as_is")
        attribute = options.pop("key_attribute", "name")
        string_attr, type_attr = options.pop("string_attribute", None), options.pop("type_attribute", None)
        if "unwrap" in options:
            options["unwrap"] = self.strings(options["unwrap"], ("codec", "unwrap"))
        return XmlParams(**options, parse_key=self.key_reader(reader, attribute, string_attr, type_attr))

    def key_reader(self, read: str, attribute: str, string_attr: str | None, type_attr: str | None) -> KeyReader | None:
        if read not in ("as_is", "unquote", "first_quoted", "attributes"):
            raise self.error(("codec", "key"), "must be as_is, unquote, first_quoted or attributes")
        if read == "as_is":
            return None
        if read != "attributes":
            plain = unquote if read == "unquote" else first_quoted

            def parse_plain(text: str) -> tuple[str, tuple[str, ...] | None]:
                return plain(text), None

            return parse_plain

        def parse_attributes(text: str) -> tuple[str, tuple[str, ...] | None]:
            attrs = attributes(text)
            key = attrs.get(attribute, unquote(text))
            if string_attr is not None and string_attr in attrs:
                flag = attrs[string_attr].strip().lower()
                return key, ("string",) if flag == "true" else JSON_TEXT if flag == "false" else None
            if type_attr is not None and type_attr in attrs:
                return key, ("string",) if attrs[type_attr] == "string" else JSON_TEXT
            return key, None

        return parse_attributes

    def call_name(self, table: dict[str, Any]) -> Callable[[str], tuple[str, str | None]] | None:
        self.keys(table, _CALL_NAME, ("call_name",))
        read = table.get("read", "as_is")
        if read not in READERS:
            raise self.error(("call_name", "read"), f"must be one of {', '.join(READERS)}")
        if read == "as_is":
            return None
        if read == "pattern":
            if "pattern" not in table:
                raise self.error(("call_name",), "read = 'pattern' needs pattern (a regex with a group 'name')")
            patterns = []
            for k, text in enumerate(self.strings(table["pattern"], ("call_name", "pattern"))):
                try:
                    pattern = re.compile(text, re.S)
                except re.error as exc:
                    raise self.error(("call_name", "pattern"), f"pattern {k} is not a regex: {exc}") from None
                if "name" not in pattern.groupindex:
                    raise self.error(("call_name", "pattern"), f"pattern {k} needs a group (?P<name>…)")
                patterns.append(pattern)

            def parse_pattern(text: str) -> tuple[str, str | None]:
                for pattern in patterns:  # the first that matches the whole region wins
                    m = pattern.fullmatch(text)
                    if m is not None:
                        groups = m.groupdict()
                        return (groups["name"] or "").strip(), groups.get("id")
                return "", None  # no name: the call is malformed

            return parse_pattern
        if read == "attribute":
            attribute = table.get("attribute", "name")

            def parse_attribute(text: str) -> tuple[str, str | None]:
                return attributes(text).get(attribute, "").strip(), None

            return parse_attribute
        plain = unquote if read == "unquote" else first_quoted

        def parse_plain(text: str) -> tuple[str, str | None]:
            return plain(text), None

        return parse_plain

    def call_id(self, value: str) -> Callable[[StreamOptions, int, str], str] | None:
        from ._json_tools import alnum_id

        if value == "alnum9":
            return alnum_id
        if value == "random":
            return None  # the engine's default: call_ + 24 random hex digits
        if "{" not in value:
            raise self.error(("call_id",), "must be random, alnum9, or a template with {name} / {index}")
        try:
            value.format(name="f", index=0)
        except (KeyError, IndexError, ValueError) as exc:
            raise self.error(("call_id",), f"a template may use {{name}} and {{index}} only ({exc})") from None

        def template(request: StreamOptions, index: int, name: str) -> str:
            return value.format(name=name, index=request.history_tool_calls + index)

        return template


def attributes(text: str) -> dict[str, str]:
    """``key="v"`` (or ``key='v'``) pairs of an element header, HTML-unescaped."""
    return {k: html.unescape(v) for k, quote, v in attribute_pairs(text) if quote}
