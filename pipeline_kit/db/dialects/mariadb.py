"""MariaDB (10.6 or newer, for SKIP LOCKED), a multi-PC engine with no UPDATE ... RETURNING."""

from pipeline_kit.db.dialects import Dialect

DIALECT = Dialect(
    name="mysql",  # SQLAlchemy's name for it
    sql_file="mariadb.sql",
    begin="START TRANSACTION",  # the session is READ COMMITTED (set on connect)
    always_begins=False,
    now="UTC_TIMESTAMP(6)",  # DATETIME(6)
    now_plus="TIMESTAMPADD(MICROSECOND, CAST(ROUND({secs} * 1000000) AS SIGNED), UTC_TIMESTAMP(6))",
    in_list=("IN :{n}", "NOT IN :{n}"),  # PyMySQL writes a tuple out as (a, b, c)
    list_type=tuple,
    returning=False,
    claim_one_statement=False,  # lock the ids, update them, read them back, open the attempts
    finish_one_statement=False,  # the accept's row count says whether all were taken
    row_locks=True,
    notifies=False,
    # Several statements per request: BEGIN and what nobody waits for go with the next one.
    batches=True,
    insert_ignore="INSERT IGNORE INTO",
    insert_ignore_tail="",
)
