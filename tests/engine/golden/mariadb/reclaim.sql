-- expired_1
SELECT tasks.task_id, tasks.lease_token, tasks.worker_id, tasks.attempts, tasks.retry_base, tasks.max_attempts, lanes.on_expire
    FROM tasks
    INNER JOIN lanes
    ON lanes.lane = tasks.lane
    WHERE tasks.status = %(status_1)s
    AND tasks.lease_expires_at < UTC_TIMESTAMP(6)
    ORDER BY tasks.lease_expires_at
    LIMIT %(param_1)s
    FOR UPDATE SKIP LOCKED;

-- expired_2
UPDATE tasks
    SET status=%(status)s, lease_expires_at=%(lease_expires_at)s, stage=%(stage)s, run_after=UTC_TIMESTAMP(6),
    last_error=%(last_error)s
    WHERE tasks.task_id = %(task_id_1)s
    AND tasks.lease_token = %(lease_token_1)s
    AND tasks.status = %(status_1)s;

-- expired_3
UPDATE attempts
    SET finished_at=UTC_TIMESTAMP(6),
    outcome=%(outcome)s, error_kind=%(error_kind)s, error=%(error)s
    WHERE attempts.task_id = %(task_id_1)s
    AND attempts.lease_token = %(lease_token_1)s
    AND attempts.outcome IS NULL;

-- expired_4
INSERT INTO events (at, kind, task_id, worker_id, lease_token, detail)
    VALUES (UTC_TIMESTAMP(6), %(kind)s, %(task_id)s, %(worker_id)s, %(lease_token)s, %(detail)s);
