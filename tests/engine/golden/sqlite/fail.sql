-- retried_1
BEGIN IMMEDIATE;

-- retried_2
SELECT tasks.lease_token, tasks.status, tasks.attempts, tasks.retry_base, tasks.max_attempts
    FROM tasks
    WHERE tasks.task_id = ?;

-- retried_3
UPDATE attempts
    SET finished_at=strftime('%Y-%m-%d %H:%M:%f', 'now'),
    outcome=?, error_kind=?, error=?, cost=attempts.cost
    WHERE attempts.task_id = ?
    AND attempts.lease_token = ?;

-- retried_4
UPDATE tasks
    SET status=?, lease_expires_at=?, stage=?, run_after=strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.3f seconds', ?)),
    cost=(SELECT coalesce(sum(attempts.cost), ?) AS coalesce_1
        FROM attempts
        WHERE attempts.task_id = tasks.task_id),
    last_error=?
    WHERE tasks.task_id = ?;
