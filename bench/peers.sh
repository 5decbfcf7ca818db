#!/usr/bin/env bash
# Same-day peer figures for `pipeline-kit bench --peers`: runs the read-only scripts of
# ../shared/bench-peers (never copied here) for procrastinate, pgqueuer and oban, each at its best
# configuration (concurrency 16; pgqueuer also its default), graphile-worker (Node, npm) in its fast
# configuration (batched), 1 and 2 processes, and raw_sqlite.py's bare claim-10 loop at 1, 2 and 4
# processes. About 12 minutes.
#   bench/peers.sh [OUT]            # OUT (relative to the repository) default reports/bench/peers
#   bench/engine.sh --peers reports/bench/peers
# Env: PIPELINE_KIT_PEERS_DIR (default ../shared/bench-peers), JOBS (20000), RUNS (3), LIB_PROCS ("1 2"),
#      PY312 (a Python 3.12 for oban's venv; default python3.12 if it runs, else a pyenv 3.12),
#      SQ_JOBS (100000, raw_sqlite.py's backlog), GRAPHILE_CONC (24), GRAPHILE_DIR (/tmp/pk-graphile:
#      where npm installs graphile-worker once),
#      PEERS (the ones to measure, default "procrastinate pgqueuer oban raw_sqlite graphile").
# Earlier figures in OUT move to OUT/old/<timestamp>/.
set -euo pipefail
cd "$(dirname "$0")/.."
peers_dir=${PIPELINE_KIT_PEERS_DIR:-../shared/bench-peers}
mkdir -p "${1:-reports/bench/peers}"
out=$(cd "${1:-reports/bench/peers}" && pwd)  # absolute: run_all.sh changes directory
peers=" ${PEERS:-procrastinate pgqueuer oban raw_sqlite graphile} "
has() { [[ "$peers" == *" $1 "* ]]; }
if ls "$out"/*.jsonl >/dev/null 2>&1; then  # as run_all.sh does, whichever peers run
  old="$out/old/$(date +%Y%m%d-%H%M%S)" && mkdir -p "$old" && mv "$out"/*.jsonl "$old"/
fi

if [ -z "${PY312:-}" ] && ! python3.12 -V >/dev/null 2>&1; then  # a pyenv shim may exist and not run
  PY312=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3.12 2>/dev/null | tail -n 1 || true)
fi
export PY312=${PY312:-}

# the peers' scripts connect to database `bench` first
if [ -z "$(psql -h 127.0.0.1 -U root -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'bench'")" ]; then
  psql -h 127.0.0.1 -U root -d postgres -qc "CREATE DATABASE bench"
fi

# the peers' venvs are made once (setup calls pip for every library, so only when one is missing)
venvs=${VENVS:-/tmp/venvs}
libs=""
for lib in procrastinate pgqueuer oban; do if has $lib; then libs+="$lib "; fi; done
for lib in $libs; do
  if [ ! -x "$venvs/$lib/bin/python" ]; then
    RESULTS="$out" KEEP=1 STEPS="setup" bash "$peers_dir/run_all.sh"
    break
  fi
done
# lib_bench.py's PostgreSQL plumbing imports psycopg in every library's venv, but setup_venvs.sh
# installs it only where the library itself needs it (not for pgqueuer, which uses asyncpg)
for lib in $libs; do
  py="$venvs/$lib/bin/python"
  "$py" -c "import psycopg" 2>/dev/null || "$py" -m pip install -q "psycopg[binary]" 2>&1 | grep -v '^WARNING' || true
done

if [ -n "$libs" ]; then
  RESULTS="$out" KEEP=1 STEPS="$libs summary" LIB_PROCS="${LIB_PROCS:-1 2}" LIB_CONCS=16 \
    JOBS="${JOBS:-20000}" RUNS="${RUNS:-3}" bash "$peers_dir/run_all.sh"
fi

# the bare claim-10 loop the SQLite goal compares with, run by the interpreter (and so the SQLite
# library) the engine's bench runs on; busy timeout mode, as the engine waits for the lock
if has raw_sqlite; then
  RESULTS="$out" JOBS="${SQ_JOBS:-100000}" SQ_BATCHES=10 SQ_MODES=timeout SQ_WORKERS="1 2 4" RUNS="${RUNS:-3}" \
    timeout 300 python "$peers_dir/raw_sqlite.py" || echo "!!! raw_sqlite.py failed: the SQLite goal is not measured" >&2
fi

# graphile-worker prints one line per run; pipeline_kit.bench.graphile makes it a libs.jsonl record
if has graphile; then
  mkdir -p "${GRAPHILE_DIR:-/tmp/pk-graphile}"
  for p in ${LIB_PROCS:-1 2}; do
    SCRATCH="${GRAPHILE_DIR:-/tmp/pk-graphile}" timeout 600 \
      bash "$peers_dir/graphile/bench.sh" "${JOBS:-20000}" "$p" "${GRAPHILE_CONC:-24}" batched "${RUNS:-3}" |
      tee /dev/stderr | python -m pipeline_kit.bench.graphile "${JOBS:-20000}" >>"$out/libs.jsonl" ||
      echo "!!! graphile-worker x$p failed (node, npm install?): not measured" >&2
  done
fi
echo "peer figures: $out/libs.jsonl and $out/raw_sqlite.jsonl; next: bench/engine.sh --peers $out"
