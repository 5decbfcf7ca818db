-- accept
UPDATE tasks
    SET status = CASE
    WHEN lane IN ('image')
    AND bookcode IN (SELECT bookcode
        FROM books
        WHERE review) THEN 'awaiting_review'
    ELSE 'completed' END,
    result = :result,
    output_path = :path,
    finished_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
    lease_expires_at = NULL,
    stage = 'done',
    progress = 1.0,
    last_error = NULL,
    cost = (SELECT COALESCE(SUM(CASE
                WHEN a.lease_token = :token THEN COALESCE(CAST(:cost AS REAL), a.cost)
                ELSE a.cost END), 0.0)
        FROM attempts a
        WHERE a.task_id = tasks.task_id)
    WHERE task_id IN (:ids_0, :ids_1)
    AND lease_token = :token
    AND status = 'processing'
    RETURNING task_id,
    status = 'completed'
    AND EXISTS (SELECT 1
        FROM task_deps
        WHERE depends_on = tasks.task_id) AS waited_on;

-- close
UPDATE attempts
    SET outcome = 'completed',
    finished_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
    cost = COALESCE(CAST(:cost AS REAL), cost),
    output_bytes = COALESCE(:bytes, output_bytes),
    model = COALESCE(:model, model),
    settings = COALESCE(:settings, settings)
    WHERE task_id IN (:ids_0, :ids_1)
    AND lease_token = :token
    AND outcome IS NULL;

-- count_off
UPDATE tasks
    SET deps_remaining = deps_remaining - (SELECT COUNT(*)
        FROM task_deps d
        JOIN tasks s
        ON s.task_id = d.depends_on
        WHERE d.task_id = tasks.task_id
        AND d.depends_on IN (:ids_0, :ids_1)
        AND s.status = 'completed')
    WHERE task_id IN (SELECT task_id
        FROM task_deps
        WHERE depends_on IN (:ids_0, :ids_1));
