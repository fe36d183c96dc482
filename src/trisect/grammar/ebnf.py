"""A small grammar algebra, written out as llama.cpp GBNF or as llguidance Lark.

``Rules`` holds named rules over the expressions below; ``write_gbnf`` and ``write_lark``
write the same grammar in each engine's syntax. Two leaves are not plain grammar, because one
engine has a better native form for them than the other:

* ``Json(schema)``: a JSON value a JSON schema allows. Lark writes llguidance's own ``%json``
  (complete JSON-schema support); GBNF expands it with the converter ``write_gbnf`` is given
  (``jsonschema.json_rules``), which reports what it could not express.
* ``Until(excludes, end)``: text holding none of the ``excludes`` strings, then ``end`` (an XML
  parameter value up to its closer). Lark writes a negated-regex lexeme matched lazily; GBNF
  expands it into the states of a string-matching automaton (``_until_rules``): the text is
  accepted exactly when the first excluded string that occurs in ``text + end`` is ``end`` at
  its end, which is how the parser reads it.
* ``Regex(pattern)``: Lark writes the regex lexeme; GBNF converts the small regex subset the
  structural tags use (``regex_expr``: literals, escapes, classes, groups, ``|``, ``? * +
  {m,n}``) and raises ``GrammarSyntaxError`` for anything else.

Rule names are written ``kebab-case`` in GBNF (llama.cpp allows letters, digits and ``-``) and
``snake_case`` in Lark; the root is ``root`` / ``start``. Expressions are frozen and hashable:
``Rules.define`` gives the same body the same rule. Cost: linear in the size of the grammar.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from ..errors import RequestError


class GrammarSyntaxError(RequestError):
    """A grammar piece has no translation into the target syntax (a regex feature GBNF lacks)."""


@dataclass(frozen=True, slots=True)
class Lit:
    text: str


@dataclass(frozen=True, slots=True)
class Chars:
    """One character from ``ranges`` (inclusive code-point pairs), or outside them if ``negated``."""

    ranges: tuple[tuple[int, int], ...]
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Ref:
    name: str


@dataclass(frozen=True, slots=True)
class Seq:
    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Alt:
    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Rep:
    item: Expr
    min: int = 0
    max: int | None = None  # None: unbounded


@dataclass(frozen=True, slots=True)
class Json:
    schema: str  # the schema as canonical JSON text (hashable)

    @staticmethod
    def of(schema: Any) -> Json:
        return Json(json.dumps(schema, ensure_ascii=False))  # key order kept: properties are written in it


@dataclass(frozen=True, slots=True)
class Until:
    excludes: tuple[str, ...]
    end: str


@dataclass(frozen=True, slots=True)
class Regex:
    pattern: str


Expr: TypeAlias = Lit | Chars | Ref | Seq | Alt | Rep | Json | Until | Regex
EMPTY = Lit("")


def seq(*items: Expr) -> Expr:
    flat: list[Expr] = []
    for item in items:
        if isinstance(item, Seq):
            flat.extend(item.items)
        elif item != EMPTY:
            flat.append(item)
    merged: list[Expr] = []
    for item in flat:  # adjacent literals become one (shorter grammars, one lexeme in Lark)
        if merged and isinstance(item, Lit) and isinstance(merged[-1], Lit):
            merged[-1] = Lit(merged[-1].text + item.text)
        else:
            merged.append(item)
    if not merged:
        return EMPTY
    return merged[0] if len(merged) == 1 else Seq(tuple(merged))


def alt(*items: Expr) -> Expr:
    unique = tuple(dict.fromkeys(items))
    return unique[0] if len(unique) == 1 else Alt(unique)


def opt(item: Expr) -> Expr:
    return Rep(item, 0, 1)


@dataclass
class Rules:
    """Named rules; ``root`` is the start rule's body. ``notes``: what a conversion left looser
    than asked (``jsonschema`` fills it)."""

    root: Expr = EMPTY
    rules: dict[str, Expr] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    _by_body: dict[Expr, str] = field(default_factory=dict)

    def define(self, hint: str, body: Expr) -> Ref:
        """A rule for ``body`` (the existing one if the same body was defined before)."""
        known = self._by_body.get(body)
        if known is not None:
            return Ref(known)
        name = self.fresh(hint)
        self.rules[name] = body
        self._by_body[body] = name
        return Ref(name)

    def fresh(self, hint: str) -> str:
        base = re.sub(r"[^a-z0-9]+", "-", hint.lower()).strip("-") or "r"
        if base[0].isdigit():
            base = "r-" + base
        name, k = base, 1
        while name in self.rules or name in ("root", "start"):
            k += 1
            name = f"{base}-{k}"
        self.rules[name] = EMPTY  # reserved; the caller sets it (recursive rules)
        return name

    def note(self, message: str) -> None:
        if message not in self.notes:
            self.notes.append(message)


# ---------------------------------------------------------------------------- GBNF


JsonRules = Callable[[Any, "Rules"], "Expr"]


def write_gbnf(rules: Rules, json_rules: JsonRules | None = None) -> str:
    """The grammar in llama.cpp's GBNF: ``Until`` and ``Regex`` expanded here, ``Json`` by
    ``json_rules`` (``jsonschema.json_rules``; ``GrammarSyntaxError`` without it)."""
    expanded = Rules(notes=rules.notes)
    cache: dict[Expr, Expr] = {}

    def lower(expr: Expr) -> Expr:
        if expr in cache:
            return cache[expr]
        out: Expr
        if isinstance(expr, Json):
            if json_rules is None:
                raise GrammarSyntaxError("a JSON schema in a GBNF grammar needs a JSON-schema converter")
            out = json_rules(json.loads(expr.schema), expanded)
        elif isinstance(expr, Until):
            out = _until_rules(expr, expanded)
        elif isinstance(expr, Regex):
            out = regex_expr(expr.pattern)
        elif isinstance(expr, Seq):
            out = seq(*(lower(e) for e in expr.items))
        elif isinstance(expr, Alt):
            out = alt(*(lower(e) for e in expr.items))
        elif isinstance(expr, Rep):
            out = Rep(lower(expr.item), expr.min, expr.max)
        else:
            out = expr
        cache[expr] = out
        return out

    for name in rules.rules:
        expanded.rules[name] = EMPTY  # keep the names taken
    for name, body in rules.rules.items():
        expanded.rules[name] = lower(body)
    root = lower(rules.root)
    lines = [f"root ::= {_gbnf_expr(root, top=True)}"]
    used = _reachable(root, expanded.rules)
    lines += [f"{name} ::= {_gbnf_expr(body, top=True)}" for name, body in expanded.rules.items() if name in used]
    return "\n".join(lines) + "\n"


_GBNF_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "\\": "\\\\"}


def _gbnf_char(c: str, in_class: bool) -> str:
    if c in _GBNF_ESCAPES and (not in_class or c not in '"'):
        return _GBNF_ESCAPES[c]
    code = ord(c)
    if code < 0x20 or code == 0x7F or (in_class and c in "[]^-"):
        return f"\\x{code:02X}"
    if 0xD800 <= code <= 0xDFFF:
        raise GrammarSyntaxError("a lone surrogate has no GBNF spelling")
    return c


def _gbnf_lit(text: str) -> str:
    return '"' + "".join(_gbnf_char(c, False) for c in text) + '"'


def _class_body(ranges: tuple[tuple[int, int], ...], char: Any) -> str:
    out = []
    for lo, hi in ranges:
        out.append(char(chr(lo), True) if lo == hi else f"{char(chr(lo), True)}-{char(chr(hi), True)}")
    return "".join(out)


def _gbnf_expr(expr: Expr, top: bool = False) -> str:
    if isinstance(expr, Lit):
        return _gbnf_lit(expr.text)
    if isinstance(expr, Chars):
        if not expr.ranges:
            return "." if expr.negated else "[^\\x00-\\U0010FFFF]"
        return "[" + ("^" if expr.negated else "") + _class_body(expr.ranges, _gbnf_char) + "]"
    if isinstance(expr, Ref):
        return expr.name
    if isinstance(expr, Seq):
        body = " ".join(_gbnf_expr(e) for e in expr.items)
        return body if top else f"({body})"
    if isinstance(expr, Alt):
        body = " | ".join(_gbnf_expr(e, top=True) for e in expr.items)
        return body if top else f"({body})"
    if isinstance(expr, Rep):
        return _atom(_gbnf_expr(expr.item), expr.item) + _quantifier(expr.min, expr.max)
    raise GrammarSyntaxError(f"{type(expr).__name__} must be expanded before writing GBNF")


def _atom(text: str, expr: Expr) -> str:
    simple = isinstance(expr, (Lit, Chars, Ref)) or text.startswith("(")
    return text if simple else f"({text})"


def _quantifier(lo: int, hi: int | None) -> str:
    if (lo, hi) == (0, 1):
        return "?"
    if (lo, hi) == (0, None):
        return "*"
    if (lo, hi) == (1, None):
        return "+"
    if hi is None:
        return f"{{{lo},}}"
    return f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}"


# ---------------------------------------------------------------------------- Lark (llguidance)


def write_lark(rules: Rules) -> str:
    """The grammar in llguidance's Lark (``%llguidance {}`` header, ``start`` rule)."""
    terminals: dict[str, str] = {}
    used = _reachable(rules.root, rules.rules)
    body = [f"{_lark_name(n)}: {_lark_expr(e, True, terminals)}" for n, e in rules.rules.items() if n in used]
    start = f"start: {_lark_expr(rules.root, True, terminals)}"
    lines = ["%llguidance {}", "", start, *body, *(f"{name}: {text}" for name, text in terminals.items())]
    return "\n".join(lines) + "\n"


