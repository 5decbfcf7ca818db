"""SQLite, the embedded default: one file, one writer at a time."""

from pipeline_kit.db.dialects import Dialect

DIALECT = Dialect(
    name="sqlite",
    sql_file="sqlite.sql",
    # The write lock is taken at BEGIN: no deadlock-prone upgrade from a read lock and no
    # BUSY_SNAPSHOT that no timeout can wait out, so even a lone statement runs inside one.
    begin="BEGIN IMMEDIATE",
    always_begins=True,
    # Text timestamps 'YYYY-MM-DD HH:MM:SS.SSS', compared as strings.
    now="strftime('%Y-%m-%d %H:%M:%f', 'now')",
    now_plus="strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.3f seconds', {secs}))",
    # No list binding: one placeholder per item (a text per list length, each prepared once by
    # the statement cache).
    in_list=None,
    list_type=list,
    returning=True,
    claim_one_statement=False,  # UPDATE ... RETURNING, then INSERT ... SELECT the attempts
    finish_one_statement=False,
    row_locks=False,
    notifies=False,
    batches=False,
    insert_ignore="INSERT INTO",
    insert_ignore_tail=" ON CONFLICT DO NOTHING",
)
