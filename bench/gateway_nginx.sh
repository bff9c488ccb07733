#!/usr/bin/env bash
# `apf serve` against nginx as a reverse proxy, side by side in one run: the same upstream (an
# nginx of its own answering "hello", one worker), in front of it nginx (one worker, keep-alive to
# the upstream, limit_conn) and `apf serve` with each upstream client (`http1`, `fetch`; built-in
# configuration: wrk sends X-Remote-User alice of system:authenticated, so every request is
# classified to global-default, whose 56 seats (49 and what it borrows) leave nothing waiting at 16
# connections and about a quarter of the requests waiting a moment at 64), started with the apf
# task's flags. Every server is
# started first and warmed up, unpinned; then interleaved rounds run every variant at 16 and at 64
# connections with wrk pinned to core 1. Prints one TSV line per measurement (with the CPU time,
# user and system, that the server under test spent per request), then medians and the
# paired ratio to nginx at the same connections (bench/gateway_nginx_summary.ts).
#
# nginx comes from Debian (nginx-light): installed with apt-get where missing and allowed; where it
# cannot be, the script says so and measures the apf variants only.
#
# Usage: bench/gateway_nginx.sh [rounds=5] [seconds=10] [variants="nginx apf-http1 apf-fetch"]
# (variant apf-base: the gateway of the checkout in APF_BASELINE, with its default client;
# deno-relay and http-only: the floors of bench/gateway_floor_server.ts, a raw socket relay and the
# gateway's server and client without APF)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
seconds=${2:-10}
read -r -a variants <<<"${3:-nginx apf-http1 apf-fetch}"
out=${OUT:-$(mktemp /tmp/gateway_nginx.XXXXXX.tsv)}
base_port=${BASE_PORT:-18380}
headers=(-H "X-Remote-User: alice" -H "X-Remote-Group: system:authenticated")
work=$(mktemp -d /tmp/gateway_nginx.XXXXXX)

# nginx_bin (variant nginx dropped where missing), pids (stopped on exit), nginx_with.
source bench/_nginx.sh

up_port=$base_port
declare -A port server
if [ -x "$nginx_bin" ]; then
  nginx_with upstream "server { listen 127.0.0.1:$up_port; keepalive_requests 100000;
    location / { default_type text/plain; return 200 \"hello\"; } }"
else
  deno run --allow-net=127.0.0.1 --allow-env --allow-read bench/serve_wrk_server.ts upstream \
    "$up_port" >/dev/null &
  pids+=($!)
fi
# The apf task's flags, as `deno task apf` runs the gateway.
read -r -a apf_flags <<<"$(deno eval --quiet 'const t = JSON.parse(Deno.readTextFileSync("deno.json")).tasks.apf.split(/\s+/); console.log(t.slice(2, t.indexOf("src/cli/main.ts")).join(" "))')"
i=1
for v in "${variants[@]}"; do
  port[$v]=$((base_port + i))
  i=$((i + 1))
  case "$v" in
  nginx)
    nginx_with proxy "upstream up { server 127.0.0.1:$up_port; keepalive 256; }
      limit_conn_zone \$server_name zone=perserver:1m;
      server { listen 127.0.0.1:${port[$v]}; keepalive_requests 100000;
        location / { limit_conn perserver 600; proxy_pass http://up;
          proxy_http_version 1.1; proxy_set_header Connection \"\"; } }"
    ;;
  deno-relay | http-only)
    # Floors under the gateway (bench/gateway_floor_server.ts): a raw socket relay, and the
    # gateway's own server and HTTP/1.1 client with no APF.
    mode=$([ "$v" = deno-relay ] && echo relay || echo http)
    deno run --quiet --allow-net=127.0.0.1 bench/gateway_floor_server.ts "$mode" "${port[$v]}" \
      "$up_port" >/dev/null &
    pids+=($!)
    ;;
  apf-base)
    # The same gateway from another checkout (APF_BASELINE=<dir>, e.g. from `git archive`), to
    # compare a change with what it replaces in one run.
    (cd "${APF_BASELINE:?apf-base needs APF_BASELINE}" && exec deno run --quiet "${apf_flags[@]}" \
      src/cli/main.ts serve --upstream "http://127.0.0.1:$up_port" --listen "127.0.0.1:${port[$v]}" \
      --trust-identity-headers >/dev/null) &
    pids+=($!)
    ;;
  apf-*)
    deno run --quiet "${apf_flags[@]}" src/cli/main.ts serve --upstream "http://127.0.0.1:$up_port" \
      --listen "127.0.0.1:${port[$v]}" --trust-identity-headers --upstream-client "${v#apf-}" \
      >/dev/null &
    pids+=($!)
    ;;
  *) echo "unknown variant $v" >&2 && exit 2 ;;
  esac
  server[$v]=${pids[-1]}
done
for v in "${variants[@]}"; do
  until curl -sf "${headers[@]}" "http://127.0.0.1:${port[$v]}/" >/dev/null; do sleep 0.2; done
  taskset -c 1 wrk -t1 -c64 -d3s "${headers[@]}" "http://127.0.0.1:${port[$v]}/" >/dev/null
  # nginx's requests are served by its worker, the master's child.
  [ "$v" = nginx ] && server[$v]=$(pgrep -P "${server[$v]}" | head -1)
done

# The CPU time (user and system, in clock ticks) the server of variant $1 used so far.
cpu_ticks() { awk '{ print $14, $15 }' "/proc/${server[$1]}/stat" 2>/dev/null || echo "0 0"; }
tick_us=$((1000000 / $(getconf CLK_TCK)))

echo -e "round\tvariant\treq_per_s\tp50_us\tp99_us\tnon2xx\tuser_us\tsys_us" | tee "$out"
for r in $(seq 1 "$rounds"); do
  for conns in 16 64; do
    for v in "${variants[@]}"; do
      read -r u0 s0 <<<"$(cpu_ticks "$v")"
      result=$(taskset -c 1 wrk -t1 -c"$conns" -d"${seconds}s" --latency "${headers[@]}" \
        "http://127.0.0.1:${port[$v]}/")
      read -r u1 s1 <<<"$(cpu_ticks "$v")"
      requests=$(awk '/ requests in / { print $1 }' <<<"$result")
      # The server's CPU time per request, user and system, in µs.
      cpu="$(((u1 - u0) * tick_us / ${requests:-1}))\t$(((s1 - s0) * tick_us / ${requests:-1}))"
      echo -e "$(awk -v r="$r" -v v="$v@$conns" -f bench/_wrk_line.awk <<<"$result")\t$cpu" |
        tee -a "$out"
    done
  done
done
deno run --allow-read bench/gateway_nginx_summary.ts "$out"
