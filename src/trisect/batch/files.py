"""Batch input and output, streamed: JSONL and Parquet read in chunks and written as they come.

* Input: JSONL (one JSON object per line; blank lines are not rows; ``-`` is stdin) or Parquet
  (``.parquet`` / ``.pq``, read one record batch at a time with pyarrow).
* Output, in input order: JSONL (each input row with ``message`` and ``error`` added; a line
  that is not JSON keeps its text under ``input``) or Parquet (the input's columns, then the
  ``message`` and ``error`` struct columns; Parquet output needs Parquet input, whose schema
  it extends). ``-`` is stdout.
* Resume: the output's complete rows are counted and that many input rows are skipped. A JSONL
  output torn by a hard kill loses its incomplete last line first; a Parquet output is copied
  into a new file that continues it, which replaces the old one when the run ends.
* Every chunk is written in one piece and flushed, and the writers are closed on Ctrl-C, so an
  interrupted run leaves a valid partial output (whole JSON lines; a Parquet file with its footer).

Memory: one chunk of rows per worker in flight, plus the writer's buffer.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from ..many import arrow_types

PARQUET = (".parquet", ".pq")


class BatchFileError(Exception):
    """An input or output the command cannot use (reported on one line)."""


def kind_of(path: str) -> str:
    return "parquet" if path.lower().endswith(PARQUET) else "jsonl"


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise BatchFileError("Parquet needs pyarrow: pip install 'trisect[batch]'") from None
    return pyarrow


# ---------------------------------------------------------------------------- input


class JsonlSource:
    kind = "jsonl"

    def __init__(self, path: str) -> None:
        self.path = path
        if path != "-" and not Path(path).is_file():
            raise BatchFileError(f"input {path} does not exist")

    def _lines(self) -> Iterator[bytes]:
        if self.path == "-":
            yield from sys.stdin.buffer
            return
        with open(self.path, "rb") as fh:
            yield from fh

    def count(self) -> int | None:
        """Rows in the input (``None`` for stdin)."""
        if self.path == "-":
            return None
        return sum(1 for line in self._lines() if not line.isspace())

    def chunks(self, size: int, skip: int = 0) -> Iterator[list[bytes]]:
        chunk: list[bytes] = []
        for line in self._lines():
            if line.isspace():
                continue
            if skip:
                skip -= 1
                continue
            chunk.append(line)
            if len(chunk) >= size:
                yield chunk
                chunk = []
        if chunk:
            yield chunk


class ParquetSource:
    kind = "parquet"

    def __init__(self, path: str) -> None:
        pa = _pyarrow()
        self.path = path
        try:
            self.file = pa.parquet.ParquetFile(path)
        except (OSError, pa.ArrowException) as exc:
            raise BatchFileError(f"input {path} is not a readable Parquet file: {exc}") from None
        self.schema = self.file.schema_arrow

    def count(self) -> int:
        return int(self.file.metadata.num_rows)

    def chunks(self, size: int, skip: int = 0) -> Iterator[Any]:
        for batch in self.file.iter_batches(batch_size=size):
            if skip >= batch.num_rows:
                skip -= batch.num_rows
                continue
            if skip:
                batch = batch.slice(skip)
                skip = 0
            yield batch


def open_source(path: str) -> JsonlSource | ParquetSource:
    return ParquetSource(path) if kind_of(path) == "parquet" else JsonlSource(path)


# ---------------------------------------------------------------------------- output


def _complete_jsonl_rows(path: str) -> int:
    """Complete lines of a JSONL output; an incomplete last line is cut off the file."""
    with open(path, "rb+") as fh:
        rows = 0
        end = 0
        for line in fh:
            if not line.endswith(b"\n"):
                break
            end += len(line)
            if not line.isspace():
                rows += 1
        fh.truncate(end)
    return rows


class JsonlSink:
    kind = "jsonl"

    def __init__(self, path: str, *, resume: bool) -> None:
        self.path = path
        self.done = 0
        self._close = True
        if path == "-":
            if resume:
                raise BatchFileError("--resume needs an output file, not stdout")
            self._out: BinaryIO = sys.stdout.buffer
            self._close = False
        elif resume and os.path.exists(path):
            self.done = _complete_jsonl_rows(path)
            self._out = open(path, "ab")  # noqa: SIM115 - closed by close()
        else:
            self._out = open(path, "wb")  # noqa: SIM115

    def write_lines(self, data: bytes) -> None:
        self._out.write(data)
        self._out.flush()

    def write_rows(self, rows: list[dict[str, Any]]) -> None:
        self.write_lines(
            ("\n".join(json.dumps(r, ensure_ascii=False, default=_jsonable) for r in rows) + "\n").encode()
        )

    def close(self) -> None:
        if self._close:
            self._out.close()
        else:
            self._out.flush()


def _jsonable(value: Any) -> Any:
    """Parquet values JSON has no type for: bytes as text, dates and times in ISO form."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


class ParquetSink:
    kind = "parquet"

    def __init__(self, path: str, input_schema: Any, *, resume: bool) -> None:
        pa = _pyarrow()
        self.pa = pa
        self.path = path
        self.done = 0
        message, error = arrow_types(pa)
        base = input_schema
        for name in ("message", "error"):
            if base.get_field_index(name) >= 0:
                base = base.remove(base.get_field_index(name))
        self.keep = base.names
        self.schema = base.append(pa.field("message", message)).append(pa.field("error", error))
        self.types = (message, error)
        self._final: str | None = None
        target = path
        previous = None
        if resume and os.path.exists(path):
            try:
                previous = pa.parquet.ParquetFile(path)
            except (OSError, pa.ArrowException) as exc:
                raise BatchFileError(f"cannot resume: {path} is not a readable Parquet file ({exc})") from None
            if previous.schema_arrow != self.schema:
                raise BatchFileError(f"cannot resume: {path} has other columns than this run writes")
            target = path + ".partial"
            self._final = path
        self._writer = pa.parquet.ParquetWriter(target, self.schema)
        if previous is not None:
            for batch in previous.iter_batches():
                self._writer.write_batch(batch)
                self.done += batch.num_rows

    def write_batch(self, batch: Any, results: list[tuple[Any, Any]]) -> None:
        pa = self.pa
        columns = [batch.column(batch.schema.get_field_index(name)) for name in self.keep]
        columns.append(pa.array([m for m, _ in results], type=self.types[0]))
        columns.append(pa.array([e for _, e in results], type=self.types[1]))
        self._writer.write_batch(pa.RecordBatch.from_arrays(columns, schema=self.schema))

    def write_table(self, table: Any) -> None:
        """A table that already has the ``message`` and ``error`` columns (Ray Data's output)."""
        self._writer.write_table(table.select(self.schema.names).cast(self.schema))

    def close(self) -> None:
        self._writer.close()
        if self._final is not None:
            os.replace(self.path + ".partial", self._final)


def open_sink(path: str, source: JsonlSource | ParquetSource, *, resume: bool) -> JsonlSink | ParquetSink:
    if kind_of(path) == "parquet":
        if not isinstance(source, ParquetSource):
            raise BatchFileError("Parquet output needs Parquet input (its schema is extended); write .jsonl")
        return ParquetSink(path, source.schema, resume=resume)
    return JsonlSink(path, resume=resume)
