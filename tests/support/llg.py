"""trisect's grammars checked with llguidance (a small wheel with no dependencies, vLLM's other
structured-output backend), so that the portable suite proves the grammar derivation.

llguidance takes JSON schemas and Lark grammars, not xgrammar's structural tags, so ``lark()``
translates the structural tag ``trisect.grammar.structural_tag`` builds into a Lark grammar,
element by element, with xgrammar's documented semantics:

* ``const_string`` / ``regex`` / ``sequence`` / ``or`` / ``star``: literally;
* ``tag``: ``begin content end``; an ``any_text`` content ends at the first ``end`` (a lazy
  lexeme);
* ``triggered_tags``: free text that holds no trigger and no excluded string, and tags that each
  begin with a trigger; ``at_least_one`` allows no free text before the first tag,
  ``stop_after_first`` ends the structure after the first tag;
* ``json_schema``: ``%json`` for the JSON style; for the XML argument styles (``qwen_xml``,
  ``glm_xml``, ``minimax_xml``, ``deepseek_xml``, ``deepseek_v4_1_xml``, ``kimi_k3_xml``) one
  parameter per property in declared order (required ones present), each written as its style
  writes it: a string value is raw text holding none of the ``excludes`` markers, any other value
  is JSON for the property's schema; a schema without properties (or with
  ``additionalProperties`` not false) takes any key, any raw or JSON value.

The round trips through real xgrammar (``tests/test_grammar_xgrammar.py``, the ``[xgrammar]``
extra) check the same grammars against xgrammar's own reading of those styles.

Acceptance runs byte by byte over a vocabulary of the 256 bytes, the format's markers and a stop
token; ``Sampler`` draws text from a grammar token by token. Cost: compiling a grammar is a few
milliseconds; a mask per sampled token.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, cast

import llguidance as llg

# ---------------------------------------------------------------------------- vocabulary


class _Vocab:
    """The tokenizer protocol ``llguidance.TokenizerWrapper`` reads: every byte, the markers as
    whole tokens, and a stop token last."""

    def __init__(self, markers: Sequence[str]) -> None:
        self.tokens: list[bytes] = [bytes([b]) for b in range(256)] + [m.encode() for m in markers] + [b"<|stop|>"]
        self.eos_token_id = len(self.tokens) - 1
        self.bos_token_id = None
        self.special_token_ids = [self.eos_token_id]
        self._markers = sorted(((m.encode(), 256 + k) for k, m in enumerate(markers)), key=lambda mi: -len(mi[0]))

    def __call__(self, text: bytes | str) -> list[int]:
        """Greedy tokenization: a marker where one starts, a byte otherwise."""
        data = text.encode() if isinstance(text, str) else text
        out, i = [], 0
        while i < len(data):
            for marker, token in self._markers:
                if data.startswith(marker, i):
                    out.append(token)
                    i += len(marker)
                    break
            else:
                out.append(data[i])
                i += 1
        return out


@cache
def tokenizer(markers: tuple[str, ...] = ()) -> tuple[Any, _Vocab]:
    vocab = _Vocab(markers)
    return llg.LLTokenizer(llg.TokenizerWrapper(vocab)), vocab


# ---------------------------------------------------------------------------- acceptance


@cache
def compile_lark(text: str, markers: tuple[str, ...] = ()) -> str:
    """The llguidance grammar of a Lark text, validated (``ValueError`` with llguidance's message);
    once per text and vocabulary in a process."""
    grammar = llg.grammar_from("lark", text)
    error = llg.LLMatcher.validate_grammar(grammar, tokenizer(markers)[0])
    if error and not error.startswith("WARNING"):
        raise ValueError(f"{error}\n{text}")
    return grammar


def structural_tag(tag: dict[str, Any], markers: tuple[str, ...] = ()) -> str:
    return compile_lark(lark(tag), markers)


def json_schema(schema: dict[str, Any]) -> str:
    return llg.grammar_from("json_schema", json.dumps({**schema, "x-guidance": _ESCAPES}))


def accepts(grammar: str, text: str, markers: tuple[str, ...] = ()) -> bool:
    """Does the grammar take exactly ``text`` (byte by byte) and then the stop token?"""
    tok, vocab = tokenizer(markers)
    matcher = llg.LLMatcher(tok, grammar, log_level=0)
    if matcher.is_error():
        raise ValueError(matcher.get_error())
    return matcher.consume_tokens(list(text.encode())) and matcher.consume_token(vocab.eos_token_id)


@dataclass
class Sampler:
    """Draws outputs from a grammar: printable ASCII, newline, the markers as whole tokens and the
    stop token, weighted towards structure so that samples finish."""

    markers: tuple[str, ...]

    def sample(self, grammar: str, rng: random.Random, limit: int = 1200) -> str | None:
        tok, vocab = tokenizer(self.markers)
        matcher = llg.LLMatcher(tok, grammar, log_level=0)
        weights = [self._weight(t, k, vocab) for k, t in enumerate(vocab.tokens)]
        out = bytearray()
        for _ in range(limit):
            mask = matcher.compute_bitmask()
            allowed = [k for k in range(len(vocab.tokens)) if mask[k // 8] >> (k % 8) & 1]
            if not allowed:
                return None
            w = [weights[k] for k in allowed]
            token = rng.choices(allowed, weights=w if any(w) else None)[0]
            if token == vocab.eos_token_id:
                return out.decode()
            assert matcher.consume_token(token), matcher.get_error()
            out += vocab.tokens[token]
        return None

    @staticmethod
    def _weight(token: bytes, k: int, vocab: _Vocab) -> float:
        if k == vocab.eos_token_id:
            return 40.0
        if k >= 256:
            return 4.0
        if token in (b"\n",) or 32 <= k < 127:
            return 6.0 if token in b'"}]>\n,' else 1.0
        return 0.0  # other bytes only when nothing else is allowed


# ---------------------------------------------------------------------------- structural tag -> Lark


ANY = "(?s:.*)"
WS = "[ \\t\\r\\n]{0,4}"
STYLES = {"qwen_xml", "glm_xml", "minimax_xml", "deepseek_xml", "deepseek_v4_1_xml", "kimi_k3_xml"}


def _lit(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


# xgrammar's JSON takes every escape JSON allows; llguidance's takes \uXXXX only for control
# characters unless told otherwise (models write "M\u00fcnchen": json.dumps's default)
_ESCAPES = {"json_allow_general_unicode_escapes": True}


def _json(schema: Any) -> str:
    schema = dict(schema) if isinstance(schema, dict) else {}
    schema["x-guidance"] = {**_ESCAPES, **schema.get("x-guidance", {})}
    return "%json " + json.dumps(schema)


class _Lark:
    """Accumulates the rules and terminals of one grammar."""

    def __init__(self) -> None:
        self.lines: list[str] = [f"ANYS: /{ANY}/", f"WS: /{WS}/", "KEY: /[A-Za-z_][A-Za-z0-9_.-]*/"]
        self.names: dict[tuple[Any, ...], str] = {}

    def define(self, key: tuple[Any, ...], prefix: str, body: str, options: str = "") -> str:
        name = self.names.get(key)
        if name is None:
            name = self.names[key] = f"{prefix}{len(self.names)}"
            self.lines.append(f"{name}{options}: {body}")
        return name

    def text(self, excludes: Iterable[str]) -> str:
        """A terminal: any text holding none of ``excludes``."""
        excluded = tuple(sorted(set(excludes)))
        if not excluded:
            return "ANYS"
        bad = self.define(("bad", excluded), "BAD", "ANYS (" + " | ".join(_lit(s) for s in excluded) + ") ANYS")
        return self.define(("text", excluded), "TEXT", f"ANYS & ~{bad}")

    def until(self, excludes: Iterable[str], end: str) -> str:
        """A rule: text up to the first ``end`` (included), holding none of ``excludes``."""
        body = self.text(excludes)
        return self.define(("until", body, end), "until", f"{body} {_lit(end)}", "[lazy]")

    # -- elements

    def element(self, node: dict[str, Any]) -> str:
        kind = node["type"]
        if kind == "const_string":
            return _lit(node["value"]) if node["value"] else ""
        if kind == "regex":
            return self.define(("re", node["pattern"]), "RE", "/" + llg.regex_to_lark(node["pattern"]) + "/")
        if kind == "sequence":
            return " ".join(p for p in (self.element(e) for e in node["elements"]) if p)
        if kind == "or":
            return "(" + " | ".join(self.element(e) or '""' for e in node["elements"]) + ")"
        if kind == "star":
            return f"({self.element(node['content'])})*"
        if kind == "any_text":
            return self.text(node.get("excludes", ()))
        if kind == "tag":
            return self.tag(node)
        if kind == "triggered_tags":
            return self.triggered(node)
        if kind == "json_schema":
            style = node.get("style", "json")
            if style == "json":
                return _json(node["json_schema"])
            return _XmlArgs(self, style, node.get("excludes", ())).object(node["json_schema"])
        raise ValueError(f"no Lark translation for structural tag element {kind!r}")

    def tag(self, node: dict[str, Any], *, skip: int = 0) -> str:
        """``begin content end``; ``skip``: characters of ``begin`` already matched (a trigger)."""
        begin, content, end = node["begin"][skip:], node["content"], node["end"]
        if isinstance(end, list):
            raise ValueError("a tag with several end strings has no translation here")
        parts = [_lit(begin)] if begin else []
        if content["type"] == "any_text" and end:
            parts.append(self.until(content.get("excludes", ()), end))
            return " ".join(parts)
        parts.append(self.element(content))
        if end:
            parts.append(_lit(end))
        return " ".join(p for p in parts if p)

    def triggered(self, node: dict[str, Any]) -> str:
        triggers = node["triggers"]
        free = self.text([*triggers, *node.get("excludes", ())])
        bare, after_text = [], []
        for tag in node["tags"]:
            trigger = next(t for t in triggers if tag["begin"].startswith(t))
            opened = self.define(("trig", free, trigger), "trig", f"{free} {_lit(trigger)}", "[lazy]")
            bare.append(self.tag(tag))
            after_text.append(f"{opened} {self.tag(tag, skip=len(trigger))}".strip())
        first = "(" + " | ".join(bare) + ")"
        later = "(" + " | ".join(after_text) + ")"
        if node.get("stop_after_first"):
            return first if node.get("at_least_one") else f"({later} | {free})"
        if node.get("at_least_one"):
            return f"{first} {later}* {free}"
        return f"{later}* {free}"


class _XmlArgs:
    """The XML argument styles: how one parameter is written."""

    def __init__(self, lark: _Lark, style: str, excludes: Iterable[str]) -> None:
        if style not in STYLES:
            raise ValueError(
                f"tests/support/llg.py has no Lark translation for the xgrammar argument style {style!r}: "
                "add how it writes one parameter to _XmlArgs._frame (xgrammar's docs say how)"
            )
        self.lark = lark
        self.style = style
        self.excludes = tuple(excludes)

    def object(self, schema: Any) -> str:
        if not isinstance(schema, dict):
            schema = {}
        props: dict[str, Any] = schema.get("properties") or {}
        required = set(schema.get("required") or ())
        parts = []
        for key, sub in props.items():
            param = f"WS {self.param(key, sub)}"
            parts.append(param if key in required else f"({param})?")
        if schema.get("additionalProperties", True) is not False or not props:
            parts.append(f"(WS {self.param(None, {})})*")
        return " ".join(parts)

    def param(self, key: str | None, schema: Any) -> str:
        """One parameter: its key (``None``: any key) and a value its schema allows."""
        kinds = self._kinds(schema)
        options = []
        for kind in kinds:
            head, close = self._frame(key, kind)
            if kind == "string":
                enum = schema.get("enum") if isinstance(schema, dict) else None
                if enum and all(isinstance(v, str) for v in enum):
                    value = "(" + " | ".join(_lit(v) for v in enum) + f") {_lit(close)}"
                else:
                    value = self.lark.until(self.excludes, close)
            else:
                sub = schema if isinstance(schema, dict) and schema and kind != "any" else None
                value = f"WS {_json(self._safe(sub))} WS {_lit(close)}"
            options.append(f"{head} {value}")
        return "(" + " | ".join(options) + ")"

    def _safe(self, schema: dict[str, Any] | None) -> dict[str, Any]:
        """A JSON value's schema whose strings hold no marker. xgrammar keeps its ``excludes``
        out of JSON strings inside XML values; llguidance's JSON cannot exclude a substring, so
        its strings here leave out the markers' first characters (a stricter reading)."""
        firsts = sorted({m[0] for m in self.excludes if m})
        pattern = "^[^" + "".join("\\" + c if c in "\\]^-[" else c for c in firsts) + "]*$" if firsts else None

        def strings(node: Any) -> Any:
            if isinstance(node, list):
                return [strings(n) for n in node]
            if not isinstance(node, dict):
                return node
            out = {k: strings(v) for k, v in node.items()}
            if pattern and out.get("type") == "string" and not {"pattern", "enum", "const", "format"} & set(out):
                out["pattern"] = pattern
            return out

        if schema is not None:
            return cast(dict[str, Any], strings(schema))
        any_value = {
            "anyOf": [
                {"type": ["number", "boolean", "null"]},
                {"type": "string", **({"pattern": pattern} if pattern else {})},
                {"type": "array", "items": {"$ref": "#/$defs/value"}},
                {"type": "object", "additionalProperties": {"$ref": "#/$defs/value"}},
            ]
        }
        return {"$defs": {"value": any_value}, "$ref": "#/$defs/value"}

    @staticmethod
    def _kinds(schema: Any) -> list[str]:
        """``string`` (a raw value), ``json`` (a JSON value of this schema) or both (``any``)."""
        if not isinstance(schema, dict) or not schema:
            return ["string", "any"]
        t = schema.get("type")
        if t == "string":
            return ["string"]
        if isinstance(t, str):
            return [t]
        if "enum" in schema and all(isinstance(v, str) for v in schema["enum"]):
            return ["string"]
        return ["string", "any"]

    def _key(self, key: str | None) -> str:
        if key is not None:
            return _lit(key)
        return "KEY"  # an undeclared key: a plain identifier (any text could close the key's tag)

    def _frame(self, key: str | None, kind: str) -> tuple[str, str]:
        """The text before the value (key included) and the closing tag."""
        style = self.style
        if style == "qwen_xml":
            return f'"<parameter=" {self._key(key)} ">"', "</parameter>"
        if style == "minimax_xml":
            return f'"<parameter name=\\"" {self._key(key)} "\\">"', "</parameter>"
        if style == "glm_xml":
            return f'"<arg_key>" {self._key(key)} "</arg_key>" WS "<arg_value>"', "</arg_value>"
        if style in ("deepseek_xml", "deepseek_v4_1_xml"):
            tag = "｜DSML｜parameter" if style == "deepseek_xml" else "｜DSML｜ parameter"
            flag = "true" if kind == "string" else "false"
            return f'"<{tag} name=\\"" {self._key(key)} "\\" string=\\"{flag}\\">"', f"</{tag}>"
        # kimi_k3_xml: integer and number both render as "number"
        kimi = {"string": "string", "integer": "number", "number": "number", "any": None}
        t = None if key is None else kimi.get(kind, kind)  # an undeclared key: any type name
        typ = f'"{t}"' if t else "/[a-z]+/"
        return f'"<|open|>argument key=\\"" {self._key(key)} "\\" type=\\"" {typ} "\\"<|sep|>"', (
            "<|close|>argument<|sep|>"
        )


def lark(tag: dict[str, Any]) -> str:
    """The Lark grammar of a structural tag (``{"type": "structural_tag", "format": …}``)."""
    out = _Lark()
    start = out.element(tag["format"] if tag.get("type") == "structural_tag" else tag)
    return "\n".join(["%llguidance {}", f"start: {start}", *out.lines]) + "\n"