def _lark_name(name: str) -> str:
    return name.replace("-", "_")


def _lark_lit(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _lark_char(c: str, in_class: bool) -> str:
    code = ord(c)
    if c in "\\]^-[/" or code < 0x20 or code == 0x7F:
        return f"\\x{code:02x}" if code < 0x80 else c
    return c


def _lark_regex(pattern: str) -> str:
    return "/" + pattern.replace("/", "\\/") + "/"


def _lark_expr(expr: Expr, top: bool = False, terminals: dict[str, str] | None = None) -> str:
    terms = terminals if terminals is not None else {}
    if isinstance(expr, Lit):
        return _lark_lit(expr.text)
    if isinstance(expr, Chars):
        if not expr.ranges:
            return "/(?s:.)/" if expr.negated else "/[^\\x00-\\x{10FFFF}]/"
        return "/[" + ("^" if expr.negated else "") + _class_body(expr.ranges, _lark_char) + "]/"
    if isinstance(expr, Ref):
        return _lark_name(expr.name)
    if isinstance(expr, Regex):
        return _lark_regex(expr.pattern)
    if isinstance(expr, Json):
        return "%json " + expr.schema
    if isinstance(expr, Until):
        return _lark_until(expr, terms)
    if isinstance(expr, Seq):
        body = " ".join(_lark_expr(e, terminals=terms) for e in expr.items)
        return body if top else f"({body})"
    if isinstance(expr, Alt):
        body = " | ".join(_lark_expr(e, top=True, terminals=terms) for e in expr.items)
        return body if top else f"({body})"
    if isinstance(expr, Rep):
        inner = _lark_expr(expr.item, terminals=terms)
        inner = inner if isinstance(expr.item, (Lit, Chars, Ref, Regex, Seq, Alt)) else f"({inner})"
        return inner + _quantifier(expr.min, expr.max)
    raise GrammarSyntaxError(f"no Lark spelling for {type(expr).__name__}")


_ANY = "(?s:.*)"


def _lark_until(expr: Until, terminals: dict[str, str]) -> str:
    """A lazy rule: a lexeme of any text holding none of the excludes (nor ``end``), then
    ``end``; lazy, so it ends at the first ``end``. Without ``end``: the text lexeme alone."""
    excluded = sorted({s for s in (*expr.excludes, expr.end) if s})
    if not excluded:
        return f"/{_ANY}/"
    body = f"/{_ANY}/ & ~/{_ANY}(" + "|".join(re.escape(s).replace("/", "\\/") for s in excluded) + f"){_ANY}/"
    text = next((name for name, known in terminals.items() if known == body), None)
    if text is None:
        text = f"TEXT{len(terminals)}"
        terminals[text] = body
    if not expr.end:
        return text
    rule = f"{text.lower()}_until{len(terminals)}"
    terminals[f"{rule}[lazy]"] = f"{text} {_lark_lit(expr.end)}"
    return rule


# ---------------------------------------------------------------------------- Until in GBNF


def _until_rules(expr: Until, out: Rules) -> Expr:
    """``Until`` as rules, one per state of a string-matching automaton over the excluded
    strings (``end`` among them), one character at a time (so that lexer-based engines, which
    read literals greedily, read it as llama.cpp does). A state is the longest suffix of the
    text so far that is a proper prefix of an excluded string. A character that completes an
    excluded string ends the rule if that string is ``end`` (it is the last character) and is
    not allowed otherwise; any other character leads to the next state. Without ``end``, the
    rule may stop in every state."""
    words = sorted({w for w in (*expr.excludes, expr.end) if w})
    if not words:
        return Rep(Chars((), negated=True))
    prefixes = sorted({w[:k] for w in words for k in range(len(w))}, key=lambda p: (len(p), p))
    known = set(prefixes)

    def step(state: str, c: str) -> str | None:
        text = state + c
        if any(text.endswith(w) for w in words):
            return None  # an excluded string completes here
        return next(text[k:] for k in range(len(text) + 1) if text[k:] in known)

    def one(chars: list[str]) -> Expr:
        return Lit(chars[0]) if len(chars) == 1 else Chars(tuple((ord(c), ord(c)) for c in chars))

    base = out.fresh("until")
    names = {p: base if not p else out.fresh(f"{base}-s{k}") for k, p in enumerate(prefixes)}
    alphabet = sorted({c for w in words for c in w})
    for p in prefixes:
        targets: dict[str, list[str]] = {}
        finishing: list[str] = []
        for c in alphabet:
            nxt = step(p, c)
            if nxt is None:
                if expr.end and (p + c).endswith(expr.end):
                    finishing.append(c)
            elif nxt:
                targets.setdefault(nxt, []).append(c)
        special = [c for c in alphabet if step(p, c) != ""]  # all but the characters back to the start
        options: list[Expr] = [] if expr.end else [EMPTY]
        if finishing:
            options.append(one(finishing))
        options.append(seq(Chars(tuple((ord(c), ord(c)) for c in special), negated=True), Ref(base)))
        for target, chars in sorted(targets.items(), key=lambda tc: (len(tc[0]), tc[0])):
            options.append(seq(one(chars), Ref(names[target])))
        out.rules[names[p]] = alt(*options)
    return Ref(base)


# ---------------------------------------------------------------------------- regex subset -> Expr


def regex_expr(pattern: str) -> Expr:
    """The expression of a regex in the subset structural tags use (see the module docstring)."""
    parser = _RegexParser(pattern)
    expr = parser.alternation()
    if parser.pos != len(pattern):
        raise GrammarSyntaxError(f"regex {pattern!r}: unexpected {pattern[parser.pos]!r} at {parser.pos}")
    return expr


_CLASS_ESCAPES = {
    "d": ((ord("0"), ord("9")),),
    "s": ((9, 10), (13, 13), (32, 32)),
    "w": ((ord("0"), ord("9")), (ord("A"), ord("Z")), (ord("_"), ord("_")), (ord("a"), ord("z"))),
}
_CHAR_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "f": "\f", "v": "\v", "0": "\0"}


