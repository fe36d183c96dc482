"""Ray Data (the ``ray`` heavy suite): ``ParseBatch`` in ``map_batches`` and ``trisect batch --ray``
on a local Ray (``ray.init(num_cpus=2)``) with 10,000 rows, bad ones mixed in: the same rows as
the local run, in order. Skipped without Ray; a failure under CI=true (``.ci/run`` runs it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import trisect
from support.extras import require
from test_batch import JOB, ROOT, TOOLS, mixed_rows, read_jsonl, without_ids, write_jsonl

pytestmark = [
    pytest.mark.ray,
    # Ray's own deprecation notices about its internals are not this suite's concern
    pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning"),
]
ray = require("ray", "ray")

N = 10_000


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True  # what the docs tell users to set for ordered output
    context.enable_progress_bars = False
    yield ray
    ray.shutdown()


def _same(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert {**x, "message": without_ids(x["message"])} == {**y, "message": without_ids(y["message"])}


@pytest.mark.parametrize("batch_format", ["pyarrow", "pandas"])
def test_parse_batch_in_map_batches(local_ray: Any, batch_format: str) -> None:
    from trisect.integrations.ray import ParseBatch

    rows = [r for r in mixed_rows(N) if isinstance(r, dict)]
    rows = [
        {"id": r["id"], "output": r.get("output"), "tools": r.get("tools"), "parser": r.get("tool_call_parser")}
        for r in rows
    ]
    job = {"reasoning": "qwen3", "tools": "hermes", "tool_definitions": TOOLS, "tool_parser_field": "parser"}
    local = list(trisect.parse_many(rows, workers=1, **job))
    ds = local_ray.data.from_items(rows).map_batches(
        ParseBatch,
        fn_constructor_kwargs=job,
        batch_format=batch_format,
        batch_size=500,
        compute=local_ray.data.ActorPoolStrategy(size=2),
    )
    got = ds.take_all()
    assert [r["id"] for r in got] == [r["id"] for r in rows]  # in order
    for row in got:  # a column's struct has every field: the facts a message lacks are null
        if row["message"] is not None:
            facts = ("tool_calls", "unfinished_call")
            row["message"] = {k: v for k, v in row["message"].items() if v or k not in facts}
    cut = sum(r["message"] is not None and "unfinished_call" in r["message"] for r in got)
    assert cut == sum(r["id"] % 12 == 2 for r in rows) > 0  # every cut-off call kept
    _same(local, [{k: row[k] for k in local[0]} for row in got])
    assert sum(r["error"] is not None for r in got) == sum(r["error"] is not None for r in local) > 0


def test_trisect_batch_ray_matches_the_local_run(local_ray: Any, tmp_path: Path) -> None:
    rows = mixed_rows(N)
    write_jsonl(tmp_path / "in.jsonl", rows)
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    base = [sys.executable, "-m", "trisect", "batch", str(tmp_path / "in.jsonl"), *JOB]
    base += ["--tools-file", str(tmp_path / "tools.json"), "--workers", "2"]
    local = subprocess.run([*base, "-o", str(tmp_path / "local.jsonl")], env=env, capture_output=True, text=True)
    remote = subprocess.run(
        [*base, "-o", str(tmp_path / "ray.jsonl"), "--ray"], env=env, capture_output=True, text=True
    )
    assert local.returncode == remote.returncode == 1, remote.stderr[-2000:]
    assert local.stderr.splitlines()[-1].split(" failed")[0] == remote.stderr.splitlines()[-1].split(" failed")[0]
    _same(read_jsonl(tmp_path / "local.jsonl"), read_jsonl(tmp_path / "ray.jsonl"))


def test_trisect_batch_ray_from_parquet_to_jsonl(local_ray: Any, tmp_path: Path) -> None:
    """Parquet read by Ray, JSONL written through the driver: the messages come back from Arrow
    structs, where a fact a message lacks is null; the file says what the local run says."""
    pa = require("pyarrow", "ray")
    pq = require("pyarrow.parquet", "ray")

    rows = [r for r in mixed_rows(600) if isinstance(r, dict) and "output" in r]
    table = pa.table({"id": [r["id"] for r in rows], "output": [r["output"] for r in rows]})
    pq.write_table(table, tmp_path / "in.parquet", row_group_size=100)
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    base = [sys.executable, "-m", "trisect", "batch", str(tmp_path / "in.parquet"), *JOB]
    base += ["--tools-file", str(tmp_path / "tools.json"), "--workers", "1"]
    local = subprocess.run([*base, "-o", str(tmp_path / "local.jsonl")], env=env, capture_output=True, text=True)
    remote = subprocess.run(
        [*base, "-o", str(tmp_path / "ray.jsonl"), "--ray"], env=env, capture_output=True, text=True
    )
    assert local.returncode == remote.returncode == 0, remote.stderr[-2000:]
    got = read_jsonl(tmp_path / "ray.jsonl")
    _same(read_jsonl(tmp_path / "local.jsonl"), got)
    assert sum("unfinished_call" in r["message"] for r in got) == sum(r["id"] % 12 == 2 for r in rows) > 0
    assert not any("tool_calls" in r["message"] and not r["message"]["tool_calls"] for r in got)
