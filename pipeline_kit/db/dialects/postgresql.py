"""PostgreSQL, a multi-PC engine: the claim and the completion are one statement each."""

from pipeline_kit.db.dialects import Dialect

DIALECT = Dialect(
    name="postgresql",
    sql_file="postgresql.sql",
    begin="BEGIN ISOLATION LEVEL READ COMMITTED",
    always_begins=False,
    # A timestamp without time zone, in UTC, from the real clock (not the transaction's start).
    now="(clock_timestamp() AT TIME ZONE 'UTC')",
    now_plus="((clock_timestamp() AT TIME ZONE 'UTC') + make_interval(secs => {secs}))",
    in_list=("= ANY(:{n})", "<> ALL(:{n})"),  # a list is one array parameter
    list_type=list,
    returning=True,
    claim_one_statement=True,  # UPDATE ... FROM (SELECT ... FOR UPDATE SKIP LOCKED) with a CTE for the attempts
    finish_one_statement=True,
    row_locks=True,
    notifies=True,
    batches=False,
    insert_ignore="INSERT INTO",
    insert_ignore_tail=" ON CONFLICT DO NOTHING",
)
