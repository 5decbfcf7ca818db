-- retried_1
SELECT tasks.lease_token, tasks.status, tasks.attempts, tasks.retry_base, tasks.max_attempts
    FROM tasks
    WHERE tasks.task_id = %(task_id_1)s::VARCHAR
    FOR UPDATE;

-- retried_2
UPDATE attempts
    SET finished_at=(clock_timestamp() AT TIME ZONE 'UTC'),
    outcome=%(outcome)s::VARCHAR, error_kind=%(error_kind)s::VARCHAR, error=%(error)s::VARCHAR, cost=attempts.cost
    WHERE attempts.task_id = %(task_id_1)s::VARCHAR
    AND attempts.lease_token = %(lease_token_1)s::VARCHAR;

-- retried_3
UPDATE tasks
    SET status=%(status)s::VARCHAR, lease_expires_at=%(lease_expires_at)s::TIMESTAMP WITHOUT TIME ZONE, stage=%(stage)s::VARCHAR, run_after=((clock_timestamp() AT TIME ZONE 'UTC') + make_interval(secs => %(param_1)s)),
    cost=(SELECT coalesce(sum(attempts.cost), %(coalesce_2)s) AS coalesce_1
        FROM attempts
        WHERE attempts.task_id = tasks.task_id),
    last_error=%(last_error)s::VARCHAR
    WHERE tasks.task_id = %(task_id_1)s::VARCHAR;
