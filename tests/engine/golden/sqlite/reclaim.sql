-- expired_1
BEGIN IMMEDIATE;

-- expired_2
SELECT tasks.task_id, tasks.lease_token, tasks.worker_id, tasks.attempts, tasks.retry_base, tasks.max_attempts, lanes.on_expire
    FROM tasks
    JOIN lanes
    ON lanes.lane = tasks.lane
    WHERE tasks.status = ?
    AND tasks.lease_expires_at < strftime('%Y-%m-%d %H:%M:%f', 'now')
    ORDER BY tasks.lease_expires_at
    LIMIT ? OFFSET ?;

-- expired_3
UPDATE tasks
    SET status=?, lease_expires_at=?, stage=?, run_after=strftime('%Y-%m-%d %H:%M:%f', 'now'),
    last_error=?
    WHERE tasks.task_id = ?
    AND tasks.lease_token = ?
    AND tasks.status = ?;

-- expired_4
UPDATE attempts
    SET finished_at=strftime('%Y-%m-%d %H:%M:%f', 'now'),
    outcome=?, error_kind=?, error=?
    WHERE attempts.task_id = ?
    AND attempts.lease_token = ?
    AND attempts.outcome IS NULL;

-- expired_5
INSERT INTO events (at, kind, task_id, worker_id, lease_token, detail)
    VALUES (strftime('%Y-%m-%d %H:%M:%f', 'now'), ?, ?, ?, ?, ?);
