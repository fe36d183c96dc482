"""Ray Data: parse a column of model outputs on a cluster, with the row rules of ``trisect batch``.

    import ray
    from trisect.integrations.ray import ParseBatch

    ray.init()  # or ray.init(address="ray://head:10001"): the same code on a cluster
    ds = ray.data.read_parquet("rollouts/")
    ds = ds.map_batches(
        ParseBatch,
        fn_constructor_kwargs={"reasoning": "qwen3", "tools": "hermes", "text_field": "response"},
        batch_format="pyarrow",  # or "pandas"
        concurrency=8,
    )
    ds.write_parquet("parsed/")

``ParseBatch(**options)`` takes the options of ``trisect.many.BatchOptions`` (as the CLI's:
``reasoning``, ``tools``, ``tool_definitions``, ``tool_choice``, ``chat_template_kwargs``,
``text_field``, ``ids_field``, ``tokenizer`` — a tokenizer *object*, sent to each actor — and the
per-row field names). Each call parses one batch (a ``pyarrow.Table``, a ``pandas.DataFrame`` or
a dict of NumPy arrays) and returns it with a ``message`` and an ``error`` column (in a Table, of the
struct types of ``trisect.many.arrow_types``; in a DataFrame, the same as ``pd.ArrowDtype``; in
a NumPy batch, object arrays of dicts): exactly one
result per row, a row that cannot be parsed gets its error and the rest go on. With
``json_lines="text"`` the batch's ``text`` column holds raw JSON lines (``ray.data.read_text``),
each parsed as one input row (a line that is not JSON is that row's error), and the result is a
``line`` column of output JSON lines, as ``trisect batch`` writes them (and a ``failed`` column).

``trisect batch --ray`` (``trisect.batch.ray``) runs the same rows on Ray Data from the command line.
Rows come back in input order only when the dataset keeps it
(``DataContext.get_current().execution_options.preserve_order = True``). This module imports
neither Ray nor pyarrow at import time; it is the ``ray`` extra's.
"""

from __future__ import annotations

from typing import Any

from ..many import BatchOptions, RowParser, arrow_types, json_line_results, parse_arrow_table, parse_rows


class ParseBatch:
    """A callable class for ``Dataset.map_batches`` (see the module docstring)."""

    def __init__(self, *, options: BatchOptions | None = None, json_lines: str | None = None, **keywords: Any) -> None:
        if options is not None and keywords:
            raise TypeError("pass either options= or keywords, not both")
        self.options = options if options is not None else BatchOptions.of(keywords)
        self.json_lines = json_lines
        self._rows = RowParser(self.options)

    def __call__(self, batch: Any) -> Any:
        kind = type(batch).__module__.split(".")[0]
        if kind == "pyarrow":
            return self._arrow(batch)
        if kind == "pandas":
            return self._pandas(batch)
        if isinstance(batch, dict):
            return self._numpy(batch)
        raise TypeError(f"ParseBatch takes a pyarrow, pandas or numpy batch, not {type(batch).__name__}")

    def _arrow(self, table: Any) -> Any:
        import pyarrow as pa

        return parse_arrow_table(self._rows, table, pa, self.json_lines)

    def _pandas(self, frame: Any) -> Any:
        import pandas as pd

        if self.json_lines is not None:
            lines, failed = json_line_results(self._rows, list(frame[self.json_lines]))
            return pd.DataFrame({"line": lines, "failed": failed})
        import pyarrow as pa

        results = parse_rows(self._rows, frame.to_dict("records"))
        # typed columns (the pyarrow batches' struct types): a column of dicts leaves the type
        # to Ray's inference, which (Ray 2.60, messages with different keys) turned a row's
        # missing message into one of empty strings
        message, error = arrow_types(pa)
        out = frame.copy()
        out["message"] = pd.arrays.ArrowExtensionArray(pa.array([m for m, _ in results], type=message))
        out["error"] = pd.arrays.ArrowExtensionArray(pa.array([e for _, e in results], type=error))
        return out

    def _numpy(self, batch: dict[str, Any]) -> dict[str, Any]:
        import numpy as np

        if self.json_lines is not None:
            lines, failed = json_line_results(self._rows, list(batch[self.json_lines]))
            return {"line": np.array(lines, dtype=object), "failed": np.array(failed)}
        keys = list(batch)
        rows = [dict(zip(keys, values, strict=True)) for values in zip(*(batch[k] for k in keys), strict=True)]
        results = parse_rows(self._rows, rows)
        out = dict(batch)
        out["message"] = np.array([m for m, _ in results], dtype=object)
        out["error"] = np.array([e for _, e in results], dtype=object)
        return out
