#!/usr/bin/env bash
# wrk benchmark of the HTTP servers `apf serve` and `apf coordinator` can
# run on (bench/serve_wrk_server.ts): each variant `<server>/<app>` is one
# process, unpinned; all are started first and warmed up, then interleaved
# rounds run every variant in turn with wrk pinned to core 1. wrk sends
# X-Remote-User: alice and X-Remote-Group: system:authenticated, so the
# gateway app classifies to global-default (nothing waits). Prints one TSV
# line per measurement, then medians and ratios (bench/serve_wrk_summary.ts).
#
# Usage: bench/serve_wrk.sh [rounds=5] [seconds=10] [connections=16] [variants="deno/hello guarded/hello ..."]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
seconds=${2:-10}
conns=${3:-16}
read -r -a variants <<<"${4:-deno/hello guarded/hello guarded-ws/hello node/hello deno/proxy guarded/proxy node/proxy deno/gateway guarded/gateway node/gateway}"
out=${OUT:-$(mktemp /tmp/serve_wrk.XXXXXX.tsv)}
base_port=${BASE_PORT:-18280}
headers=(-H "X-Remote-User: alice" -H "X-Remote-Group: system:authenticated")
flags=(--allow-net=127.0.0.1 --allow-env --allow-read)

# pids (stopped on exit, with `work` removed): bench/_processes.sh.
source bench/_processes.sh

up_port=$base_port
deno run "${flags[@]}" bench/serve_wrk_server.ts upstream "$up_port" >/dev/null &
pids+=($!)
declare -A port
i=1
for v in "${variants[@]}"; do
  port[$v]=$((base_port + i))
  i=$((i + 1))
  deno run "${flags[@]}" bench/serve_wrk_server.ts "${v%/*}" "${v#*/}" "${port[$v]}" \
    "http://127.0.0.1:$up_port" >/dev/null &
  pids+=($!)
done
for v in "${variants[@]}"; do
  until curl -sf "${headers[@]}" "http://127.0.0.1:${port[$v]}/" >/dev/null; do sleep 0.2; done
  taskset -c 1 wrk -t1 -c"$conns" -d3s "${headers[@]}" "http://127.0.0.1:${port[$v]}/" >/dev/null
done

echo -e "round\tvariant\treq_per_s\tp50_us\tp99_us\tnon2xx" | tee "$out"
for r in $(seq 1 "$rounds"); do
  for v in "${variants[@]}"; do
    taskset -c 1 wrk -t1 -c"$conns" -d"${seconds}s" --latency "${headers[@]}" "http://127.0.0.1:${port[$v]}/" |
      awk -v r="$r" -v v="$v" -f bench/_wrk_line.awk | tee -a "$out"
  done
done
deno run --allow-read bench/serve_wrk_summary.ts "$out" ${REFERENCE:-}
