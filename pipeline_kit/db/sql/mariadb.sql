-- The engine's SQL on MariaDB (10.6 or newer, for SKIP LOCKED): every statement the state
-- machine and a worker account run.
--
-- :name is a parameter; `IN :name` takes a list (PyMySQL writes it out as (a, b, c)); a line
-- ending in `-- when OPTION` is sent only with that option; `LIMIT :limit` is written as a
-- number. The clock is UTC_TIMESTAMP(6) (DATETIME(6) columns). MariaDB has no UPDATE ...
-- RETURNING: a claim locks the ids, updates them and reads them back; a completion's row count
-- says whether all were accepted. Statements below the claim and the completion also make the
-- bodies of the worker account's procedures (db/routines.py), where :name is the parameter p_name.
-- See db/statements.py and db/dialects/mariadb.py.


-- ---------------------------------------------------------------------------------------------
-- Claim: up to :limit eligible tasks of the lanes, highest priority then oldest first, each
-- marked processing under one new token with an expiry from the database clock.

-- name: lock
-- The ids to claim, locked (the claim's first step: MariaDB cannot UPDATE ... RETURNING).
SELECT id FROM tasks
WHERE status = 'pending' AND deps_remaining = 0
  AND run_after <= UTC_TIMESTAMP(6)
  AND lane IN :lanes
  AND (bookcode IS NULL OR bookcode NOT IN :spent)  -- when spent
  AND kind NOT IN :skip  -- when skip
  AND NOT EXISTS (SELECT 1 FROM lanes WHERE lane IN :lanes AND (paused OR max_running IS NOT NULL))  -- when free
ORDER BY priority DESC, id
LIMIT :limit
FOR UPDATE SKIP LOCKED;

-- name: update
-- The locked ids marked processing under one new token (sent with the read-back in one trip).
UPDATE tasks
SET status = 'processing', worker_id = :worker_id, lease_token = :token,
    lease_expires_at = TIMESTAMPADD(MICROSECOND, CAST(ROUND(LEAST(:lease_s, 604800.0) * 1000000) AS SIGNED), UTC_TIMESTAMP(6)),
    heartbeat_at = UTC_TIMESTAMP(6),
    stage = 'claimed', progress = NULL, attempts = attempts + 1
WHERE id IN :ids;

-- name: read_back
SELECT id, task_id, bookcode, shot_id, kind, lane, priority, params, attempts, generation,
    lease_token, lease_expires_at
FROM tasks WHERE id IN :ids AND lease_token = :token;

-- name: open_attempts
-- One attempt row for each claimed task, found by the rows' ids (the table's own key).
INSERT INTO attempts (task_id, attempt_no, worker_id, lease_token, claimed_at)
SELECT task_id, attempts, worker_id, lease_token, UTC_TIMESTAMP(6) FROM tasks
WHERE id IN :ids AND lease_token = :token;

-- name: lock_lane
-- A limited lane's row lock, held to the end of the claim, so counting its running tasks and
-- claiming more is atomic across the fleet (FOR UPDATE needs only SELECT here).
SELECT max_running, paused FROM lanes WHERE lane = :lane FOR UPDATE;

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
-- its cost (every attempt's, this one's as now reported). Its row count is what tells whether
-- every task was accepted: when fewer were, the caller rolls back and takes the locking path.
UPDATE tasks
SET status = CASE WHEN lane IN ('image') AND bookcode IN (SELECT bookcode FROM books WHERE review)
                  THEN 'awaiting_review' ELSE 'completed' END,
    result = :result, output_path = :path, finished_at = UTC_TIMESTAMP(6),
    lease_expires_at = NULL, stage = 'done', progress = 1.0, last_error = NULL,
    cost = (SELECT COALESCE(SUM(CASE WHEN a.lease_token = :token THEN COALESCE(CAST(:cost AS DOUBLE), a.cost)
                                     ELSE a.cost END), 0.0)
            FROM attempts a WHERE a.task_id = tasks.task_id)
WHERE task_id IN :ids AND lease_token = :token AND status = 'processing';

-- name: close
-- The accepted tasks' attempts closed as completed, naming the blobs their output is made of (sent
-- with the COMMIT).
UPDATE attempts
SET outcome = 'completed', finished_at = UTC_TIMESTAMP(6), cost = COALESCE(CAST(:cost AS DOUBLE), cost),
    output_bytes = COALESCE(:bytes, output_bytes), model = COALESCE(:model, model),
    settings = COALESCE(:settings, settings), output_blobs = COALESCE(:blobs, output_blobs)
