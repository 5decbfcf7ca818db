-- released_1
UPDATE tasks
    SET status=%(status)s::VARCHAR, lease_expires_at=%(lease_expires_at)s::TIMESTAMP WITHOUT TIME ZONE, stage=%(stage)s::VARCHAR, retry_base=(tasks.retry_base + %(retry_base_1)s::INTEGER),
    run_after=(clock_timestamp() AT TIME ZONE 'UTC')
    WHERE tasks.task_id = %(task_id_1)s::VARCHAR
    AND tasks.lease_token = %(lease_token_1)s::VARCHAR
    AND tasks.status = %(status_1)s::VARCHAR;

-- released_2
UPDATE attempts
    SET finished_at=(clock_timestamp() AT TIME ZONE 'UTC'),
    outcome=%(outcome)s::VARCHAR, error_kind=%(error_kind)s::VARCHAR, error=%(error)s::VARCHAR
    WHERE attempts.task_id = %(task_id_1)s::VARCHAR
    AND attempts.lease_token = %(lease_token_1)s::VARCHAR;
