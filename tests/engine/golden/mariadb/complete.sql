-- accept
UPDATE tasks
    SET status = CASE
    WHEN lane IN ('image')
    AND bookcode IN (SELECT bookcode
        FROM books
        WHERE review) THEN 'awaiting_review'
    ELSE 'completed' END,
    result = %(result)s,
    output_path = %(path)s,
    finished_at = UTC_TIMESTAMP(6),
    lease_expires_at = NULL,
    stage = 'done',
    progress = 1.0,
    last_error = NULL,
    cost = (SELECT COALESCE(SUM(CASE
                WHEN a.lease_token = %(token)s THEN COALESCE(CAST(%(cost)s AS DOUBLE), a.cost)
                ELSE a.cost END), 0.0)
        FROM attempts a
        WHERE a.task_id = tasks.task_id)
    WHERE task_id IN %(ids)s
    AND lease_token = %(token)s
    AND status = 'processing';

-- close
UPDATE attempts
    SET outcome = 'completed',
    finished_at = UTC_TIMESTAMP(6),
    cost = COALESCE(CAST(%(cost)s AS DOUBLE), cost),
    output_bytes = COALESCE(%(bytes)s, output_bytes),
    model = COALESCE(%(model)s, model),
    settings = COALESCE(%(settings)s, settings)
    WHERE task_id IN %(ids)s
    AND lease_token = %(token)s
    AND outcome IS NULL;

-- count_off
UPDATE tasks
    SET deps_remaining = deps_remaining - (SELECT COUNT(*)
        FROM task_deps d
        JOIN tasks s
        ON s.task_id = d.depends_on
        WHERE d.task_id = tasks.task_id
        AND d.depends_on IN %(ids)s
        AND s.status = 'completed')
    WHERE task_id IN (SELECT task_id
        FROM task_deps
        WHERE depends_on IN %(ids)s);
