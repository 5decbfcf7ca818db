"""The one schema, as SQLAlchemy Core tables, shared by SQLite, PostgreSQL and MariaDB.

Names marked * in docs/architecture.md (shots, tasks, attempts and their listed columns) are a
contract: analysts and outside checks query them directly. Times are naive UTC from the
database clock (see `pipeline_kit.db.sqltime`).
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.dialects import mysql

SCHEMA_VERSION = 14

metadata = MetaData()

# MariaDB's TEXT stops at 64 KiB; a whole book without chapter markers is one chapter.
LongText = Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
# Precise to the microsecond on MariaDB (its DATETIME defaults to whole seconds).
Time = DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
# SQLite only auto-increments an INTEGER PRIMARY KEY.
Serial = BigInteger().with_variant(Integer(), "sqlite")

_mysql = {"mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_bin", "mysql_engine": "InnoDB"}

meta = Table(
    "pk_meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", String(255), nullable=False),
    **_mysql,
)
# pk_meta's key for the database's output store: a folder's absolute root (for SQLite fixed by
# `init`, beside the database file), 'database', or s3://BUCKET/PREFIX.
STORE_KEY = "store"

books = Table(
    "books",
    metadata,
    Column("bookcode", String(64), primary_key=True),
    Column("title", String(500), nullable=False),
    Column("lang", String(8), nullable=False),
    Column("created_at", Time),
    Column("budget", Float),  # spend limit for paid lanes; NULL means no limit
    Column("review", Boolean, nullable=False, default=False),
    Column("style", Text),  # the film's look (era, medium, palette) every prompt carries; NULL: the default
    Column("narrator", String(64)),  # the narrator's voice; NULL: the voice backend's default for the language
    Column("narration", Boolean),  # shots without dialogue are narrated; NULL: yes (the animatic's default)
    Column("film_profile", String(32)),  # the films' picture (film/profile.py); NULL: `provider`
    Column("music", String(64)),  # the sha256 of the music bed under its films (its `music` task); NULL: none
    **_mysql,
)

chapters = Table(
    "chapters",
    metadata,
    Column("bookcode", String(64), ForeignKey("books.bookcode"), primary_key=True),
    Column("number", Integer, primary_key=True),
    Column("title", String(500), nullable=False),
    Column("text", LongText, nullable=False),
    Column("checksum", String(64), nullable=False),
    Column("split_at", Time),  # the split lock: set once the chapter's shots exist
    Column("splitter_version", String(32)),
    **_mysql,
)

shots = Table(
    "shots",
    metadata,
    Column("shot_id", String(120), primary_key=True),
    Column("bookcode", String(64), ForeignKey("books.bookcode"), nullable=False),
    Column("chapter", Integer, nullable=False),
    Column("seq", Integer, nullable=False),
    Column("scene", Integer, nullable=False),
    Column("location", String(200)),
    Column("time_of_day", String(32)),
    Column("characters", JSON, nullable=False),
    Column("text", LongText, nullable=False),
    Column("span_start", Integer, nullable=False),
    Column("span_end", Integer, nullable=False),
    Column("dialogue", Boolean, nullable=False, default=False),
    Column("duration_s", Float, nullable=False),
    Column("prompt", LongText),
    Column("video_prompt", LongText),
    Column("edited_at", Time),
    Column("inferred", JSON(none_as_null=True)),  # names in `characters` inferred from a pronoun
    UniqueConstraint("bookcode", "chapter", "seq", name="uq_shots_position"),
    **_mysql,
)

# The character bible: one row per canonical character of a book (see pipeline_kit.text.cast).
characters = Table(
    "characters",
    metadata,
    Column("bookcode", String(64), ForeignKey("books.bookcode"), primary_key=True),
    Column("name", String(100), primary_key=True),  # the canonical name shots' `characters` hold
    Column("aliases", JSON, nullable=False),  # other names it goes by, UTF-8
    Column("description", Text, nullable=False, default=""),  # age, build, face, hair, costume
    Column("gender", String(8)),  # male | female | NULL (unknown)
    Column("voice", String(64)),  # the voice that speaks their lines; NULL: the default for gender and language
    Column("mentions", Integer, nullable=False, default=0),
    Column("first_shot", String(120)),
    Column("last_shot", String(120)),
    Column("locked", Boolean, nullable=False, default=False),  # fixed by a person: rebuilds keep it
    Column("dropped", Boolean, nullable=False, default=False),  # no character: its names are never cast
    **_mysql,
)

# The place bible: one row per place of a book, named or not (see pipeline_kit.text.places).
places = Table(
    "places",
    metadata,
    Column("bookcode", String(64), ForeignKey("books.bookcode"), primary_key=True),
    Column("name", String(200), primary_key=True),  # what shots' `location` holds
    Column("aliases", JSON, nullable=False),
    Column("description", Text, nullable=False, default=""),  # what it looks like
    Column("mentions", Integer, nullable=False, default=0),
    Column("first_shot", String(120)),
    Column("last_shot", String(120)),
    Column("locked", Boolean, nullable=False, default=False),  # fixed by a person: rebuilds keep it
    Column("dropped", Boolean, nullable=False, default=False),  # no place: never a shot's location
    **_mysql,
)

# An optional JSON value: Python None is stored as SQL NULL (plain JSON writes the text 'null',
# which `IS NULL` does not find and every reader must decode).
OptionalJSON = JSON(none_as_null=True)

lanes = Table(
    "lanes",
    metadata,
    Column("lane", String(64), primary_key=True),
    Column("max_running", Integer),  # NULL: no limit across the fleet
    Column("paused", Boolean, nullable=False, default=False),
    Column("max_attempts", Integer),  # NULL: the task's own max_attempts
    Column("on_expire", String(16), nullable=False, default="retry"),  # retry | fail
    Column("paid", Boolean, nullable=False, default=False),  # stops claiming once a budget is spent
    **_mysql,
)

tasks = Table(
    "tasks",
    metadata,
    Column("id", Serial, primary_key=True, autoincrement=True),  # FIFO order within a priority
    Column("task_id", String(255), nullable=False, unique=True),  # the business key
    Column("bookcode", String(64)),
    Column("shot_id", String(120)),
    Column("kind", String(64), nullable=False),
    Column("lane", String(64), ForeignKey("lanes.lane"), nullable=False),
    Column("status", String(16), nullable=False),
    Column("priority", Integer, nullable=False, default=0),
    Column("worker_id", String(128)),
    Column("lease_token", String(32)),
    Column("lease_expires_at", Time),
    Column("heartbeat_at", Time),
    Column("stage", String(64)),
    Column("progress", Float),
    Column("attempts", Integer, nullable=False, default=0),  # claims ever made: the attempt_no
    Column("retry_base", Integer, nullable=False, default=0),  # attempts before the last reset
    Column("generation", Integer, nullable=False, default=0),  # bumped by each reset: outputs of
    # an older generation are never reused
    Column("max_attempts", Integer, nullable=False),
    Column("run_after", Time, nullable=False),
    Column("deps_remaining", Integer, nullable=False, default=0),
    Column("params", OptionalJSON),
    Column("result", OptionalJSON),
    Column("output_path", String(1000)),
    Column("cost", Float, nullable=False, default=0.0),
    Column("last_error", Text),
    Column("created_at", Time, nullable=False),
    Column("finished_at", Time),
    **_mysql,
)
# The claim scans only eligible rows, in claim order. A partial index where the engine has them
# (PostgreSQL, SQLite); MariaDB leads with status instead. Extra columns let the filter run on
# the index alone. SQLite claims name this index (INDEXED BY) so a stale ANALYZE cannot
# steer the planner to a table scan.
Index(
    "ix_tasks_eligible",
    tasks.c.status,
    tasks.c.priority.desc(),
    tasks.c.id,
    tasks.c.lane,
    tasks.c.deps_remaining,
    tasks.c.run_after,
    postgresql_where=text("status = 'pending'"),
    sqlite_where=text("status = 'pending'"),
)
Index("ix_tasks_running", tasks.c.status, tasks.c.lane, tasks.c.lease_expires_at)
Index("ix_tasks_worker", tasks.c.worker_id, tasks.c.status)
Index("ix_tasks_book", tasks.c.bookcode, tasks.c.shot_id)
# Who owns an output file: publishing refuses to replace a file another task recorded. Only
# rows that have an output are indexed (where the database can say so): a claim and a completion
# without an output then write no entry (PostgreSQL writes one in every index a row version
# qualifies for; SQLite rewrites the entry of every column the UPDATE sets).
OUTPUT_WHERE = "output_path IS NOT NULL"
OUTPUT_INDEX = Index(
    "ix_tasks_output",
    tasks.c.output_path,
    mysql_length=191,
    postgresql_where=text(OUTPUT_WHERE),
    sqlite_where=text(OUTPUT_WHERE),
)

task_deps = Table(
    "task_deps",
    metadata,
    Column("task_id", String(255), ForeignKey("tasks.task_id"), primary_key=True),
    Column("depends_on", String(255), ForeignKey("tasks.task_id"), primary_key=True),
    # optional: a dependency that can no longer finish is waited for no more (its dependent goes
    # ahead without its output) instead of blocking; a director pass is one.
    Column("optional", Boolean, nullable=False, default=False, server_default=false()),
    Index("ix_task_deps_on", "depends_on"),
    **_mysql,
)

attempts = Table(
    "attempts",
    metadata,
    Column("id", Serial, primary_key=True, autoincrement=True),
    Column("task_id", String(255), nullable=False),
    Column("attempt_no", Integer, nullable=False),
    Column("worker_id", String(128), nullable=False),
    Column("lease_token", String(32), nullable=False),
    Column("claimed_at", Time, nullable=False),
    Column("finished_at", Time),
    Column("outcome", String(16)),  # completed | failed | retried | lost | canceled; NULL while running
    Column("error_kind", String(64)),
    Column("error", Text),
    Column("cost", Float),
    Column("model", String(200)),
    Column("settings", OptionalJSON),
    Column("output_bytes", BigInteger),
    Column("remote_job_id", String(255)),
    # the sha256 of every file the output of this attempt is made of (main and side files,
    # space-separated), named by its accepted completion: `store gc` keeps each task's latest
    Column("output_blobs", Text),
    UniqueConstraint("task_id", "attempt_no", name="uq_attempts_no"),
    **_mysql,
)

events = Table(
    "events",
    metadata,
    Column("id", Serial, primary_key=True, autoincrement=True),
    Column("at", Time, nullable=False),
    Column("kind", String(32), nullable=False),  # claim, heartbeat, reclaim, stale, alert, ...
    Column("task_id", String(255)),
    Column("worker_id", String(128)),
    Column("lease_token", String(32)),
    Column("detail", OptionalJSON),
    Index("ix_events_kind_at", "kind", "at"),
    Index("ix_events_task", "task_id"),
    # Nobody reads an event's id back: no INSERT ... RETURNING id on PostgreSQL, which would need
    # SELECT on events, a privilege worker accounts do not have (security.py).
    implicit_returning=False,
    **_mysql,
)

workers = Table(
    "workers",
    metadata,
    Column("worker_id", String(128), primary_key=True),
    Column("uid", String(128)),
    Column("host", String(255)),
    Column("version", String(32)),
    Column("lanes", String(500)),
    Column("backend", String(64)),
    Column("started_at", Time),
    Column("last_seen_at", Time),
    Column("state", String(16)),  # working | idle | paused | stopped
    Column("lease_s", Float),  # its lease length: a heartbeat older than that = not responding
    # Why a paused worker waits ("comfyui at 10.0.0.5:8188 unreachable", "store unreachable")
    # and since when (database clock); both empty while it is not paused.
    Column("paused_reason", String(300)),
    Column("paused_since", Time),
    # The database account that registered it through the worker routines (db/routines.py):
    # only that account may write the row again, so one PC cannot mark another stopped.
    Column("account", String(128)),
    **_mysql,
)

# Providers a worker found unreachable: one row per (provider, worker), kept until `until`
# (the worker's next probe, plus a margin) so it expires by itself when that worker goes away;
# a probe that gets through sets `until` to now. When enough workers hold a live row for one
# provider, every worker skips the kinds it makes (engine/outages.py).
provider_outages = Table(
    "provider_outages",
    metadata,
    Column("provider", String(255), primary_key=True),
    Column("worker_id", String(128), primary_key=True),
    Column("since", Time, nullable=False),
    Column("until", Time, nullable=False),
    Column("reason", String(1000)),
    **_mysql,
)

# The output store in the database: content-addressed blobs, each in chunks small enough for
# MariaDB's max_allowed_packet. A blob row is written last, in the chunks' transaction, so a blob
# that has a row is whole; only a task's completion (its result's sha256) makes a blob an output.
Bytes = LargeBinary().with_variant(mysql.LONGBLOB(), "mysql", "mariadb")

store_blobs = Table(
    "store_blobs",
    metadata,
    Column("sha256", String(64), primary_key=True),
    Column("size", BigInteger, nullable=False),
    Column("chunks", Integer, nullable=False),
    Column("stored_at", Time, nullable=False),  # last written or found stored: sweeps spare it
    **_mysql,
)

store_chunks = Table(
    "store_chunks",
    metadata,
    Column("sha256", String(64), primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("data", Bytes, nullable=False),
    **_mysql,
)

# Chat answers by a hash of their input (model, messages, schema): a director task that is
# rerun, resumed after a kill, or given an unchanged chapter reads its answer here instead of
# paying for it again. Only answers that passed validation are kept.
llm_answers = Table(
    "llm_answers",
    metadata,
    Column("key", String(64), primary_key=True),  # sha256 hex of the request's input
    Column("model", String(200), nullable=False),
    Column("answer", LongText, nullable=False),  # the reply's text, as the model sent it
    Column("tokens_in", Integer),
    Column("tokens_out", Integer),
    Column("cost", Float, nullable=False, default=0.0),  # what the call cost when it was made
    Column("created_at", Time, nullable=False),
    **_mysql,
)
