-- The engine's SQL on SQLite, the embedded default: every statement the state machine runs.
--
-- :name is a parameter; `IN :name` takes a list (written out as one placeholder per item); a
-- line ending in `-- when OPTION` is sent only with that option; `LIMIT :limit` is written as a
-- number. Timestamps are text, 'YYYY-MM-DD HH:MM:SS.SSS' in UTC, compared as strings. Every
-- transaction begins IMMEDIATE, so it holds the only write lock from its first statement: FOR
-- UPDATE has no place here. See db/statements.py and db/dialects/sqlite.py.


-- ---------------------------------------------------------------------------------------------
-- Claim: up to :limit eligible tasks of the lanes, highest priority then oldest first, each
-- marked processing under one new token with an expiry from the database clock.

-- name: claim
-- INDEXED BY pins the partial index: a stale ANALYZE cannot turn the claim into a table scan.
UPDATE tasks
SET status = 'processing', worker_id = :worker_id, lease_token = :token,
    lease_expires_at = strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.3f seconds', :lease_s)),
    heartbeat_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
    stage = 'claimed', progress = NULL, attempts = attempts + 1
WHERE id IN (
    SELECT id FROM tasks INDEXED BY ix_tasks_eligible
    WHERE status = 'pending' AND deps_remaining = 0
      AND run_after <= strftime('%Y-%m-%d %H:%M:%f', 'now')
      AND lane IN :lanes
      AND (bookcode IS NULL OR bookcode NOT IN :spent)  -- when spent
      AND kind NOT IN :skip  -- when skip
      AND NOT EXISTS (SELECT 1 FROM lanes WHERE lane IN :lanes AND (paused OR max_running IS NOT NULL))  -- when free
    ORDER BY priority DESC, id
    LIMIT :limit)
RETURNING id, task_id, bookcode, shot_id, kind, lane, priority, params, attempts, generation,
    lease_token, lease_expires_at;

-- name: open_attempts
-- One attempt row for each claimed task, found by the rows' ids (the table's own key).
INSERT INTO attempts (task_id, attempt_no, worker_id, lease_token, claimed_at)
SELECT task_id, attempts, worker_id, lease_token, strftime('%Y-%m-%d %H:%M:%f', 'now') FROM tasks
WHERE id IN :ids AND lease_token = :token;

-- name: lock_lane
-- A limited lane's settings: the IMMEDIATE transaction already is the lock.
SELECT max_running, paused FROM lanes WHERE lane = :lane;

-- name: lane_settings
SELECT lane, max_running, paused, paid FROM lanes WHERE lane IN :lanes;

-- name: running
SELECT COUNT(*) FROM tasks WHERE status = 'processing' AND lane = :lane;

-- name: spent_books
-- Books whose attempts (lost and fenced ones too) cost their budget.
SELECT bookcode FROM books
WHERE budget IS NOT NULL
  AND budget <= (SELECT COALESCE(SUM(a.cost), 0.0) FROM attempts a JOIN tasks t ON t.task_id = a.task_id
                 WHERE t.bookcode = books.bookcode);

-- name: remote_jobs
-- The remote jobs earlier attempts of re-claimed tasks left to resume.
SELECT task_id, remote_job_id FROM attempts
WHERE task_id IN :ids AND remote_job_id IS NOT NULL
ORDER BY attempt_no;


-- ---------------------------------------------------------------------------------------------
-- Completion: accept what the caller still holds under :token.

-- name: accept
-- Mark each task completed (awaiting_review in a reviewed lane of a book that reviews) and book
-- its cost (every attempt's, this one's as now reported); return the accepted ids and whether
-- anything waits on each (only then are dependents counted off).
UPDATE tasks
SET status = CASE WHEN lane IN ('image') AND bookcode IN (SELECT bookcode FROM books WHERE review)
                  THEN 'awaiting_review' ELSE 'completed' END,
    result = :result, output_path = :path, finished_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
    lease_expires_at = NULL, stage = 'done', progress = 1.0, last_error = NULL,
    cost = (SELECT COALESCE(SUM(CASE WHEN a.lease_token = :token THEN COALESCE(CAST(:cost AS REAL), a.cost)
                                     ELSE a.cost END), 0.0)
            FROM attempts a WHERE a.task_id = tasks.task_id)
WHERE task_id IN :ids AND lease_token = :token AND status = 'processing'
RETURNING task_id, status = 'completed' AND EXISTS (SELECT 1 FROM task_deps WHERE depends_on = tasks.task_id)
    AS waited_on;

