"""Benchmarks of the task engine: throughput through the real API next to the raw-SQL ceiling,
bulk enqueue, and claim latency against large backlogs. Scratch databases only.

`run_bench(build_config(...))` measures; `report.write` saves JSON and markdown.
"""

from pipeline_kit.bench.config import BenchConfig, build_config
from pipeline_kit.bench.runner import run_bench

__all__ = ["BenchConfig", "build_config", "run_bench"]
