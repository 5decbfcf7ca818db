-- released_1
BEGIN IMMEDIATE;

-- released_2
UPDATE tasks
    SET status=?, lease_expires_at=?, stage=?, retry_base=(tasks.retry_base + ?),
    run_after=strftime('%Y-%m-%d %H:%M:%f', 'now')
    WHERE tasks.task_id = ?
    AND tasks.lease_token = ?
    AND tasks.status = ?;

-- released_3
UPDATE attempts
    SET finished_at=strftime('%Y-%m-%d %H:%M:%f', 'now'),
    outcome=?, error_kind=?, error=?
    WHERE attempts.task_id = ?
    AND attempts.lease_token = ?;
