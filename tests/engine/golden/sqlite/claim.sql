-- claim
UPDATE tasks
    SET status = 'processing',
    worker_id = :worker_id,
    lease_token = :token,
    lease_expires_at = strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.3f seconds', :lease_s)),
    heartbeat_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
    stage = 'claimed',
    progress = NULL,
    attempts = attempts + 1
    WHERE id IN (SELECT id
        FROM tasks INDEXED BY ix_tasks_eligible
        WHERE status = 'pending'
        AND deps_remaining = 0
        AND run_after <= strftime('%Y-%m-%d %H:%M:%f', 'now')
        AND lane IN (:lanes_0, :lanes_1)
        AND (bookcode IS NULL OR bookcode NOT IN (:spent_0, :spent_1))
        AND kind NOT IN (:skip_0, :skip_1)
        AND NOT EXISTS (SELECT 1
            FROM lanes
            WHERE lane IN (:lanes_0, :lanes_1)
            AND (paused OR max_running IS NOT NULL))
        ORDER BY priority DESC, id
        LIMIT 10)
    RETURNING id, task_id, bookcode, shot_id, kind, lane, priority, params, attempts, generation, lease_token, lease_expires_at;

-- open
INSERT INTO attempts (task_id, attempt_no, worker_id, lease_token, claimed_at)
    SELECT task_id, attempts, worker_id, lease_token, strftime('%Y-%m-%d %H:%M:%f', 'now')
    FROM tasks
    WHERE task_id IN (:ids_0, :ids_1)
    AND lease_token = :token;

-- lock_lane
SELECT max_running, paused
    FROM lanes
    WHERE lane = :lane;

-- lane_settings
SELECT lane, max_running, paused, paid
    FROM lanes
    WHERE lane IN (:lanes_0, :lanes_1);

-- running
SELECT COUNT(*)
    FROM tasks
    WHERE status = 'processing'
    AND lane = :lane;

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
    WHERE task_id IN (:ids_0, :ids_1)
    AND remote_job_id IS NOT NULL
    ORDER BY attempt_no;
