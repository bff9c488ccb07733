#!/usr/bin/env bash
# Instructions per request of `apf serve` (http1 client, built-in configuration, nothing waiting),
# counted by valgrind's cachegrind: a measure a noisy machine does not move, where req/s and CPU
# time do. Each variant runs twice under cachegrind, for N1 and for N2 requests (16 at a time, on
# kept-alive connections, to an nginx answering "hello"); (Ir(N2) - Ir(N1)) / (N2 - N1) leaves out
# the start, the first N1 requests (the JIT warming up) and the shutdown. All threads count (the
# JIT's compiler threads and the GC's too). The variants: this checkout and, with
# APF_BASELINE=<dir> (e.g. a `git archive` of another commit), that one; with FLOORS=1, the two
# floors of bench/gateway_floor_server.ts (a raw socket relay; the server and client without APF).
#
# Usage: bench/gateway_instructions.sh [n1=1000] [n2=11000] (fewer keep some of the JIT's warm-up)
# (CONCURRENCY=64: 64 requests at a time instead of 16; under valgrind the gateway is so slow that
# they are all in flight, and beyond the 56 seats of global-default some of them wait in queues.)
# Needs valgrind (apt-get install valgrind) and nginx (nginx-light); says so and stops without.
set -euo pipefail
cd "$(dirname "$0")/.."
n1=${1:-1000}
n2=${2:-11000}
port=${BASE_PORT:-18480}
for tool in valgrind nginx; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed: nothing measured" >&2; exit 0; }
done
work=$(mktemp -d /tmp/gateway_instructions.XXXXXX)
# pids (stopped on exit, with `work` removed): bench/_processes.sh.
source bench/_processes.sh
cat >"$work/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $work/nginx.pid;
error_log $work/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $work; proxy_temp_path $work; fastcgi_temp_path $work;
  uwsgi_temp_path $work; scgi_temp_path $work;
  server { listen 127.0.0.1:$port; keepalive_requests 100000;
    location / { default_type text/plain; return 200 "hello"; } }
}
CONF
nginx -c "$work/nginx.conf" -e "$work/error.log" &
pids+=($!)
read -r -a apf_flags <<<"$(deno eval --quiet 'const t = JSON.parse(Deno.readTextFileSync("deno.json")).tasks.apf.split(/\s+/); console.log(t.slice(2, t.indexOf("src/cli/main.ts")).join(" "))')"
headers=(-H "X-Remote-User: alice" -H "X-Remote-Group: system:authenticated")

# Instructions of one gateway of checkout $1 serving $2 requests (with $1 "floor:relay" or
# "floor:http", the floor of bench/gateway_floor_server.ts of this checkout).
instructions() {
  local dir=$1 n=$2 out="$work/cg.out"
  local cmd=(run --quiet "${apf_flags[@]}" src/cli/main.ts serve --upstream "http://127.0.0.1:$port"
    --listen "127.0.0.1:$((port + 1))" --trust-identity-headers)
  if [[ $dir == floor:* ]]; then
    cmd=(run --quiet --allow-net=127.0.0.1 bench/gateway_floor_server.ts "${dir#floor:}"
      "$((port + 1))" "$port")
    dir=.
  fi
  (cd "$dir" && exec valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$out" \
    --smc-check=all-non-file "$(command -v deno)" "${cmd[@]}" >/dev/null 2>&1) &
  local pid=$!
  until curl -sf "${headers[@]}" "http://127.0.0.1:$((port + 1))/" >/dev/null 2>&1; do sleep 0.5; done
  deno run --quiet --allow-net=127.0.0.1 bench/_fixed_load.ts "$((port + 1))" "$n" "${CONCURRENCY:-16}"
  kill -INT "$pid"
  wait "$pid" || true
  awk '/^summary:/ { print $2 }' "$out"
}

variants=(".")
[ -n "${APF_BASELINE:-}" ] && variants+=("$APF_BASELINE")
[ -n "${FLOORS:-}" ] && variants+=(floor:relay floor:http)
echo -e "variant\tinstructions_per_request"
for dir in "${variants[@]}"; do
  a=$(instructions "$dir" "$n1")
  b=$(instructions "$dir" "$n2")
  name=$([ "$dir" = "." ] && echo this || echo "$dir")
  echo -e "$name\t$(((b - a) / (n2 - n1)))"
done
