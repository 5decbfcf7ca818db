"""The worker runtime: joins the engine and the backends (claim, call, heartbeat, complete)."""

from pipeline_kit.worker.runtime import Summary, Worker, WorkerConfig, run_worker

__all__ = ["Summary", "Worker", "WorkerConfig", "run_worker"]
