#!/usr/bin/env bash
# wrk benchmark of Hono middleware on Deno: bare app, a no-op
# middleware, apf(), hono-rate-limiter. One server process per variant, all
# started first and warmed up; then interleaved rounds, wrk pinned to core 1,
# servers unpinned. Prints one TSV line per measurement, then medians and
# ratios to the no-op middleware (bench/hono_wrk_summary.ts).
#
# Usage: bench/hono_wrk.sh [rounds=5] [seconds=10] [connections=16] [variants="bare noop apf ratelimit"]
# Extra server flags (e.g. --cpu-prof) via SERVER_FLAGS; REFERENCE=<variant> adds paired ratios to it.
# The TSV's last column is the server process's CPU time (user + system, every thread) per
# request during the round, in µs: steadier than req/s when other work shares the cores.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
seconds=${2:-10}
conns=${3:-16}
read -r -a variants <<<"${4:-bare noop apf ratelimit}"
out=${OUT:-$(mktemp /tmp/hono_wrk.XXXXXX.tsv)}
base_port=${BASE_PORT:-18080}

# pids (stopped on exit, with `work` removed): bench/_processes.sh.
source bench/_processes.sh

i=0
declare -A port pid
for v in "${variants[@]}"; do
  port[$v]=$((base_port + i))
  i=$((i + 1))
  # shellcheck disable=SC2086
  deno run --allow-net=127.0.0.1 --allow-env --allow-read ${SERVER_FLAGS:-} \
    bench/hono_wrk_server.ts "$v" "${port[$v]}" >/dev/null &
  pids+=($!)
  pid[$v]=$!
done
# CPU time of a process in clock ticks: utime + stime, fields 14 and 15 of /proc/<pid>/stat
# (after the command name, which is in parentheses and may hold spaces).
cpu_ticks() { local s; s=$(<"/proc/$1/stat"); s=${s##*) }; read -r -a f <<<"$s"; echo $((f[11] + f[12])); }
hz=$(getconf CLK_TCK)
for v in "${variants[@]}"; do
  until curl -sf "http://127.0.0.1:${port[$v]}/" >/dev/null; do sleep 0.2; done
  taskset -c 1 wrk -t1 -c"$conns" -d3s "http://127.0.0.1:${port[$v]}/" >/dev/null # warm-up
done

echo -e "round\tvariant\treq_per_s\tp50_us\tp99_us\tcpu_us_per_req" | tee "$out"
for r in $(seq 1 "$rounds"); do
  for v in "${variants[@]}"; do
    before=$(cpu_ticks "${pid[$v]}")
    report=$(taskset -c 1 wrk -t1 -c"$conns" -d"${seconds}s" --latency "http://127.0.0.1:${port[$v]}/")
    after=$(cpu_ticks "${pid[$v]}")
    awk -v r="$r" -v v="$v" -v ticks=$((after - before)) -v hz="$hz" '
        function us(s) { if (s ~ /us$/) return s + 0; if (s ~ /ms$/) return s * 1000; return s * 1e6 }
        /^ +50%/ { p50 = us($2) } /^ +99%/ { p99 = us($2) } /^Requests\/sec/ { rps = $2 }
        / requests in / { n = $1 }
        END { printf "%s\t%s\t%s\t%s\t%s\t%.2f\n", r, v, rps, p50, p99, ticks / hz * 1e6 / n }' \
      <<<"$report" | tee -a "$out"
  done
done
deno run --allow-read bench/hono_wrk_summary.ts "$out" ${REFERENCE:-}
