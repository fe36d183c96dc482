"""Hand-written floors: the least work that still yields the message, per wire family.

Each floor finds the markers with ``str.find`` and decodes each call with ``json.loads`` (the
XML family: slices the parameters and writes the arguments with one ``json.dumps``). No
validation, no malformed-output rules, no streaming: what a user writes for one known-good
format, so a parser cannot be much faster than this on the same output. Used by ``bench.py``
(throughput) and ``bench_setup.py`` (small outputs).
"""

from __future__ import annotations

import json

_decode = json.JSONDecoder().raw_decode


def _think(text: str) -> tuple[str, int]:
    a = text.find("<think>")
    b = text.find("</think>")
    if b < 0:
        return "", 0
    start = a + 7 if 0 <= a < b else 0
    return text[start:b].strip(), b + 8


def hermes(text: str) -> tuple[str, str, list[tuple[str, object]]]:
    """``<think>…</think>`` then content and ``<tool_call>{json}</tool_call>`` blocks."""
    reasoning, i = _think(text)
    calls = []
    content = []
    while True:
        a = text.find("<tool_call>", i)
        if a < 0:
            content.append(text[i:])
            break
        content.append(text[i:a])
        b = text.find("</tool_call>", a)
        obj = json.loads(text[a + 11 : b])
        calls.append((obj["name"], obj["arguments"]))
        i = b + 12
    return reasoning, "".join(content).strip(), calls


def llama3_json(text: str) -> tuple[str, str, list[tuple[str, object]]]:
    """Optional ``<|python_tag|>``, then JSON envelopes separated by ``;``."""
    i = text.find("<|python_tag|>")
    if i < 0:
        i = text.find("{")
        if i < 0:
            return "", text.strip(), []
        content = text[:i]
    else:
        content = text[:i]
        i += 14
    calls = []
    n = len(text)
    while i < n:
        while i < n and text[i] in " \t\r\n;":
            i += 1
        if i >= n:
            break
        obj, i = _decode(text, i)
        calls.append((obj["name"], obj["parameters"]))
    return "", content.strip(), calls


def qwen3_coder(text: str) -> tuple[str, str, list[tuple[str, object]]]:
    """``<think>…</think>``, content, ``<tool_call><function=…><parameter=…>`` blocks; every
    value a string (``json.dumps`` of the dict per call, as the arguments text)."""
    reasoning, i = _think(text)
    calls = []
    content = []
    while True:
        a = text.find("<tool_call>", i)
        if a < 0:
            content.append(text[i:])
            break
        content.append(text[i:a])
        end = text.find("</tool_call>", a)
        f = text.find("<function=", a) + 10
        g = text.find(">", f)
        name = text[f:g]
        params = {}
        j = g
        while True:
            p = text.find("<parameter=", j, end)
            if p < 0:
                break
            k = text.find(">", p)
            q = text.find("</parameter>", k)
            params[text[p + 11 : k]] = text[k + 2 : q - 1]
            j = q + 12
        calls.append((name, json.dumps(params, ensure_ascii=False)))
        i = end + 12
    return reasoning, "".join(content).strip(), calls


FLOORS = {"hermes": hermes, "llama3_json": llama3_json, "qwen3_coder": qwen3_coder}