WHERE task_id IN :ids AND lease_token = :token AND outcome IS NULL;

-- name: held_ids
-- The procedure's slow path, when the accept changed fewer rows than it was given: the ids the
-- caller still holds (read without locking: a lock taken before the accept deadlocked workers).
SELECT COALESCE(JSON_ARRAYAGG(task_id), '[]') INTO :ids FROM tasks
WHERE task_id IN :ids AND lease_token = :token AND status = 'processing';

-- name: accepted_ids
-- ... and, if a lease was lost meanwhile, the ones the accept took.
SELECT COALESCE(JSON_ARRAYAGG(task_id), '[]') INTO :ids FROM tasks
WHERE task_id IN :ids AND lease_token = :token AND status IN ('completed', 'awaiting_review');

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
SET lease_expires_at = TIMESTAMPADD(MICROSECOND, CAST(ROUND(LEAST(:lease_s, 604800.0) * 1000000) AS SIGNED), UTC_TIMESTAMP(6)),
    heartbeat_at = UTC_TIMESTAMP(6),
    stage = COALESCE(:stage, stage), progress = COALESCE(:progress, progress)
WHERE task_id = :task_id AND lease_token = :token AND status = 'processing';

-- name: lease_state
-- Each task's status and whether its token is the caller's current lease (a worker account reads
-- no token), for the pairs in :pairs, a JSON array of {"task_id", "token"} the procedure builds.
SELECT t.task_id, t.status, t.lease_token = j.token AS mine
FROM tasks t
JOIN JSON_TABLE(:pairs, '$[*]' COLUMNS (
    task_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$.task_id',
    token VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$.token')) AS j
  ON t.task_id = j.task_id;

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
                     THEN TIMESTAMPADD(MICROSECOND, CAST(ROUND(LEAST(:delay_s, 86400.0) * 1000000) AS SIGNED), UTC_TIMESTAMP(6))
                     ELSE run_after END,
    finished_at = CASE WHEN :retry THEN finished_at ELSE UTC_TIMESTAMP(6) END
WHERE task_id = :task_id AND lease_token = :token AND status = 'processing';

-- name: fail_attempt
UPDATE attempts
SET outcome = CASE WHEN :retry THEN 'retried' ELSE 'failed' END,
    finished_at = UTC_TIMESTAMP(6),
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
    run_after = UTC_TIMESTAMP(6), retry_base = retry_base + 1
WHERE task_id = :task_id AND lease_token = :token AND status = 'processing';

-- name: release_attempt
UPDATE attempts
SET outcome = 'canceled', finished_at = UTC_TIMESTAMP(6),
    error_kind = 'released', error = :error
WHERE task_id = :task_id AND lease_token = :token;

-- name: held
-- Whether the caller holds the task under this token now.
SELECT EXISTS (SELECT 1 FROM tasks WHERE task_id = :task_id AND lease_token = :token AND status = 'processing');


-- ---------------------------------------------------------------------------------------------
-- Reclaim: expired leases, each guarded by its expired token (racing watchdogs reclaim once).

-- name: expired
SELECT t.task_id, t.lease_token, t.worker_id, t.attempts, t.retry_base, t.max_attempts, l.on_expire
FROM tasks t JOIN lanes l ON l.lane = t.lane
WHERE t.status = 'processing' AND t.lease_expires_at < UTC_TIMESTAMP(6)
ORDER BY t.lease_expires_at
LIMIT :limit
FOR UPDATE SKIP LOCKED;

-- name: reclaim_task
-- Back to pending, or failed (:give_up) when its lane fails on expiry or it was the last attempt.
UPDATE tasks
SET status = CASE WHEN :give_up THEN 'failed' ELSE 'pending' END,
    lease_expires_at = NULL, stage = NULL,
    last_error = CONCAT('lease expired (held by ', COALESCE(:r_worker, 'None'), ')'),
    finished_at = CASE WHEN :give_up THEN UTC_TIMESTAMP(6) ELSE finished_at END,
    run_after = CASE WHEN :give_up THEN run_after ELSE UTC_TIMESTAMP(6) END
WHERE task_id = :r_task AND lease_token = :r_token AND status = 'processing';

-- name: reclaim_attempt
UPDATE attempts
SET outcome = 'lost', finished_at = UTC_TIMESTAMP(6), error_kind = 'lease_expired',
    error = 'lease expired before the worker finished'
WHERE task_id = :r_task AND lease_token = :r_token AND outcome IS NULL;

-- name: reclaim_event
INSERT INTO events (at, kind, task_id, worker_id, lease_token, detail)
VALUES (UTC_TIMESTAMP(6), 'reclaim', :r_task, :r_worker, :r_token,
        JSON_OBJECT('by', :by, 'status', CASE WHEN :give_up THEN 'failed' ELSE 'pending' END));

-- name: reclaim_alert
INSERT INTO events (at, kind, task_id, worker_id, detail)
SELECT UTC_TIMESTAMP(6), 'alert', :r_task, :r_worker,
       JSON_OBJECT('message', CONCAT('lease expired: ',
           CASE WHEN :r_on_expire = 'fail' THEN 'lane fails on expiry'
                ELSE CONCAT('lease lost on the last of ', :r_max, ' attempts') END))
WHERE :give_up;


-- ---------------------------------------------------------------------------------------------
-- Blocking what waits on a dead task.

-- name: waiting
-- The transitive dependents a failure blocks: through required dependencies only.
WITH RECURSIVE waiting(task_id) AS (
    SELECT task_id FROM task_deps WHERE depends_on IN :roots AND NOT optional
    UNION
    SELECT d.task_id FROM task_deps d JOIN waiting w ON d.depends_on = w.task_id WHERE NOT d.optional
)
SELECT task_id FROM waiting;

-- name: newly_blocked
SELECT task_id FROM tasks WHERE task_id IN :waiting AND status = 'pending';

-- name: block
UPDATE tasks SET status = 'blocked' WHERE task_id IN :newly AND status = 'pending';

-- name: went_ahead
-- One event per dead task whose optional dependents go ahead without it.
INSERT INTO events (at, kind, task_id, detail)
SELECT UTC_TIMESTAMP(6), 'went_ahead', d.depends_on,
       JSON_OBJECT('without', d.depends_on, 'tasks', COUNT(*), 'first', MIN(d.task_id))
FROM task_deps d JOIN tasks t ON t.task_id = d.task_id
WHERE d.optional AND d.depends_on IN :dead AND t.status IN ('pending', 'blocked')
GROUP BY d.depends_on;

-- name: waive
-- Optional dependencies on a dead task stop being waited for (counted off once per death).
UPDATE tasks
SET deps_remaining = deps_remaining - (SELECT COUNT(*) FROM task_deps d
                                       WHERE d.task_id = tasks.task_id AND d.optional AND d.depends_on IN :dead)
WHERE status IN ('pending', 'blocked')
  AND task_id IN (SELECT task_id FROM task_deps WHERE optional AND depends_on IN :dead);


-- ---------------------------------------------------------------------------------------------
-- Events, workers and provider votes.

-- name: event
INSERT INTO events (at, kind, task_id, worker_id, lease_token, detail)
VALUES (UTC_TIMESTAMP(6), :kind, :task_id, :worker_id, :token, :detail);

-- name: alert
INSERT INTO events (at, kind, task_id, worker_id, lease_token, detail)
VALUES (UTC_TIMESTAMP(6), 'alert', :task_id, :worker_id, :token, :alert);

-- name: worker_event
-- The events a worker account records itself (a reclaim's, a failure's and a blocked
-- dependent's are recorded by their routines; an operator's retry or cancel never), each under
-- a worker id that account registered.
SELECT :kind IN ('alert', 'heartbeat', 'stale', 'provider_back')
   AND (:worker_id IS NULL OR EXISTS (SELECT 1 FROM workers WHERE worker_id = :worker_id AND account = SUBSTRING_INDEX(USER(), '@', 1)));

-- name: worker_update
-- A workers row belongs to the account that registered it (SUBSTRING_INDEX(USER(), '@', 1): the routine's caller,
-- not the owner it runs as); a row the owner's path wrote (account NULL) may be taken over.
UPDATE workers
SET uid = :uid, host = :host, version = :version, lanes = :lanes, backend = :backend,
    started_at = UTC_TIMESTAMP(6), last_seen_at = UTC_TIMESTAMP(6),
    state = 'working', lease_s = :lease_s, paused_reason = NULL, paused_since = NULL, account = SUBSTRING_INDEX(USER(), '@', 1)
WHERE worker_id = :worker_id AND (account IS NULL OR account = SUBSTRING_INDEX(USER(), '@', 1));

-- name: no_worker
SELECT NOT EXISTS (SELECT 1 FROM workers WHERE worker_id = :worker_id);

-- name: worker_insert
INSERT INTO workers (worker_id, uid, host, version, lanes, backend, started_at, last_seen_at, state, lease_s, account)
VALUES (:worker_id, :uid, :host, :version, :lanes, :backend, UTC_TIMESTAMP(6),
        UTC_TIMESTAMP(6), 'working', :lease_s, SUBSTRING_INDEX(USER(), '@', 1));

-- name: my_worker
SELECT EXISTS (SELECT 1 FROM workers WHERE worker_id = :worker_id AND account = SUBSTRING_INDEX(USER(), '@', 1));

-- name: worker_touch
-- paused_since first: MariaDB evaluates SET left to right, so it must read the old reason.
UPDATE workers
SET paused_since = CASE WHEN :paused IS NULL THEN NULL WHEN paused_reason = :paused THEN paused_since
                        ELSE UTC_TIMESTAMP(6) END,
    paused_reason = :paused, last_seen_at = UTC_TIMESTAMP(6),
    state = CASE WHEN :paused IS NULL THEN :state ELSE 'paused' END
WHERE worker_id = :worker_id AND account = SUBSTRING_INDEX(USER(), '@', 1);

-- name: vote_renew
-- A worker's vote that a provider is down (engine/outages.py): a live vote keeps its start.
UPDATE provider_outages
SET since = CASE WHEN until > UTC_TIMESTAMP(6) THEN since
                 ELSE UTC_TIMESTAMP(6) END,
    until = TIMESTAMPADD(MICROSECOND, CAST(ROUND(LEAST(:hold_s, 86400.0) * 1000000) AS SIGNED), UTC_TIMESTAMP(6)),
    reason = COALESCE(:reason, reason)
WHERE provider = :provider AND worker_id = :worker_id;

-- name: vote_new
INSERT INTO provider_outages (provider, worker_id, since, until, reason)
VALUES (:provider, :worker_id, UTC_TIMESTAMP(6),
        TIMESTAMPADD(MICROSECOND, CAST(ROUND(LEAST(:hold_s, 86400.0) * 1000000) AS SIGNED), UTC_TIMESTAMP(6)), :reason);


-- ---------------------------------------------------------------------------------------------
-- What a task's holder stores: a model's answer, a blob's chunks and its row.

-- name: answer
INSERT IGNORE INTO llm_answers (`key`, model, answer, tokens_in, tokens_out, cost, created_at)
VALUES (:key, :model, :answer, :tokens_in, :tokens_out, :cost, UTC_TIMESTAMP(6));

-- name: named_blob
-- Whether the caller's completion under this token was accepted naming this blob: a worker
-- account stores a blob only in the transaction of the completion that names it.
SELECT EXISTS (
    SELECT 1 FROM tasks t JOIN attempts a ON a.task_id = t.task_id AND a.lease_token = t.lease_token
    WHERE t.task_id = :task_id AND t.lease_token = :token AND t.status IN ('completed', 'awaiting_review')
      AND a.outcome = 'completed' AND LENGTH(:sha256) = 64 AND a.output_blobs LIKE CONCAT('%', :sha256, '%'));

-- name: chunk
-- One chunk of a blob (one another writer stored first is left as it is: a blob is never replaced).
INSERT IGNORE INTO store_chunks (sha256, seq, data) VALUES (:sha256, :seq, :data);

-- name: blob_matches
-- The chunks hash to the blob's checksum and add up to its size (the procedure lifts
-- group_concat_max_len around it: GROUP_CONCAT stops there).
SELECT EXISTS (
    SELECT 1 FROM (SELECT SHA2(COALESCE(GROUP_CONCAT(data ORDER BY seq SEPARATOR ''), ''), 256) AS sha,
                          COALESCE(SUM(LENGTH(data)), 0) AS size, COUNT(*) AS n
                   FROM store_chunks WHERE sha256 = :sha256) AS c
    WHERE c.sha = :sha256 AND c.size = :size AND c.n = :chunks);

-- name: blob
-- The blob's row, once its chunks are in (left as it is if another writer stored it first).
INSERT IGNORE INTO store_blobs (sha256, size, chunks, stored_at)
VALUES (:sha256, :size, :chunks, UTC_TIMESTAMP(6));

-- name: blob_seen
UPDATE store_blobs SET stored_at = UTC_TIMESTAMP(6) WHERE sha256 = :sha256;


-- ---------------------------------------------------------------------------------------------
-- Operator and reviewer verbs (engine/operator.py, engine/review.py, engine/dependents.py):
-- each moves tasks only from the states its row in engine/states.py MOVES allows.

-- name: revoke_attempts
-- The open attempts of running tasks closed as canceled (before their tokens are cleared, which
-- fences their workers).
UPDATE attempts
SET outcome = 'canceled', finished_at = UTC_TIMESTAMP(6), error_kind = 'revoked'
WHERE task_id IN :ids AND outcome IS NULL
  AND EXISTS (SELECT 1 FROM tasks t WHERE t.task_id = attempts.task_id AND t.lease_token = attempts.lease_token
              AND t.status = 'processing');

-- name: revoke_tokens
UPDATE tasks SET lease_token = NULL WHERE task_id IN :ids AND status = 'processing';

-- name: retry
-- Failed or canceled tasks back to pending with a fresh attempt budget (their attempts stay).
UPDATE tasks
SET status = 'pending', retry_base = attempts, run_after = UTC_TIMESTAMP(6), finished_at = NULL, worker_id = NULL
WHERE task_id IN :ids AND status IN ('failed', 'canceled');

-- name: cancel
-- Unfinished tasks stopped for good (a running one's lease revoked first).
UPDATE tasks
SET status = 'canceled', lease_expires_at = NULL, finished_at = UTC_TIMESTAMP(6)
WHERE task_id IN :ids AND status NOT IN ('completed', 'canceled');

-- name: reset
-- Tasks back to pending for a re-run: a new generation, nothing stale kept to pass for new.
UPDATE tasks
SET status = 'pending', retry_base = attempts, run_after = UTC_TIMESTAMP(6), generation = generation + 1,
    result = NULL, output_path = NULL, finished_at = NULL, lease_expires_at = NULL, stage = NULL,
    progress = NULL, last_error = NULL
WHERE task_id IN :ids;

-- name: approve
-- Reviewed outputs accepted: completed (their dependents are counted off by `count_off`).
UPDATE tasks SET status = 'completed' WHERE task_id IN :ids AND status = 'awaiting_review';

-- name: unblock
-- A blocked task whose required dependencies are all alive again.
UPDATE tasks SET status = 'pending' WHERE task_id = :task_id AND status = 'blocked';


-- ---------------------------------------------------------------------------------------------
-- Set-up.

-- name: init_lock
-- The init lock, on the session, from before the init's transaction until after it committed
-- (DDL commits as it goes, so a transaction alone could not keep two inits apart): a named lock
-- of the server's, so named after the database; 1 once held, 0 after :wait seconds.
SELECT GET_LOCK(:name, :wait);

-- name: init_unlock
SELECT RELEASE_LOCK(:name);


-- ---------------------------------------------------------------------------------------------
-- What `store gc` keeps (engine/queries.py), read from the rows that can own outputs or marks
-- only (a made task's row: `output_path` set, the index ix_tasks_output).

-- name: named_checksums
-- Every checksum something names, space-separated within a row: a made task's output and side
-- files, and each task's latest completed attempt's (its output, even if the task row was
-- rewritten since).
SELECT JSON_VALUE(result, '$.sha256') AS names FROM tasks
WHERE output_path IS NOT NULL AND JSON_TYPE(JSON_EXTRACT(result, '$.sha256')) = 'STRING'
UNION
SELECT s.sha256 FROM tasks,
    JSON_TABLE(tasks.result, '$.sides.*' COLUMNS (sha256 TEXT PATH '$', value JSON PATH '$')) AS s
WHERE tasks.output_path IS NOT NULL AND JSON_TYPE(JSON_EXTRACT(tasks.result, '$.sides')) = 'OBJECT'
  AND JSON_TYPE(s.value) = 'STRING'
UNION
SELECT a.output_blobs FROM attempts a
WHERE a.output_blobs IS NOT NULL AND a.outcome = 'completed'
  AND a.attempt_no = (SELECT MAX(b.attempt_no) FROM attempts b
                      WHERE b.task_id = a.task_id AND b.outcome = 'completed' AND b.output_blobs IS NOT NULL);

-- name: recorded_marks
-- Which of these staged marks a made task's completion records (its reveal may be unfinished).
SELECT DISTINCT JSON_VALUE(result, '$.staged') AS mark FROM tasks
WHERE output_path IS NOT NULL AND JSON_VALUE(result, '$.staged') IN :marks;

-- name: running_for
-- How long (seconds, by the database's clock) the oldest attempt still running has run: every
-- blob stored or found stored since may be the output its completion will name (NULL: none runs).
SELECT TIMESTAMPDIFF(MICROSECOND, MIN(a.claimed_at), UTC_TIMESTAMP(6)) / 1000000.0 AS age_s
FROM tasks t JOIN attempts a ON a.task_id = t.task_id AND a.lease_token = t.lease_token
WHERE t.status = 'processing' AND a.outcome IS NULL;
