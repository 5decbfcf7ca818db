"""Every error the package raises on purpose, rooted in one base class.

The CLI maps `BadInput` to exit 2 and any other `PipelineKitError` to exit 1, each as one line
on stderr.
"""

from __future__ import annotations


class PipelineKitError(Exception):
    """Base of the package's own errors; the message is one line an operator can act on."""

    exit_code = 1


class BadInput(PipelineKitError):
    """The caller asked for something invalid (usage, unknown name, malformed value)."""

    exit_code = 2


class NotInitialised(BadInput):
    """The database has no pipeline_kit schema yet."""


class SchemaTooNew(PipelineKitError):
    """The database was made by a newer pipeline_kit than this one."""


class DatabaseUnavailable(PipelineKitError):
    """The database could not be reached after the connection retries."""


class PermissionDenied(BadInput):
    """The database account may not do this (a worker account running an owner's command)."""


class LeaseLost(PipelineKitError):
    """A write made under a lease the caller no longer holds was refused: its task was taken
    over (or revoked), so the work is fenced, not failed."""


class StoreUnavailable(PipelineKitError):
    """The output store (a folder, the database, S3) cannot be reached or written just now."""


class NotFound(BadInput):
    """A named task, book, shot or lane does not exist."""


class GenerationError(PipelineKitError):
    """A backend call failed; `retryable` says whether the task should be tried again.

    `error_kind` is a short machine word (timeout, rate_limited, server_error, bad_request,
    unknown_model, bad_output, ...) stored on the attempt; `retry_after` is the server's own
    wait hint in seconds, when it gave one; `cost` is money already spent by the failed call
    (a paid image that came back the wrong size still cost); `turned_away` says the provider
    never took the call (unreachable, or a 429/503 before any work), so it costs the task no attempt.
    """

    def __init__(
        self,
        message: str,
        *,
        error_kind: str,
        retryable: bool,
        retry_after: float | None = None,
        cost: float = 0.0,
        turned_away: bool = False,
    ) -> None:
        super().__init__(message)
        self.error_kind = error_kind
        self.retryable = retryable
        self.retry_after = retry_after
        self.cost = cost
        self.turned_away = turned_away
