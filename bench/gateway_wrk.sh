#!/usr/bin/env bash
# wrk benchmark of the gateway's added latency: wrk straight at an
# upstream (`direct`), through a plain `fetch` reverse proxy without APF
# (`proxy`), and through `apf serve` (`gateway`, built-in configuration,
# --trust-identity-headers; wrk sends X-Remote-User: alice, X-Remote-Group:
# system:authenticated to every variant, so the gateway classifies it to
# global-default, 56 seats at server concurrency 600: nothing waits or is
# rejected). Servers are started first, unpinned, and warmed up; then
# interleaved rounds, each running every connection count and every variant,
# wrk pinned to core 1. Prints one TSV line per measurement, then medians
# and differences (bench/gateway_wrk_summary.ts).
#
# Usage: bench/gateway_wrk.sh [rounds=5] [seconds=10] [connections="1 16"] [upstream delay ms=0]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
seconds=${2:-10}
read -r -a conns <<<"${3:-1 16}"
delay=${4:-0}
out=${OUT:-$(mktemp /tmp/gateway_wrk.XXXXXX.tsv)}
base_port=${BASE_PORT:-18180}
up_port=$base_port
proxy_port=$((base_port + 1))
gw_port=$((base_port + 2))
variants=(direct proxy gateway)
declare -A port=([direct]=$up_port [proxy]=$proxy_port [gateway]=$gw_port)
headers=(-H "X-Remote-User: alice" -H "X-Remote-Group: system:authenticated")

# pids (stopped on exit, with `work` removed): bench/_processes.sh.
source bench/_processes.sh

deno run --allow-net=127.0.0.1 bench/gateway_wrk_server.ts upstream "$up_port" "$delay" >/dev/null &
pids+=($!)
deno run --allow-net=127.0.0.1 bench/gateway_wrk_server.ts proxy "$proxy_port" "http://127.0.0.1:$up_port" >/dev/null &
pids+=($!)
deno run --allow-net=127.0.0.1 --allow-read --allow-env=LOG_TOKENS,LOG_STREAM,INIT_CWD src/cli/main.ts serve \
  --upstream "http://127.0.0.1:$up_port" --listen "127.0.0.1:$gw_port" --trust-identity-headers >/dev/null &
pids+=($!)
for v in "${variants[@]}"; do
  until curl -sf "${headers[@]}" "http://127.0.0.1:${port[$v]}/" >/dev/null; do sleep 0.2; done
  for c in "${conns[@]}"; do
    taskset -c 1 wrk -t1 -c"$c" -d3s "${headers[@]}" "http://127.0.0.1:${port[$v]}/" >/dev/null # warm-up
  done
done

echo -e "round\tconnections\tvariant\treq_per_s\tp50_us\tp99_us\tnon2xx" | tee "$out"
for r in $(seq 1 "$rounds"); do
  for c in "${conns[@]}"; do
    for v in "${variants[@]}"; do
      taskset -c 1 wrk -t1 -c"$c" -d"${seconds}s" --latency "${headers[@]}" "http://127.0.0.1:${port[$v]}/" |
        awk -v r="$r" -v c="$c" -v v="$v" '
          function us(s) { if (s ~ /us$/) return s + 0; if (s ~ /ms$/) return s * 1000; return s * 1e6 }
          BEGIN { bad = 0 }
          /^ +50%/ { p50 = us($2) } /^ +99%/ { p99 = us($2) } /^Requests\/sec/ { rps = $2 }
          /Non-2xx or 3xx responses/ { bad += $NF } /Socket errors/ { bad += 0 }
          END { printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r, c, v, rps, p50, p99, bad }' | tee -a "$out"
    done
  done
done
deno run --allow-read bench/gateway_wrk_summary.ts "$out"
