-- one_1
UPDATE tasks
    SET lease_expires_at=TIMESTAMPADD(MICROSECOND, CAST(ROUND(%(param_1)s * 1000000) AS SIGNED), UTC_TIMESTAMP(6)),
    heartbeat_at=UTC_TIMESTAMP(6),
    stage=%(stage)s
    WHERE tasks.task_id = %(task_id_1)s
    AND tasks.lease_token = %(lease_token_1)s
    AND tasks.status = %(status_1)s;

-- fenced_1
UPDATE tasks
    SET lease_expires_at=TIMESTAMPADD(MICROSECOND, CAST(ROUND(%(param_1)s * 1000000) AS SIGNED), UTC_TIMESTAMP(6)),
    heartbeat_at=UTC_TIMESTAMP(6)
    WHERE tasks.task_id = %(task_id_1)s
    AND tasks.lease_token = %(lease_token_1)s
    AND tasks.status = %(status_1)s;

-- fenced_2
INSERT INTO events (at, kind, task_id, worker_id, lease_token, detail)
    VALUES (UTC_TIMESTAMP(6), %(kind)s, %(task_id)s, %(worker_id)s, %(lease_token)s, %(detail)s);

-- many_1
UPDATE tasks
    SET lease_expires_at=TIMESTAMPADD(MICROSECOND, CAST(ROUND(%(param_1)s * 1000000) AS SIGNED), UTC_TIMESTAMP(6)),
    heartbeat_at=UTC_TIMESTAMP(6),
    stage=CASE tasks.task_id
    WHEN %(param_2)s THEN %(param_3)s
    ELSE tasks.stage END
    WHERE tasks.task_id IN (%(task_id_1_1)s)
    AND tasks.worker_id = %(worker_id_1)s
    AND tasks.status = %(status_1)s
    AND tasks.lease_token IN (%(lease_token_1_1)s);

-- many_2
SELECT tasks.task_id, tasks.lease_token, tasks.status
    FROM tasks
    WHERE tasks.task_id IN (%(task_id_1_1)s);

-- many_3
INSERT INTO events (at, kind, worker_id, detail)
    VALUES (UTC_TIMESTAMP(6), %(kind)s, %(worker_id)s, %(detail)s);