class _RegexParser:
    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.pos = 0

    def fail(self, what: str) -> GrammarSyntaxError:
        return GrammarSyntaxError(f"regex {self.pattern!r}: {what} at {self.pos} has no GBNF translation")

    def peek(self) -> str:
        return self.pattern[self.pos] if self.pos < len(self.pattern) else ""

    def take(self) -> str:
        c = self.peek()
        self.pos += 1
        return c

    def alternation(self) -> Expr:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.take()
            branches.append(self.sequence())
        return alt(*branches)

    def sequence(self) -> Expr:
        items: list[Expr] = []
        while self.peek() not in ("", "|", ")"):
            items.append(self.quantified())
        return seq(*items)

    def quantified(self) -> Expr:
        atom = self.atom()
        while True:
            c = self.peek()
            if c in ("?", "*", "+"):
                self.take()
                lo, hi = {"?": (0, 1), "*": (0, None), "+": (1, None)}[c]
                atom = Rep(atom, lo, hi)
            elif c == "{" and re.match(r"\{\d+(,\d*)?\}", self.pattern[self.pos :]):
                m = re.match(r"\{(\d+)(,(\d*))?\}", self.pattern[self.pos :])
                assert m is not None
                self.pos += m.end()
                lo = int(m.group(1))
                hi = lo if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
                atom = Rep(atom, lo, hi)
            else:
                return atom
            if self.peek() in ("?", "+") and self.pattern[self.pos - 1] in "?*+}":
                raise self.fail("a lazy or possessive quantifier")

    def atom(self) -> Expr:
        c = self.take()
        if c == "(":
            if self.peek() == "?":
                if self.pattern.startswith("?:", self.pos):
                    self.pos += 2
                else:
                    raise self.fail("a group flag or look-around")
            inner = self.alternation()
            if self.take() != ")":
                raise self.fail("an unclosed group")
            return inner
        if c == "[":
            return self.char_class()
        if c == ".":
            return Chars(((10, 10),), negated=True)
        if c == "\\":
            return self.escape(in_class=False)
        if c in ("^", "$"):
            raise self.fail("an anchor")
        return Lit(c)

    def escape(self, in_class: bool) -> Expr:
        c = self.take()
        if c in _CLASS_ESCAPES:
            return Chars(_CLASS_ESCAPES[c])
        if c.lower() in _CLASS_ESCAPES and c.isupper():
            return Chars(_CLASS_ESCAPES[c.lower()], negated=True)
        if c in _CHAR_ESCAPES:
            return Lit(_CHAR_ESCAPES[c])
        if c == "x" and re.match(r"[0-9a-fA-F]{2}", self.pattern[self.pos : self.pos + 2]):
            self.pos += 2
            return Lit(chr(int(self.pattern[self.pos - 2 : self.pos], 16)))
        if c == "u" and re.match(r"[0-9a-fA-F]{4}", self.pattern[self.pos : self.pos + 4]):
            self.pos += 4
            return Lit(chr(int(self.pattern[self.pos - 4 : self.pos], 16)))
        if c and not c.isalnum():
            return Lit(c)
        raise self.fail(f"the escape \\{c}")

    def char_class(self) -> Expr:
        negated = self.peek() == "^"
        if negated:
            self.take()
        ranges: list[tuple[int, int]] = []
        first = True
        while True:
            c = self.take()
            if c == "":
                raise self.fail("an unclosed class")
            if c == "]" and not first:
                break
            first = False
            if c == "\\":
                escaped = self.escape(in_class=True)
                if isinstance(escaped, Chars):
                    if escaped.negated:
                        raise self.fail("a negated escape inside a class")
                    ranges.extend(escaped.ranges)
                    continue
                assert isinstance(escaped, Lit)
                c = escaped.text
            if self.peek() == "-" and self.pattern[self.pos + 1 : self.pos + 2] not in ("]", ""):
                self.take()
                hi = self.take()
                if hi == "\\":
                    escaped = self.escape(in_class=True)
                    if not isinstance(escaped, Lit):
                        raise self.fail("a class escape as a range end")
                    hi = escaped.text
                ranges.append((ord(c), ord(hi)))
            else:
                ranges.append((ord(c), ord(c)))
        return Chars(tuple(ranges), negated)


def _reachable(root: Expr, rules: dict[str, Expr]) -> set[str]:
    seen: set[str] = set()
    todo = [root]
    while todo:
        for node in walk(todo.pop()):
            if isinstance(node, Ref) and node.name not in seen:
                seen.add(node.name)
                todo.append(rules[node.name])
    return seen


def walk(expr: Expr) -> Iterator[Expr]:
    """Every sub-expression of ``expr`` (pre-order)."""
    yield expr
    children: Iterable[Expr] = ()
    if isinstance(expr, (Seq, Alt)):
        children = expr.items
    elif isinstance(expr, Rep):
        children = (expr.item,)
    for child in children:
        yield from walk(child)
