-- lock
SELECT id
    FROM tasks
    WHERE status = 'pending'
    AND deps_remaining = 0
    AND run_after <= UTC_TIMESTAMP(6)
    AND lane IN %(lanes)s
    AND (bookcode IS NULL OR bookcode NOT IN %(spent)s)
    AND kind NOT IN %(skip)s
    AND NOT EXISTS (SELECT 1
        FROM lanes
        WHERE lane IN %(lanes)s
        AND (paused OR max_running IS NOT NULL))
    ORDER BY priority DESC, id
    LIMIT 10
    FOR UPDATE SKIP LOCKED;

-- update
UPDATE tasks
    SET status = 'processing',
    worker_id = %(worker_id)s,
    lease_token = %(token)s,
    lease_expires_at = TIMESTAMPADD(MICROSECOND, CAST(ROUND(%(lease_s)s * 1000000) AS SIGNED), UTC_TIMESTAMP(6)),
    heartbeat_at = UTC_TIMESTAMP(6),
    stage = 'claimed',
    progress = NULL,
    attempts = attempts + 1
    WHERE id IN %(ids)s;

-- read_back
SELECT id, task_id, bookcode, shot_id, kind, lane, priority, params, attempts, generation, lease_token, lease_expires_at
    FROM tasks
    WHERE id IN %(ids)s
    AND lease_token = %(token)s;

-- open
INSERT INTO attempts (task_id, attempt_no, worker_id, lease_token, claimed_at)
    SELECT task_id, attempts, worker_id, lease_token, UTC_TIMESTAMP(6)
    FROM tasks
    WHERE task_id IN %(ids)s
    AND lease_token = %(token)s;

-- lock_lane
SELECT max_running, paused
    FROM lanes
    WHERE lane = %(lane)s
    FOR UPDATE;

-- lane_settings
SELECT lane, max_running, paused, paid
    FROM lanes
    WHERE lane IN %(lanes)s;

-- running
SELECT COUNT(*)
    FROM tasks
    WHERE status = 'processing'
    AND lane = %(lane)s;

-- spent_books
SELECT bookcode
    FROM books
    WHERE budget IS NOT NULL
    AND budget <= (SELECT COALESCE(SUM(a.cost), 0.0)
        FROM attempts a
        JOIN tasks t
        ON t.task_id = a.task_id
        WHERE t.bookcode = books.bookcode);

-- remote_jobs
SELECT task_id, remote_job_id
    FROM attempts
    WHERE task_id IN %(ids)s
    AND remote_job_id IS NOT NULL
    ORDER BY attempt_no;
