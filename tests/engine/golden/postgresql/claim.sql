-- claim
UPDATE tasks
    SET status = 'processing',
    worker_id = %(worker_id)s,
    lease_token = %(token)s,
    lease_expires_at = ((clock_timestamp() AT TIME ZONE 'UTC') + make_interval(secs => %(lease_s)s)),
    heartbeat_at = (clock_timestamp() AT TIME ZONE 'UTC'),
    stage = 'claimed',
    progress = NULL,
    attempts = attempts + 1
    FROM (SELECT id AS picked
        FROM tasks
        WHERE status = 'pending'
        AND deps_remaining = 0
        AND run_after <= (clock_timestamp() AT TIME ZONE 'UTC')
        AND lane = ANY(%(lanes)s)
        AND (bookcode IS NULL OR bookcode <> ALL(%(spent)s))
        AND kind <> ALL(%(skip)s)
        AND NOT EXISTS (SELECT 1
            FROM lanes
            WHERE lane = ANY(%(lanes)s)
            AND (paused OR max_running IS NOT NULL))
        ORDER BY priority DESC, id
        LIMIT 10
        FOR UPDATE SKIP LOCKED) AS c
    WHERE tasks.id = c.picked
    RETURNING id, task_id, bookcode, shot_id, kind, lane, priority, params, attempts, generation, lease_token, lease_expires_at;

-- claim_and_open
WITH claimed AS (UPDATE tasks
        SET status = 'processing',
        worker_id = %(worker_id)s,
        lease_token = %(token)s,
        lease_expires_at = ((clock_timestamp() AT TIME ZONE 'UTC') + make_interval(secs => %(lease_s)s)),
        heartbeat_at = (clock_timestamp() AT TIME ZONE 'UTC'),
        stage = 'claimed',
        progress = NULL,
        attempts = attempts + 1
        FROM (SELECT id AS picked
            FROM tasks
            WHERE status = 'pending'
            AND deps_remaining = 0
            AND run_after <= (clock_timestamp() AT TIME ZONE 'UTC')
            AND lane = ANY(%(lanes)s)
            AND (bookcode IS NULL OR bookcode <> ALL(%(spent)s))
            AND kind <> ALL(%(skip)s)
            AND NOT EXISTS (SELECT 1
                FROM lanes
                WHERE lane = ANY(%(lanes)s)
                AND (paused OR max_running IS NOT NULL))
            ORDER BY priority DESC, id
            LIMIT 10
            FOR UPDATE SKIP LOCKED) AS c
        WHERE tasks.id = c.picked
        RETURNING id, task_id, bookcode, shot_id, kind, lane, priority, params, attempts, generation, lease_token, lease_expires_at),
    opened AS (INSERT INTO attempts (task_id, attempt_no, worker_id, lease_token, claimed_at)
        SELECT task_id, attempts, %(worker_id)s, %(token)s, (clock_timestamp() AT TIME ZONE 'UTC')
        FROM claimed)
    SELECT id, task_id, bookcode, shot_id, kind, lane, priority, params, attempts, generation, lease_token, lease_expires_at
    FROM claimed;

-- lock_lane
WITH locked AS (SELECT pg_advisory_xact_lock(28779, hashtext(%(lane)s)))
    SELECT max_running, paused
    FROM lanes, locked
    WHERE lane = %(lane)s;

-- lane_settings
SELECT lane, max_running, paused, paid
    FROM lanes
    WHERE lane = ANY(%(lanes)s);

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
    WHERE task_id = ANY(%(ids)s)
    AND remote_job_id IS NOT NULL
    ORDER BY attempt_no;