-- name: close
-- The accepted tasks' attempts closed as completed, naming the blobs their output is made of.
UPDATE attempts
SET outcome = 'completed', finished_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
    cost = COALESCE(CAST(:cost AS REAL), cost), output_bytes = COALESCE(:bytes, output_bytes),
    model = COALESCE(:model, model), settings = COALESCE(:settings, settings),
    output_blobs = COALESCE(:blobs, output_blobs)
WHERE task_id IN :ids AND lease_token = :token AND outcome IS NULL;

-- name: count_off
-- Each dependent loses one per dependency completed now (a review-held one does not count yet).
UPDATE tasks
SET deps_remaining = deps_remaining - (
    SELECT COUNT(*) FROM task_deps d JOIN tasks s ON s.task_id = d.depends_on
    WHERE d.task_id = tasks.task_id AND d.depends_on IN :ids AND s.status = 'completed')
WHERE task_id IN (SELECT task_id FROM task_deps WHERE depends_on IN :ids);


-- ---------------------------------------------------------------------------------------------
-- A lease holder's writes, each guarded by (task_id, token).

-- name: heartbeat
-- Extend one lease (a week at most) and note its stage and progress.
UPDATE tasks
SET lease_expires_at = strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.3f seconds', MIN(:lease_s, 604800.0))),
    heartbeat_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
    stage = COALESCE(:stage, stage), progress = COALESCE(:progress, progress)
WHERE task_id = :task_id AND lease_token = :token AND status = 'processing';

-- name: note_attempt
-- What a worker notes on its attempt: a call's cost (kept, with :keep_cost, if already booked),
-- the model, a remote job id.
UPDATE attempts
SET cost = CASE WHEN :keep_cost AND cost IS NOT NULL THEN cost ELSE COALESCE(:cost, cost) END,
    model = COALESCE(:model, model), remote_job_id = COALESCE(:remote_job_id, remote_job_id)
WHERE task_id = :task_id AND lease_token = :token;

-- name: fail_task
-- A failed attempt: back to pending after :delay_s (a day at most), or failed for good.
UPDATE tasks
SET last_error = :last_error, lease_expires_at = NULL, stage = NULL,
    status = CASE WHEN :retry THEN 'pending' ELSE 'failed' END,
    run_after = CASE WHEN :retry
                     THEN strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.3f seconds', MIN(:delay_s, 86400.0)))
                     ELSE run_after END,
    finished_at = CASE WHEN :retry THEN finished_at ELSE strftime('%Y-%m-%d %H:%M:%f', 'now') END
WHERE task_id = :task_id AND lease_token = :token AND status = 'processing';

-- name: fail_attempt
UPDATE attempts
SET outcome = CASE WHEN :retry THEN 'retried' ELSE 'failed' END,
    finished_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
    error_kind = :error_kind, error = :error, cost = COALESCE(:cost, cost)
WHERE task_id = :task_id AND lease_token = :token;

-- name: book_cost
-- A task's cost is the sum of its attempts' (paid calls of lost attempts included).
UPDATE tasks SET cost = (SELECT COALESCE(SUM(a.cost), 0.0) FROM attempts a WHERE a.task_id = tasks.task_id)
WHERE task_id = :task_id;

-- name: release_task
-- A lease given back through no fault of the task: claimable at once, no attempt used.
UPDATE tasks
SET status = 'pending', lease_expires_at = NULL, stage = NULL,
    run_after = strftime('%Y-%m-%d %H:%M:%f', 'now'), retry_base = retry_base + 1
WHERE task_id = :task_id AND lease_token = :token AND status = 'processing';

-- name: release_attempt
UPDATE attempts
SET outcome = 'canceled', finished_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
    error_kind = 'released', error = :error
WHERE task_id = :task_id AND lease_token = :token;


-- ---------------------------------------------------------------------------------------------
-- Reclaim: expired leases, each guarded by its expired token (racing watchdogs reclaim once).

-- name: expired
SELECT t.task_id, t.lease_token, t.worker_id, t.attempts, t.retry_base, t.max_attempts, l.on_expire
FROM tasks t JOIN lanes l ON l.lane = t.lane
WHERE t.status = 'processing' AND t.lease_expires_at < strftime('%Y-%m-%d %H:%M:%f', 'now')
ORDER BY t.lease_expires_at
LIMIT :limit;

