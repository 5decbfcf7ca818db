#!/usr/bin/env bash
# The engine benchmark in one command (scratch databases only; see bench/README.md).
#   bench/engine.sh                 # full: sqlite, postgresql, mariadb; workers 1,2,4,8; batches 1,10; 3 runs
#   bench/engine.sh --quick         # ~20 s smoke run
#   bench/engine.sh --databases sqlite --tasks 5000 --json
set -euo pipefail
cd "$(dirname "$0")/.."
exec python -m pipeline_kit bench "$@"
