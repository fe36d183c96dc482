"""Small synthetic byte-level BPE tokenizers for families whose real tokenizer is not staged.

No tokenizer of GLM-4.x, MiniMax-M2, Gemma 4 or FunctionGemma small enough to keep in the
repository could be found (``tests/data/README.md`` lists what is staged). What a test needs from a tokenizer
is which marker strings are single added tokens and that ordinary text round-trips through
byte-level BPE; ``build(markers)`` trains a byte-level BPE on a few KB of fixed text
(deterministic) and adds the family's markers as added tokens. Marker ids are therefore not
the family's real ids; the ``tok_<name>.py`` modules say which markers their family's
tokenizer has as added tokens.
"""

from __future__ import annotations

from typing import Any

_CORPUS = """\
The user wants the current weather in Paris. I will call the tool with the city name.
What's the weather like in Paris today? It is sunny, 22 degrees celsius, light wind.
Let me search the web for the latest news and then write the answer in a file.
def main():\n    print("hello, world")\n    return 0\n\nif __name__ == "__main__":\n    main()\n
{"location": "Paris", "unit": "celsius", "count": 3, "ratio": 0.5, "enabled": true, "tags": ["a", "b"]}
<html><body><p>Hello</p></body></html> -- a file may mention tags like </parameter> or </tool_call>.
Numbers 0 1 2 3 4 5 6 7 8 9 10 42 100 3.14 -7 1e5; punctuation , . : ; ! ? ( ) [ ] { } < > = " ' /
Tokyo, Berlin, München, 東京, Zürich, São Paulo — unicode text is ordinary text too.
The answer is 42. Each call starts with a marker and then the function name.
"""


def build(markers: list[str], *, vocab_size: int = 700, control: tuple[str, ...] = ()) -> Any:
    """A ``tokenizers.Tokenizer``: byte-level BPE trained on a fixed corpus, ``markers`` added;
    those in ``control`` as special tokens (an engine skips them unless asked)."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=1,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator([_CORPUS] * 4, trainer=trainer)
    tok.add_tokens([AddedToken(m, special=m in control, normalized=False) for m in markers if m not in control])
    tok.add_special_tokens([AddedToken(m, special=True, normalized=False) for m in markers if m in control])
    return tok
