#!/usr/bin/env bash
# Memory per idle keep-alive client connection: `apf serve` (built-in configuration, the apf task's
# flags) and nginx as a reverse proxy (one worker, keep-alive to the upstream), in front of the same
# upstream (an nginx answering "hello"). For each, `count` connections each send one request, read
# its response and stay open (bench/_idle_clients.ts); the server's resident memory (VmRSS of its
# process, nginx's worker) is read before and after, and the difference divided by `count`.
# Repeated `rounds` times, each server started afresh. nginx comes from Debian (nginx-light): the
# script installs it where missing and allowed, else says so and measures `apf serve` alone.
#
# Usage: bench/gateway_idle_memory.sh [count=4000] [rounds=3] [variants="nginx apf"]
# (variant apf-base: the gateway of the checkout in APF_BASELINE)
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-4000}
rounds=${2:-3}
read -r -a variants <<<"${3:-nginx apf}"
port=${BASE_PORT:-18480}
work=$(mktemp -d /tmp/gateway_idle_memory.XXXXXX)
# nginx_bin (variant nginx dropped where missing), pids (stopped on exit), nginx_with.
source bench/_nginx.sh

up=$port
if [ -x "$nginx_bin" ]; then
  nginx_with upstream "server { listen 127.0.0.1:$up; keepalive_requests 100000;
    location / { default_type text/plain; return 200 \"hello\"; } }"
else
  deno run --allow-net=127.0.0.1 --allow-env --allow-read bench/serve_wrk_server.ts upstream "$up" \
    >/dev/null &
  pids+=($!)
fi
read -r -a apf_flags <<<"$(deno eval --quiet 'const t = JSON.parse(Deno.readTextFileSync("deno.json")).tasks.apf.split(/\s+/); console.log(t.slice(2, t.indexOf("src/cli/main.ts")).join(" "))')"

rss_kb() { awk '/VmRSS/ { print $2 }' "/proc/$1/status"; }

echo -e "round\tvariant\tconnections\tbytes_per_connection"
for r in $(seq 1 "$rounds"); do
  for v in "${variants[@]}"; do
    listen=$((port + 1))
    case "$v" in
    nginx)
      nginx_with "proxy$r" "upstream up { server 127.0.0.1:$up; keepalive 256; }
        server { listen 127.0.0.1:$listen; keepalive_requests 100000; keepalive_timeout 300s;
          location / { proxy_pass http://up; proxy_http_version 1.1; proxy_set_header Connection \"\"; } }" \
        $((count + 100))
      ;;
    apf | apf-base)
      dir=$([ "$v" = apf ] && echo . || echo "${APF_BASELINE:?apf-base needs APF_BASELINE}")
      (cd "$dir" && exec deno run --quiet "${apf_flags[@]}" src/cli/main.ts serve \
        --upstream "http://127.0.0.1:$up" --listen "127.0.0.1:$listen" --trust-identity-headers \
        --idle-timeout 300s >/dev/null) &
      pids+=($!)
      ;;
    *) echo "unknown variant $v" >&2 && exit 2 ;;
    esac
    server=${pids[-1]}
    until curl -sf -H "X-Remote-User: alice" "http://127.0.0.1:$listen/" >/dev/null; do sleep 0.2; done
    [ "$v" = nginx ] && server=$(pgrep -P "$server" | head -1)
    before=$(rss_kb "$server")
    coproc clients { deno run --quiet --allow-net=127.0.0.1 bench/_idle_clients.ts "$listen" "$count"; }
    read -r _ <&"${clients[0]}"
    sleep 1
    after=$(rss_kb "$server")
    exec {clients[1]}>&-
    wait "$clients_PID" 2>/dev/null || true
    echo -e "$r\t$v\t$count\t$(((after - before) * 1024 / count))"
    kill -TERM "${pids[-1]}" 2>/dev/null || true
    wait "${pids[-1]}" 2>/dev/null || true
    unset 'pids[-1]'
  done
done
