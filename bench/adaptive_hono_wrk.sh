#!/usr/bin/env bash
# The adaptive limit's overhead in `apf()`: a hello-world Hono app with `apf()` at the static limit
# (`apf-static`) and with `serverConcurrencyLimit: "auto"` (`apf-auto`), bench/adaptive_hono_server.ts,
# one server process per variant, both started first and warmed up, unpinned; then interleaved
# rounds at 16 and at 64 connections (the order of the variants reversed every other round), wrk
# pinned to core 1. After each round, on stderr, each server's GET /_adaptive (the learned limit,
# global-default's limit and demand, its waits). Prints one TSV line per measurement
# (bench/_wrk_line.awk), then medians and the paired ratio auto/static
# (bench/adaptive_hono_summary.ts).
#
# Usage: bench/adaptive_hono_wrk.sh [rounds=5] [seconds=8] [connections="16 64"]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
seconds=${2:-8}
read -r -a conns_list <<<"${3:-16 64}"
variants=(apf-static apf-auto)
out=${OUT:-$(mktemp /tmp/adaptive_hono_wrk.XXXXXX.tsv)}
base_port=${BASE_PORT:-18680}

pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

i=0
declare -A port
for v in "${variants[@]}"; do
  port[$v]=$((base_port + i))
  i=$((i + 1))
  deno run --allow-net=127.0.0.1 --allow-env --allow-read bench/adaptive_hono_server.ts "$v" \
    "${port[$v]}" >/dev/null &
  pids+=($!)
done
for v in "${variants[@]}"; do
  until curl -sf "http://127.0.0.1:${port[$v]}/" >/dev/null; do sleep 0.2; done
  taskset -c 1 wrk -t1 -c64 -d3s "http://127.0.0.1:${port[$v]}/" >/dev/null # warm-up
done

echo -e "round\tvariant\treq_per_s\tp50_us\tp99_us\tnon2xx" | tee "$out"
for r in $(seq 1 "$rounds"); do
  # Each round reverses the order of the last (A B, B A, ...): neither variant always runs first.
  order=("${variants[@]}")
  if [ $((r % 2)) -eq 0 ]; then order=("${variants[1]}" "${variants[0]}"); fi
  for conns in "${conns_list[@]}"; do
    for v in "${order[@]}"; do
      taskset -c 1 wrk -t1 -c"$conns" -d"${seconds}s" --latency "http://127.0.0.1:${port[$v]}/" |
        awk -v r="$r" -v v="$v@$conns" -f bench/_wrk_line.awk | tee -a "$out"
    done
  done
  for v in "${variants[@]}"; do
    echo "# round $r, $v: $(curl -sf "http://127.0.0.1:${port[$v]}/_adaptive")" >&2
  done
done
deno run --allow-read bench/adaptive_hono_summary.ts "$out"
