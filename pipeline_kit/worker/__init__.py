"""The worker runtime: joins the engine and the backends (claim, call, heartbeat, complete)."""

from pipeline_kit.worker.runtime import Summary, Worker, WorkerConfig, run_worker
from pipeline_kit.worker.task_end import TaskEnd

__all__ = ["Summary", "TaskEnd", "Worker", "WorkerConfig", "run_worker"]
