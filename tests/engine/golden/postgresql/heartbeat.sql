-- one_1
UPDATE tasks
    SET lease_expires_at=((clock_timestamp() AT TIME ZONE 'UTC') + make_interval(secs => %(param_1)s)),
    heartbeat_at=(clock_timestamp() AT TIME ZONE 'UTC'),
    stage=%(stage)s::VARCHAR
    WHERE tasks.task_id = %(task_id_1)s::VARCHAR
    AND tasks.lease_token = %(lease_token_1)s::VARCHAR
    AND tasks.status = %(status_1)s::VARCHAR;

-- fenced_1
UPDATE tasks
    SET lease_expires_at=((clock_timestamp() AT TIME ZONE 'UTC') + make_interval(secs => %(param_1)s)),
    heartbeat_at=(clock_timestamp() AT TIME ZONE 'UTC')
    WHERE tasks.task_id = %(task_id_1)s::VARCHAR
    AND tasks.lease_token = %(lease_token_1)s::VARCHAR
    AND tasks.status = %(status_1)s::VARCHAR;

-- fenced_2
select nextval('events_id_seq');

-- fenced_3
INSERT INTO events (id, at, kind, task_id, worker_id, lease_token, detail)
    VALUES (%(id)s::BIGINT, (clock_timestamp() AT TIME ZONE 'UTC'), %(kind)s::VARCHAR, %(task_id)s::VARCHAR, %(worker_id)s::VARCHAR, %(lease_token)s::VARCHAR, %(detail)s::JSON);

-- many_1
UPDATE tasks
    SET lease_expires_at=((clock_timestamp() AT TIME ZONE 'UTC') + make_interval(secs => %(param_1)s)),
    heartbeat_at=(clock_timestamp() AT TIME ZONE 'UTC'),
    stage=CASE tasks.task_id
    WHEN %(param_2)s::VARCHAR THEN %(param_3)s::VARCHAR
    ELSE tasks.stage END
    WHERE tasks.task_id IN (%(task_id_1_1)s::VARCHAR)
    AND tasks.worker_id = %(worker_id_1)s::VARCHAR
    AND tasks.status = %(status_1)s::VARCHAR
    AND tasks.lease_token IN (%(lease_token_1_1)s::VARCHAR);

-- many_2
SELECT tasks.task_id, tasks.lease_token, tasks.status
    FROM tasks
    WHERE tasks.task_id IN (%(task_id_1_1)s::VARCHAR);

-- many_3
select nextval('events_id_seq');

-- many_4
INSERT INTO events (id, at, kind, worker_id, detail)
    VALUES (%(id)s::BIGINT, (clock_timestamp() AT TIME ZONE 'UTC'), %(kind)s::VARCHAR, %(worker_id)s::VARCHAR, %(detail)s::JSON);
