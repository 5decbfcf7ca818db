-- retried_1
SELECT tasks.lease_token, tasks.status, tasks.attempts, tasks.retry_base, tasks.max_attempts
    FROM tasks
    WHERE tasks.task_id = %(task_id_1)s
    FOR UPDATE;

-- retried_2
UPDATE attempts
    SET finished_at=UTC_TIMESTAMP(6),
    outcome=%(outcome)s, error_kind=%(error_kind)s, error=%(error)s, cost=attempts.cost
    WHERE attempts.task_id = %(task_id_1)s
    AND attempts.lease_token = %(lease_token_1)s;

-- retried_3
UPDATE tasks
    SET status=%(status)s, lease_expires_at=%(lease_expires_at)s, stage=%(stage)s, run_after=TIMESTAMPADD(MICROSECOND, CAST(ROUND(%(param_1)s * 1000000) AS SIGNED), UTC_TIMESTAMP(6)),
    cost=(SELECT coalesce(sum(attempts.cost), %(coalesce_2)s) AS coalesce_1
        FROM attempts
        WHERE attempts.task_id = tasks.task_id),
    last_error=%(last_error)s
    WHERE tasks.task_id = %(task_id_1)s;
