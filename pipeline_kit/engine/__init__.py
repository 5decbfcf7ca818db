"""The task engine: states, enqueue, claim, lease writes, retry policy, watchdog, lanes, status.

It knows the database layer only: no backend, notebook, pandas or widgets. The functions a
notebook or the worker runtime calls are re-exported here.
"""

from pipeline_kit.engine.answers import recall_answer, remember_answer
from pipeline_kit.engine.claim import LaneCache, claim
from pipeline_kit.engine.enqueue import enqueue
from pipeline_kit.engine.lanes import (
    add_lane,
    get_lane,
    list_lanes,
    pause_with_alert,
    require_lanes,
    seed_default_lanes,
    update_lane,
)
from pipeline_kit.engine.lease import (
    Completion,
    complete,
    complete_many,
    dependency_outputs,
    fail,
    heartbeat,
    heartbeat_many,
    output_owner,
    record_cost,
    record_remote_job,
    release_many,
)
from pipeline_kit.engine.models import EnqueueResult, Lease, TaskSpec
from pipeline_kit.engine.operator import (
    RetryReport,
    RetrySelection,
    cancel_task,
    cancel_tasks,
    reset_tasks,
    retry,
    retry_task,
    set_dependencies,
    split_targets,
)
from pipeline_kit.engine.registry import register_worker, touch_worker
from pipeline_kit.engine.setup import Ready, init, prepare
from pipeline_kit.engine.retry import Decision, RetryPolicy
from pipeline_kit.engine.review import ReviewItem, approve, approve_many, awaiting_review, reject, set_review
from pipeline_kit.engine.states import Ack, Outcome, Status
from pipeline_kit.engine.status import (
    Overview,
    Pace,
    Rate,
    ReviewDecision,
    covered_window,
    last_decisions,
    open_book_langs,
    open_kinds,
    OpenWork,
    open_work,
    open_and_stranded,
    overview,
    pending_elsewhere,
    unserved_lanes,
    review_count,
    shown_state,
)
from pipeline_kit.engine.watchdog import Reclaimed, reclaim_expired

__all__ = [
    "Ack",
    "Ready",
    "init",
    "prepare",
    "Completion",
    "Decision",
    "EnqueueResult",
    "LaneCache",
    "Lease",
    "Outcome",
    "Overview",
    "Pace",
    "Rate",
    "covered_window",
    "Reclaimed",
    "RetryPolicy",
    "ReviewItem",
    "approve",
    "approve_many",
    "awaiting_review",
    "reject",
    "set_review",
    "Status",
    "TaskSpec",
    "add_lane",
    "cancel_task",
    "cancel_tasks",
    "set_dependencies",
    "claim",
    "complete",
    "complete_many",
    "dependency_outputs",
    "output_owner",
    "enqueue",
    "fail",
    "get_lane",
    "heartbeat",
    "heartbeat_many",
    "list_lanes",
    "OpenWork",
    "open_work",
    "open_and_stranded",
    "pause_with_alert",
    "overview",
    "pending_elsewhere",
    "unserved_lanes",
    "reclaim_expired",
    "record_cost",
    "record_remote_job",
    "register_worker",
    "release_many",
    "require_lanes",
    "reset_tasks",
    "review_count",
    "shown_state",
    "ReviewDecision",
    "last_decisions",
    "open_book_langs",
    "open_kinds",
    "recall_answer",
    "remember_answer",
    "retry",
    "retry_task",
    "RetryReport",
    "RetrySelection",
    "split_targets",
    "seed_default_lanes",
    "touch_worker",
    "update_lane",
]
