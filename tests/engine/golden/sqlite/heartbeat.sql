-- one_1
BEGIN IMMEDIATE;

-- one_2
UPDATE tasks
    SET lease_expires_at=strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.3f seconds', ?)),
    heartbeat_at=strftime('%Y-%m-%d %H:%M:%f', 'now'),
    stage=?
    WHERE tasks.task_id = ?
    AND tasks.lease_token = ?
    AND tasks.status = ?;

-- fenced_1
BEGIN IMMEDIATE;

-- fenced_2
UPDATE tasks
    SET lease_expires_at=strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.3f seconds', ?)),
    heartbeat_at=strftime('%Y-%m-%d %H:%M:%f', 'now')
    WHERE tasks.task_id = ?
    AND tasks.lease_token = ?
    AND tasks.status = ?;

-- fenced_3
INSERT INTO events (at, kind, task_id, worker_id, lease_token, detail)
    VALUES (strftime('%Y-%m-%d %H:%M:%f', 'now'), ?, ?, ?, ?, ?);

-- many_1
BEGIN IMMEDIATE;

-- many_2
UPDATE tasks
    SET lease_expires_at=strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.3f seconds', ?)),
    heartbeat_at=strftime('%Y-%m-%d %H:%M:%f', 'now'),
    stage=CASE tasks.task_id
    WHEN ? THEN ?
    ELSE tasks.stage END
    WHERE tasks.task_id IN (?)
    AND tasks.worker_id = ?
    AND tasks.status = ?
    AND tasks.lease_token IN (?);

-- many_3
SELECT tasks.task_id, tasks.lease_token, tasks.status
    FROM tasks
    WHERE tasks.task_id IN (?);

-- many_4
INSERT INTO events (at, kind, worker_id, detail)
    VALUES (strftime('%Y-%m-%d %H:%M:%f', 'now'), ?, ?, ?);