-- name: reclaim_task
-- Back to pending, or failed (:give_up) when its lane fails on expiry or it was the last attempt.
UPDATE tasks
SET status = CASE WHEN :give_up THEN 'failed' ELSE 'pending' END,
    lease_expires_at = NULL, stage = NULL,
    last_error = 'lease expired (held by ' || COALESCE(:r_worker, 'None') || ')',
    finished_at = CASE WHEN :give_up THEN strftime('%Y-%m-%d %H:%M:%f', 'now') ELSE finished_at END,
    run_after = CASE WHEN :give_up THEN run_after ELSE strftime('%Y-%m-%d %H:%M:%f', 'now') END
WHERE task_id = :r_task AND lease_token = :r_token AND status = 'processing';

-- name: reclaim_attempt
UPDATE attempts
SET outcome = 'lost', finished_at = strftime('%Y-%m-%d %H:%M:%f', 'now'), error_kind = 'lease_expired',
    error = 'lease expired before the worker finished'
WHERE task_id = :r_task AND lease_token = :r_token AND outcome IS NULL;

-- name: reclaim_event
INSERT INTO events (at, kind, task_id, worker_id, lease_token, detail)
VALUES (strftime('%Y-%m-%d %H:%M:%f', 'now'), 'reclaim', :r_task, :r_worker, :r_token,
        json_object('by', :by, 'status', CASE WHEN :give_up THEN 'failed' ELSE 'pending' END));

-- name: reclaim_alert
INSERT INTO events (at, kind, task_id, worker_id, detail)
SELECT strftime('%Y-%m-%d %H:%M:%f', 'now'), 'alert', :r_task, :r_worker,
       json_object('message', 'lease expired: ' ||
           CASE WHEN :r_on_expire = 'fail' THEN 'lane fails on expiry'
                ELSE 'lease lost on the last of ' || :r_max || ' attempts' END)
WHERE :give_up;


-- ---------------------------------------------------------------------------------------------
-- Events.

-- name: event
INSERT INTO events (at, kind, task_id, worker_id, lease_token, detail)
VALUES (strftime('%Y-%m-%d %H:%M:%f', 'now'), :kind, :task_id, :worker_id, :token, :detail);


-- ---------------------------------------------------------------------------------------------
-- Operator and reviewer verbs (engine/operator.py, engine/review.py, engine/dependents.py):
-- each moves tasks only from the states its row in engine/states.py MOVES allows.

-- name: revoke_attempts
-- The open attempts of running tasks closed as canceled (before their tokens are cleared, which
-- fences their workers).
UPDATE attempts
SET outcome = 'canceled', finished_at = strftime('%Y-%m-%d %H:%M:%f', 'now'), error_kind = 'revoked'
WHERE task_id IN :ids AND outcome IS NULL
  AND EXISTS (SELECT 1 FROM tasks t WHERE t.task_id = attempts.task_id AND t.lease_token = attempts.lease_token
              AND t.status = 'processing');

-- name: revoke_tokens
UPDATE tasks SET lease_token = NULL WHERE task_id IN :ids AND status = 'processing';

-- name: retry
-- Failed or canceled tasks back to pending with a fresh attempt budget (their attempts stay).
UPDATE tasks
SET status = 'pending', retry_base = attempts, run_after = strftime('%Y-%m-%d %H:%M:%f', 'now'), finished_at = NULL, worker_id = NULL
WHERE task_id IN :ids AND status IN ('failed', 'canceled');

