-- finish
WITH done AS (UPDATE tasks
        SET status = CASE
        WHEN lane IN ('image')
        AND bookcode IN (SELECT bookcode
            FROM books
            WHERE review) THEN 'awaiting_review'
        ELSE 'completed' END,
        result = %(result)s,
        output_path = %(path)s,
        finished_at = (clock_timestamp() AT TIME ZONE 'UTC'),
        lease_expires_at = NULL,
        stage = 'done',
        progress = 1.0,
        last_error = NULL,
        cost = (SELECT COALESCE(SUM(CASE
                    WHEN a.lease_token = %(token)s THEN COALESCE(CAST(%(cost)s AS DOUBLE PRECISION), a.cost)
                    ELSE a.cost END), 0.0)
            FROM attempts a
            WHERE a.task_id = tasks.task_id)
        WHERE task_id = ANY(%(ids)s)
        AND lease_token = %(token)s
        AND status = 'processing'
        RETURNING task_id, status),
    closed AS (UPDATE attempts
        SET outcome = 'completed',
        finished_at = (clock_timestamp() AT TIME ZONE 'UTC'),
        cost = COALESCE(CAST(%(cost)s AS DOUBLE PRECISION), attempts.cost),
        output_bytes = COALESCE(%(bytes)s, attempts.output_bytes),
        model = COALESCE(%(model)s, attempts.model),
        settings = COALESCE(%(settings)s, attempts.settings)
        FROM done
        WHERE attempts.task_id = done.task_id
        AND attempts.lease_token = %(token)s
        AND attempts.outcome IS NULL),
    counted AS (UPDATE tasks
        SET deps_remaining = tasks.deps_remaining - w.n
        FROM (SELECT d.task_id, COUNT(*) AS n
            FROM task_deps d
            JOIN done
            ON done.task_id = d.depends_on
            WHERE done.status = 'completed'
            GROUP BY d.task_id) AS w
        WHERE tasks.task_id = w.task_id)
    SELECT task_id
    FROM done;

-- count_off
UPDATE tasks
    SET deps_remaining = deps_remaining - (SELECT COUNT(*)
        FROM task_deps d
        JOIN tasks s
        ON s.task_id = d.depends_on
        WHERE d.task_id = tasks.task_id
        AND d.depends_on = ANY(%(ids)s)
        AND s.status = 'completed')
    WHERE task_id IN (SELECT task_id
        FROM task_deps
        WHERE depends_on = ANY(%(ids)s));
