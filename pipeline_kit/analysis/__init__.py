"""Analysis: the task, attempt and event tables read into pandas and DuckDB, metrics, replay,
simulation, charts and reports. It reads the database only: never the worker or a backend."""
