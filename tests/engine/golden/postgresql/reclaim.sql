-- expired_1
SELECT tasks.task_id, tasks.lease_token, tasks.worker_id, tasks.attempts, tasks.retry_base, tasks.max_attempts, lanes.on_expire
    FROM tasks
    JOIN lanes
    ON lanes.lane = tasks.lane
    WHERE tasks.status = %(status_1)s::VARCHAR
    AND tasks.lease_expires_at < (clock_timestamp() AT TIME ZONE 'UTC')
    ORDER BY tasks.lease_expires_at
    LIMIT %(param_1)s::INTEGER
    FOR UPDATE OF tasks SKIP LOCKED;

-- expired_2
UPDATE tasks
    SET status=%(status)s::VARCHAR, lease_expires_at=%(lease_expires_at)s::TIMESTAMP WITHOUT TIME ZONE, stage=%(stage)s::VARCHAR, run_after=(clock_timestamp() AT TIME ZONE 'UTC'),
    last_error=%(last_error)s::VARCHAR
    WHERE tasks.task_id = %(task_id_1)s::VARCHAR
    AND tasks.lease_token = %(lease_token_1)s::VARCHAR
    AND tasks.status = %(status_1)s::VARCHAR;

-- expired_3
UPDATE attempts
    SET finished_at=(clock_timestamp() AT TIME ZONE 'UTC'),
    outcome=%(outcome)s::VARCHAR, error_kind=%(error_kind)s::VARCHAR, error=%(error)s::VARCHAR
    WHERE attempts.task_id = %(task_id_1)s::VARCHAR
    AND attempts.lease_token = %(lease_token_1)s::VARCHAR
    AND attempts.outcome IS NULL;

-- expired_4
select nextval('events_id_seq');

-- expired_5
INSERT INTO events (id, at, kind, task_id, worker_id, lease_token, detail)
    VALUES (%(id)s::BIGINT, (clock_timestamp() AT TIME ZONE 'UTC'), %(kind)s::VARCHAR, %(task_id)s::VARCHAR, %(worker_id)s::VARCHAR, %(lease_token)s::VARCHAR, %(detail)s::JSON);
