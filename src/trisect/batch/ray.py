"""``trisect batch --ray``: the same job on Ray Data, written in order to the same output file.

The input is read with ``ray.data`` (JSONL through ``read_text``, so that a line that is not JSON is
still that row's error; Parquet through ``read_parquet``), parsed by ``--workers`` actors
(``trisect.many.parse_arrow_table``: the rows of ``trisect.integrations.ray.ParseBatch``), with
``preserve_order`` on, and streamed back through this process into the local run's writers. A
local Ray gets one CPU more than the actors hold (the read tasks need one); ``--ray-address``
(or ``RAY_ADDRESS``) runs it on a cluster. Ray is imported only here, when the flag is given.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..many import BatchOptions, RowParser, message_from_columns, parse_arrow_table
from .files import BatchFileError


class _Parse:
    """The actor: one row parser, a batch (a ``pyarrow.Table``) at a time."""

    def __init__(self, options: BatchOptions, json_lines: str | None) -> None:
        self.rows = RowParser(options)
        self.json_lines = json_lines

    def __call__(self, table: Any) -> Any:
        import pyarrow as pa

        return parse_arrow_table(self.rows, table, pa, self.json_lines)


def run(
    source: Any,
    sink: Any,
    options: BatchOptions,
    *,
    skip: int = 0,
    workers: int | None = None,
    chunk_size: int = 256,
    address: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[int, int]:
    """``source`` / ``sink``: ``trisect.batch.files`` objects; the first ``skip`` rows (already in
    a resumed output) are parsed again and not written. Returns (rows written, rows failed)."""
    import ray

    if source.path == "-":
        raise BatchFileError("--ray reads files, not stdin")
    count = workers or os.cpu_count() or 1
    if not ray.is_initialized():
        # with exactly `count` CPUs the actors would hold them all and the read would wait forever
        cpus = None if address else count + 1
        ray.init(address=address, num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True
    context.enable_progress_bars = False  # the command shows its own
    lines = source.kind == "jsonl"
    ds = ray.data.read_text(source.path) if lines else ray.data.read_parquet(source.path)
    ds = ds.map_batches(
        _Parse,
        fn_constructor_kwargs={"options": options, "json_lines": "text" if lines else None},
        batch_format="pyarrow",
        batch_size=chunk_size,
        compute=ray.data.ActorPoolStrategy(size=count),
    )
    rows = failed = 0
    for table in ds.iter_batches(batch_format="pyarrow", batch_size=None):
        if skip:
            cut = min(skip, table.num_rows)
            table = table.slice(cut)
            skip -= cut
            if not table.num_rows:
                continue
        if lines:
            sink.write_lines(("\n".join(table.column("line").to_pylist()) + "\n").encode("utf-8"))
            errors = sum(table.column("failed").to_pylist())
        else:
            errors = table.num_rows - table.column("error").null_count
            if sink.kind == "parquet":
                sink.write_table(table)
            else:
                # the struct's null facts left out again, as the local run writes its JSONL
                out = table.to_pylist()
                for row in out:
                    row["message"] = message_from_columns(row["message"])
                sink.write_rows(out)
        rows += table.num_rows
        failed += errors
        if progress is not None:
            progress(table.num_rows)
    return rows, failed