-- name: cancel
-- Unfinished tasks stopped for good (a running one's lease revoked first).
UPDATE tasks
SET status = 'canceled', lease_expires_at = NULL, finished_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
WHERE task_id IN :ids AND status NOT IN ('completed', 'canceled');

-- name: reset
-- Tasks back to pending for a re-run: a new generation, nothing stale kept to pass for new.
UPDATE tasks
SET status = 'pending', retry_base = attempts, run_after = strftime('%Y-%m-%d %H:%M:%f', 'now'), generation = generation + 1,
    result = NULL, output_path = NULL, finished_at = NULL, lease_expires_at = NULL, stage = NULL,
    progress = NULL, last_error = NULL
WHERE task_id IN :ids;

-- name: approve
-- Reviewed outputs accepted: completed (their dependents are counted off by `count_off`).
UPDATE tasks SET status = 'completed' WHERE task_id IN :ids AND status = 'awaiting_review';

-- name: unblock
-- A blocked task whose required dependencies are all alive again.
UPDATE tasks SET status = 'pending' WHERE task_id = :task_id AND status = 'blocked';

-- name: newly_blocked
-- Of the tasks a death blocks, the ones still waiting (blocked now, not before).
SELECT task_id FROM tasks WHERE task_id IN :waiting AND status = 'pending';

-- name: block
UPDATE tasks SET status = 'blocked' WHERE task_id IN :newly AND status = 'pending';


-- ---------------------------------------------------------------------------------------------
-- Provider votes and the chat answer cache.

-- name: vote_renew
-- A worker's vote that a provider is down (engine/outages.py): a live vote keeps its start.
UPDATE provider_outages
SET since = CASE WHEN until > strftime('%Y-%m-%d %H:%M:%f', 'now') THEN since
                 ELSE strftime('%Y-%m-%d %H:%M:%f', 'now') END,
    until = strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.3f seconds', MIN(:hold_s, 86400.0))),
    reason = COALESCE(:reason, reason)
WHERE provider = :provider AND worker_id = :worker_id;

-- name: vote_new
INSERT INTO provider_outages (provider, worker_id, since, until, reason)
VALUES (:provider, :worker_id, strftime('%Y-%m-%d %H:%M:%f', 'now'),
        strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.3f seconds', MIN(:hold_s, 86400.0))), :reason);

-- name: answer
-- A model's answer kept by its key; a second writer of the same key changes nothing.
INSERT INTO llm_answers (key, model, answer, tokens_in, tokens_out, cost, created_at)
VALUES (:key, :model, :answer, :tokens_in, :tokens_out, :cost, strftime('%Y-%m-%d %H:%M:%f', 'now'))
ON CONFLICT DO NOTHING;


-- ---------------------------------------------------------------------------------------------
-- The database store's blobs.

-- name: chunk
-- One chunk of a blob (one another writer stored first is left as it is: a blob is never replaced).
INSERT INTO store_chunks (sha256, seq, data) VALUES (:sha256, :seq, :data) ON CONFLICT DO NOTHING;

-- name: blob
-- The blob's row, once its chunks are in (left as it is if another writer stored it first).
INSERT INTO store_blobs (sha256, size, chunks, stored_at)
VALUES (:sha256, :size, :chunks, strftime('%Y-%m-%d %H:%M:%f', 'now')) ON CONFLICT DO NOTHING;

-- name: blob_seen
-- A publish found the blob stored: stamped, so a sweep that saw it unnamed before leaves it.
UPDATE store_blobs SET stored_at = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE sha256 = :sha256;


-- ---------------------------------------------------------------------------------------------
-- What `store gc` keeps (engine/queries.py), read from the rows that can own outputs or marks
-- only (a made task's row: `output_path` set, the index ix_tasks_output).

-- name: named_checksums
-- Every checksum something names, space-separated within a row: a made task's output and side
-- files, and each task's latest completed attempt's (its output, even if the task row was
-- rewritten since).
SELECT json_extract(result, '$.sha256') AS names FROM tasks
WHERE output_path IS NOT NULL AND json_type(result, '$.sha256') = 'text'
UNION
SELECT s.value FROM tasks, json_each(tasks.result, '$.sides') AS s
WHERE tasks.output_path IS NOT NULL AND json_type(tasks.result, '$.sides') = 'object' AND s.type = 'text'
UNION
SELECT a.output_blobs FROM attempts a
WHERE a.output_blobs IS NOT NULL AND a.outcome = 'completed'
  AND a.attempt_no = (SELECT MAX(b.attempt_no) FROM attempts b
                      WHERE b.task_id = a.task_id AND b.outcome = 'completed' AND b.output_blobs IS NOT NULL);

-- name: recorded_marks
-- Which of these staged marks a made task's completion records (its reveal may be unfinished).
SELECT DISTINCT json_extract(result, '$.staged') AS mark FROM tasks
WHERE output_path IS NOT NULL AND json_extract(result, '$.staged') IN :marks;

-- name: running_for
-- How long (seconds, by the database's clock) the oldest attempt still running has run: every
-- blob stored or found stored since may be the output its completion will name (NULL: none runs).
SELECT (julianday('now') - julianday(MIN(a.claimed_at))) * 86400.0 AS age_s
FROM tasks t JOIN attempts a ON a.task_id = t.task_id AND a.lease_token = t.lease_token
WHERE t.status = 'processing' AND a.outcome IS NULL;
