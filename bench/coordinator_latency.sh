#!/usr/bin/env bash
# Latency of the remote coordinator's client by transport (Deno's WebSocket
# vs noDelayWebSocket): starts `apf coordinator` (unpinned), then runs
# interleaved rounds, each running every K with both transports (their order
# alternating between rounds), the client pinned to core 1. Prints one JSON
# line per measurement, then the medians (bench/coordinator_latency_summary.ts).
#
# Usage: bench/coordinator_latency.sh [rounds=3] [durationMs=4000] [Ks="1 8 64"]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
duration=${2:-4000}
read -r -a ks <<<"${3:-1 8 64}"
port=${PORT:-17777}
out=${OUT:-$(mktemp /tmp/coordinator_latency.XXXXXX.ndjson)}

deno run -q --allow-net=127.0.0.1 --allow-read --allow-env=LOG_TOKENS,LOG_STREAM,INIT_CWD \
  src/cli/main.ts coordinator --listen "127.0.0.1:$port" --server-concurrency 10000 >/dev/null &
server=$!
trap 'kill -TERM $server 2>/dev/null || true; wait 2>/dev/null || true' EXIT
sleep 2

for round in $(seq 1 "$rounds"); do
  if ((round % 2)); then order=(builtin nodelay); else order=(nodelay builtin); fi
  for k in "${ks[@]}"; do
    for t in "${order[@]}"; do
      line=$(taskset -c 1 deno run -q --allow-net=127.0.0.1 bench/coordinator_latency.ts "$port" "$k" "$t" "$duration")
      echo "{\"round\":$round,${line:1}" | tee -a "$out"
    done
  done
done
deno run -q --allow-read bench/coordinator_latency_summary.ts "$out"
