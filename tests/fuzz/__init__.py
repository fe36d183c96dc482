"""The fuzzer: random cuts, mutations and token ids over every case, checked by the contract.

Three kinds of job, each over the real cases of ``tests/cases/`` (``corpus``):

* **split**: a case's output cut at random points, in random groups of characters and of
  tokens (text with ids, ids alone, ids ahead of their text, text ahead of its ids), checked
  against the case's expected message and ``parse()``;
* **mutation**: a case's output with spans deleted, inserted or duplicated, markers of every
  format inserted, odd Unicode, broken markers, oversized values (``mutate``), checked by
  ``trisect.testing.check_output`` (the contract, with no expected message) as text and, where
  the case has a tokenizer, as token ids;
* **ids**: token-id sequences for every tokenizer of the tests, made of valid ids (the cases'
  own, random ones, byte tokens, added tokens), odd ones (negative, huge, floats, strings,
  ``None``) and wrong ones (past the vocabulary), through ``parse()``, ``stream()`` and the
  token view (``oracle``).

A finding is a violation of the contract or an exception outside ``oracle.ALLOWED`` (the
library's documented errors, each only where its rule says); it is shrunk (``minimise``) and
written as a regression line (``regressions.jsonl`` is the file the portable suite replays).
``run`` drives it all within a CPU budget on several processes and reports its volume.
"""
