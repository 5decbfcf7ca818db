-- The engine's SQL on PostgreSQL: every statement the state machine and a worker account run.
--
-- :name is a parameter; `IN :name` takes a list (bound as one array: `= ANY(:name)`); a line
-- ending in `-- when OPTION` is sent only with that option; `LIMIT :limit` is written as a number
-- by the owner's path. The clock is the server's real one (clock_timestamp(), not the
-- transaction's start), as a timestamp without time zone in UTC. Statements below the claim and
-- the completion also make the bodies of the worker account's routines (db/routines.py), where
-- :name is the routine's parameter p_name. See db/statements.py and db/dialects/postgresql.py.


-- ---------------------------------------------------------------------------------------------
-- Claim: up to :limit eligible tasks of the lanes, highest priority then oldest first, each
-- marked processing under one new token with an expiry from the database clock.

-- name: claim_and_open
-- The claim and its attempt rows in one statement: an UPDATE ... FROM (SELECT ... FOR UPDATE
-- SKIP LOCKED) whose returned rows a data-modifying CTE opens one attempt for.
WITH claimed AS (
    UPDATE tasks
    SET status = 'processing', worker_id = :worker_id, lease_token = :token,
        lease_expires_at = (clock_timestamp() AT TIME ZONE 'UTC') + make_interval(secs => LEAST(:lease_s, 604800.0)),
        heartbeat_at = (clock_timestamp() AT TIME ZONE 'UTC'),
        stage = 'claimed', progress = NULL, attempts = attempts + 1
    FROM (
        SELECT id AS picked FROM tasks
        WHERE status = 'pending' AND deps_remaining = 0
          AND run_after <= (clock_timestamp() AT TIME ZONE 'UTC')
          AND lane IN :lanes
          AND (bookcode IS NULL OR bookcode NOT IN :spent)  -- when spent
          AND kind NOT IN :skip  -- when skip
          AND NOT EXISTS (SELECT 1 FROM lanes WHERE lane IN :lanes AND (paused OR max_running IS NOT NULL))  -- when free
        ORDER BY priority DESC, id
        LIMIT :limit
        FOR UPDATE SKIP LOCKED
    ) AS c
    WHERE tasks.id = c.picked
    RETURNING id, task_id, bookcode, shot_id, kind, lane, priority, params, attempts, generation,
        lease_token, lease_expires_at
), opened AS (
    INSERT INTO attempts (task_id, attempt_no, worker_id, lease_token, claimed_at)
    SELECT task_id, attempts, :worker_id, :token, (clock_timestamp() AT TIME ZONE 'UTC') FROM claimed
)
SELECT id, task_id, bookcode, shot_id, kind, lane, priority, params, attempts, generation,
    lease_token, lease_expires_at
FROM claimed;

-- name: claim
-- The claim alone, no attempt rows: the minimal loop the benchmark measures the history against.
UPDATE tasks
SET status = 'processing', worker_id = :worker_id, lease_token = :token,
    lease_expires_at = (clock_timestamp() AT TIME ZONE 'UTC') + make_interval(secs => LEAST(:lease_s, 604800.0)),
    heartbeat_at = (clock_timestamp() AT TIME ZONE 'UTC'),
    stage = 'claimed', progress = NULL, attempts = attempts + 1
FROM (
    SELECT id AS picked FROM tasks
    WHERE status = 'pending' AND deps_remaining = 0
      AND run_after <= (clock_timestamp() AT TIME ZONE 'UTC')
      AND lane IN :lanes
      AND NOT EXISTS (SELECT 1 FROM lanes WHERE lane IN :lanes AND (paused OR max_running IS NOT NULL))  -- when free
    ORDER BY priority DESC, id
    LIMIT :limit
    FOR UPDATE SKIP LOCKED
) AS c
WHERE tasks.id = c.picked
RETURNING id, task_id, bookcode, shot_id, kind, lane, priority, params, attempts, generation,
    lease_token, lease_expires_at;

-- name: lock_lane
-- A limited lane's lock, held to the end of the claim, so counting its running tasks and claiming
-- more is atomic across the fleet: a transaction-scoped advisory lock named after the lane (28779
-- is "pk"), since FOR UPDATE would need a write privilege a worker account must not have.
WITH locked AS (SELECT pg_advisory_xact_lock(28779, hashtext(:lane)))
SELECT max_running, paused FROM lanes, locked WHERE lane = :lane;

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

-- name: finish
-- In one statement: mark each task completed (awaiting_review in a reviewed lane of a book that
-- reviews), book its cost (every attempt's, this one's as now reported), close the attempt (naming
-- the blobs its output is made of), and count it off its dependents. Returns the accepted ids.
WITH done AS (
    UPDATE tasks
    SET status = CASE WHEN lane IN ('image') AND bookcode IN (SELECT bookcode FROM books WHERE review)
                      THEN 'awaiting_review' ELSE 'completed' END,
        result = :result, output_path = :path, finished_at = (clock_timestamp() AT TIME ZONE 'UTC'),
        lease_expires_at = NULL, stage = 'done', progress = 1.0, last_error = NULL,
        cost = (SELECT COALESCE(SUM(CASE WHEN a.lease_token = :token
                                         THEN COALESCE(CAST(:cost AS DOUBLE PRECISION), a.cost)
                                         ELSE a.cost END), 0.0)
                FROM attempts a WHERE a.task_id = tasks.task_id)
    WHERE task_id IN :ids AND lease_token = :token AND status = 'processing'
    RETURNING task_id, status
), closed AS (
    UPDATE attempts
    SET outcome = 'completed', finished_at = (clock_timestamp() AT TIME ZONE 'UTC'),
        cost = COALESCE(CAST(:cost AS DOUBLE PRECISION), attempts.cost),
        output_bytes = COALESCE(:bytes, attempts.output_bytes), model = COALESCE(:model, attempts.model),
        settings = COALESCE(:settings, attempts.settings), output_blobs = COALESCE(:blobs, attempts.output_blobs)
    FROM done
    WHERE attempts.task_id = done.task_id AND attempts.lease_token = :token AND attempts.outcome IS NULL
), counted AS (
    UPDATE tasks SET deps_remaining = tasks.deps_remaining - w.n
    FROM (SELECT d.task_id, COUNT(*) AS n FROM task_deps d JOIN done ON done.task_id = d.depends_on
          WHERE done.status = 'completed' GROUP BY d.task_id) AS w
    WHERE tasks.task_id = w.task_id
)
SELECT task_id FROM done;

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
SET lease_expires_at = (clock_timestamp() AT TIME ZONE 'UTC') + make_interval(secs => LEAST(:lease_s, 604800.0)),
    heartbeat_at = (clock_timestamp() AT TIME ZONE 'UTC'),
    stage = COALESCE(:stage, stage), progress = COALESCE(:progress, progress)
WHERE task_id = :task_id AND lease_token = :token AND status = 'processing';

-- name: lease_state
-- A task's status and whether :token is its current lease (a worker account reads no token).
SELECT task_id, status, lease_token = :token AS mine FROM tasks WHERE task_id = :task_id;

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
                     THEN (clock_timestamp() AT TIME ZONE 'UTC') + make_interval(secs => LEAST(:delay_s, 86400.0))
                     ELSE run_after END,
    finished_at = CASE WHEN :retry THEN finished_at ELSE (clock_timestamp() AT TIME ZONE 'UTC') END
WHERE task_id = :task_id AND lease_token = :token AND status = 'processing';

-- name: fail_attempt
UPDATE attempts
SET outcome = CASE WHEN :retry THEN 'retried' ELSE 'failed' END,
    finished_at = (clock_timestamp() AT TIME ZONE 'UTC'),
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
    run_after = (clock_timestamp() AT TIME ZONE 'UTC'), retry_base = retry_base + 1
WHERE task_id = :task_id AND lease_token = :token AND status = 'processing';

-- name: release_attempt
UPDATE attempts
SET outcome = 'canceled', finished_at = (clock_timestamp() AT TIME ZONE 'UTC'),
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
WHERE t.status = 'processing' AND t.lease_expires_at < (clock_timestamp() AT TIME ZONE 'UTC')
ORDER BY t.lease_expires_at
LIMIT :limit
FOR UPDATE OF t SKIP LOCKED;

-- name: reclaim_task
-- Back to pending, or failed (:give_up) when its lane fails on expiry or it was the last attempt.
UPDATE tasks
SET status = CASE WHEN :give_up THEN 'failed' ELSE 'pending' END,
    lease_expires_at = NULL, stage = NULL,
    last_error = CONCAT('lease expired (held by ', COALESCE(:r_worker, 'None'), ')'),
    finished_at = CASE WHEN :give_up THEN (clock_timestamp() AT TIME ZONE 'UTC') ELSE finished_at END,
    run_after = CASE WHEN :give_up THEN run_after ELSE (clock_timestamp() AT TIME ZONE 'UTC') END
WHERE task_id = :r_task AND lease_token = :r_token AND status = 'processing';

-- name: reclaim_attempt
UPDATE attempts
SET outcome = 'lost', finished_at = (clock_timestamp() AT TIME ZONE 'UTC'), error_kind = 'lease_expired',
    error = 'lease expired before the worker finished'
WHERE task_id = :r_task AND lease_token = :r_token AND outcome IS NULL;

-- name: reclaim_event
INSERT INTO events (at, kind, task_id, worker_id, lease_token, detail)
VALUES ((clock_timestamp() AT TIME ZONE 'UTC'), 'reclaim', :r_task, :r_worker, :r_token,
        json_build_object('by', CAST(:by AS TEXT), 'status', CASE WHEN :give_up THEN 'failed' ELSE 'pending' END));

-- name: reclaim_alert
INSERT INTO events (at, kind, task_id, worker_id, detail)
SELECT (clock_timestamp() AT TIME ZONE 'UTC'), 'alert', :r_task, :r_worker,
       json_build_object('message', CONCAT('lease expired: ',
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
SELECT (clock_timestamp() AT TIME ZONE 'UTC'), 'went_ahead', d.depends_on,
       json_build_object('without', d.depends_on, 'tasks', COUNT(*), 'first', MIN(d.task_id))
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
VALUES ((clock_timestamp() AT TIME ZONE 'UTC'), :kind, :task_id, :worker_id, :token, :detail);

-- name: alert
INSERT INTO events (at, kind, task_id, worker_id, lease_token, detail)
VALUES ((clock_timestamp() AT TIME ZONE 'UTC'), 'alert', :task_id, :worker_id, :token, :alert);

-- name: worker_event
-- The events a worker account records itself (a reclaim's, a failure's and a blocked
-- dependent's are recorded by their routines; an operator's retry or cancel never), each under
-- a worker id that account registered.
SELECT :kind IN ('alert', 'heartbeat', 'stale', 'provider_back')
   AND (CAST(:worker_id AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM workers WHERE worker_id = :worker_id AND account = session_user));

-- name: worker_update
-- A workers row belongs to the account that registered it (session_user: the routine's caller,
-- not the owner it runs as); a row the owner's path wrote (account NULL) may be taken over.
UPDATE workers
SET uid = :uid, host = :host, version = :version, lanes = :lanes, backend = :backend,
    started_at = (clock_timestamp() AT TIME ZONE 'UTC'), last_seen_at = (clock_timestamp() AT TIME ZONE 'UTC'),
    state = 'working', lease_s = :lease_s, paused_reason = NULL, paused_since = NULL, account = session_user
WHERE worker_id = :worker_id AND (account IS NULL OR account = session_user);

-- name: no_worker
SELECT NOT EXISTS (SELECT 1 FROM workers WHERE worker_id = :worker_id);

-- name: worker_insert
INSERT INTO workers (worker_id, uid, host, version, lanes, backend, started_at, last_seen_at, state, lease_s, account)
VALUES (:worker_id, :uid, :host, :version, :lanes, :backend, (clock_timestamp() AT TIME ZONE 'UTC'),
        (clock_timestamp() AT TIME ZONE 'UTC'), 'working', :lease_s, session_user);

-- name: my_worker
SELECT EXISTS (SELECT 1 FROM workers WHERE worker_id = :worker_id AND account = session_user);

-- name: worker_touch
-- paused_since first: MariaDB evaluates SET left to right, so it must read the old reason.
UPDATE workers
SET paused_since = CASE WHEN CAST(:paused AS TEXT) IS NULL THEN NULL WHEN paused_reason = :paused THEN paused_since
                        ELSE (clock_timestamp() AT TIME ZONE 'UTC') END,
    paused_reason = :paused, last_seen_at = (clock_timestamp() AT TIME ZONE 'UTC'),
    state = CASE WHEN CAST(:paused AS TEXT) IS NULL THEN :state ELSE 'paused' END
WHERE worker_id = :worker_id AND account = session_user;

-- name: vote_renew
-- A worker's vote that a provider is down (engine/outages.py): a live vote keeps its start.
UPDATE provider_outages
SET since = CASE WHEN until > (clock_timestamp() AT TIME ZONE 'UTC') THEN since
                 ELSE (clock_timestamp() AT TIME ZONE 'UTC') END,
    until = (clock_timestamp() AT TIME ZONE 'UTC') + make_interval(secs => LEAST(:hold_s, 86400.0)),
    reason = COALESCE(:reason, reason)
WHERE provider = :provider AND worker_id = :worker_id;

-- name: vote_new
INSERT INTO provider_outages (provider, worker_id, since, until, reason)
VALUES (:provider, :worker_id, (clock_timestamp() AT TIME ZONE 'UTC'),
        (clock_timestamp() AT TIME ZONE 'UTC') + make_interval(secs => LEAST(:hold_s, 86400.0)), :reason);


-- ---------------------------------------------------------------------------------------------
-- What a task's holder stores: a model's answer, a blob's chunks and its row.

-- name: answer
INSERT INTO llm_answers (key, model, answer, tokens_in, tokens_out, cost, created_at)
VALUES (:key, :model, :answer, :tokens_in, :tokens_out, :cost, (clock_timestamp() AT TIME ZONE 'UTC'))
ON CONFLICT DO NOTHING;

-- name: named_blob
-- Whether the caller's completion under this token was accepted naming this blob: a worker
-- account stores a blob only in the transaction of the completion that names it.
SELECT EXISTS (
    SELECT 1 FROM tasks t JOIN attempts a ON a.task_id = t.task_id AND a.lease_token = t.lease_token
    WHERE t.task_id = :task_id AND t.lease_token = :token AND t.status IN ('completed', 'awaiting_review')
      AND a.outcome = 'completed' AND LENGTH(:sha256) = 64 AND a.output_blobs LIKE CONCAT('%', CAST(:sha256 AS TEXT), '%'));

-- name: chunk
-- One chunk of a blob (one another writer stored first is left as it is: a blob is never replaced).
INSERT INTO store_chunks (sha256, seq, data) VALUES (:sha256, :seq, :data) ON CONFLICT DO NOTHING;

-- name: blob_matches
-- The chunks hash to the blob's checksum and add up to its size.
SELECT EXISTS (
    SELECT 1 FROM (SELECT encode(sha256(COALESCE(string_agg(data, ''::bytea ORDER BY seq), ''::bytea)), 'hex') AS sha,
                          COALESCE(SUM(LENGTH(data)), 0) AS size, COUNT(*) AS n
                   FROM store_chunks WHERE sha256 = :sha256) AS c
    WHERE c.sha = :sha256 AND c.size = :size AND c.n = :chunks);

-- name: blob
-- The blob's row, once its chunks are in (left as it is if another writer stored it first).
INSERT INTO store_blobs (sha256, size, chunks, stored_at)
VALUES (:sha256, :size, :chunks, (clock_timestamp() AT TIME ZONE 'UTC')) ON CONFLICT DO NOTHING;

-- name: blob_seen
UPDATE store_blobs SET stored_at = (clock_timestamp() AT TIME ZONE 'UTC') WHERE sha256 = :sha256;


-- ---------------------------------------------------------------------------------------------
-- Operator and reviewer verbs (engine/operator.py, engine/review.py, engine/dependents.py):
-- each moves tasks only from the states its row in engine/states.py MOVES allows.

-- name: revoke_attempts
-- The open attempts of running tasks closed as canceled (before their tokens are cleared, which
-- fences their workers).
UPDATE attempts
SET outcome = 'canceled', finished_at = (clock_timestamp() AT TIME ZONE 'UTC'), error_kind = 'revoked'
WHERE task_id IN :ids AND outcome IS NULL
  AND EXISTS (SELECT 1 FROM tasks t WHERE t.task_id = attempts.task_id AND t.lease_token = attempts.lease_token
              AND t.status = 'processing');

-- name: revoke_tokens
UPDATE tasks SET lease_token = NULL WHERE task_id IN :ids AND status = 'processing';

-- name: retry
-- Failed or canceled tasks back to pending with a fresh attempt budget (their attempts stay).
UPDATE tasks
SET status = 'pending', retry_base = attempts, run_after = (clock_timestamp() AT TIME ZONE 'UTC'), finished_at = NULL, worker_id = NULL
WHERE task_id IN :ids AND status IN ('failed', 'canceled');

-- name: cancel
-- Unfinished tasks stopped for good (a running one's lease revoked first).
UPDATE tasks
SET status = 'canceled', lease_expires_at = NULL, finished_at = (clock_timestamp() AT TIME ZONE 'UTC')
WHERE task_id IN :ids AND status NOT IN ('completed', 'canceled');

-- name: reset
-- Tasks back to pending for a re-run: a new generation, nothing stale kept to pass for new.
UPDATE tasks
SET status = 'pending', retry_base = attempts, run_after = (clock_timestamp() AT TIME ZONE 'UTC'), generation = generation + 1,
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
-- The init lock, on the session, from before the init's transaction until after it committed:
-- an advisory lock, waited for (1 once it is held).
SELECT 1 FROM (SELECT pg_advisory_lock(:lock_key)) AS held;

-- name: init_unlock
SELECT pg_advisory_unlock(:lock_key);


-- ---------------------------------------------------------------------------------------------
-- What `store gc` keeps (engine/queries.py), read from the rows that can own outputs or marks
-- only (a made task's row: `output_path` set, the index ix_tasks_output).

-- name: named_checksums
-- Every checksum something names, space-separated within a row: a made task's output and side
-- files, and each task's latest completed attempt's (its output, even if the task row was
-- rewritten since).
SELECT result->>'sha256' AS names FROM tasks
WHERE output_path IS NOT NULL AND json_typeof(result->'sha256') = 'string'
UNION
SELECT s.value #>> '{}' FROM tasks,
    json_each(CASE WHEN json_typeof(tasks.result->'sides') = 'object' THEN tasks.result->'sides' END) AS s
WHERE tasks.output_path IS NOT NULL AND json_typeof(s.value) = 'string'
UNION
SELECT a.output_blobs FROM attempts a
WHERE a.output_blobs IS NOT NULL AND a.outcome = 'completed'
  AND a.attempt_no = (SELECT MAX(b.attempt_no) FROM attempts b
                      WHERE b.task_id = a.task_id AND b.outcome = 'completed' AND b.output_blobs IS NOT NULL);

-- name: recorded_marks
-- Which of these staged marks a made task's completion records (its reveal may be unfinished).
SELECT DISTINCT result->>'staged' AS mark FROM tasks
WHERE output_path IS NOT NULL AND result->>'staged' IN :marks;

-- name: running_for
-- How long (seconds, by the database's clock) the oldest attempt still running has run: every
-- blob stored or found stored since may be the output its completion will name (NULL: none runs).
SELECT EXTRACT(EPOCH FROM (clock_timestamp() AT TIME ZONE 'UTC') - MIN(a.claimed_at)) AS age_s
FROM tasks t JOIN attempts a ON a.task_id = t.task_id AND a.lease_token = t.lease_token
WHERE t.status = 'processing' AND a.outcome IS NULL;
