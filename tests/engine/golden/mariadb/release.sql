-- released_1
UPDATE tasks
    SET status=%(status)s, lease_expires_at=%(lease_expires_at)s, stage=%(stage)s, retry_base=(tasks.retry_base + %(retry_base_1)s),
    run_after=UTC_TIMESTAMP(6)
    WHERE tasks.task_id = %(task_id_1)s
    AND tasks.lease_token = %(lease_token_1)s
    AND tasks.status = %(status_1)s;

-- released_2
UPDATE attempts
    SET finished_at=UTC_TIMESTAMP(6),
    outcome=%(outcome)s, error_kind=%(error_kind)s, error=%(error)s
    WHERE attempts.task_id = %(task_id_1)s
    AND attempts.lease_token = %(lease_token_1)s;
