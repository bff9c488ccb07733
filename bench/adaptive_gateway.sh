#!/usr/bin/env bash
# The adaptive server concurrency limit (`apf serve --server-concurrency auto`) against a worker
# pool: bench/adaptive_upstream.ts (K = 8 workers of S = 50 ms, FIFO beyond K), 48 closed-loop
# elephants (one user, one flow) and one mouse (user `mouse`, 100 ms of think time) from
# bench/adaptive_load.ts through `apf serve` (built-in configuration, --trust-identity-headers: both
# users in group system:authenticated, so global-default, flows by user), started with the apf
# task's flags and an admin listener the load polls for the learned limit. Variants:
#
# - `auto`: `--server-concurrency auto`, 90 s: K = 8, K = 4 from 30 s, K = 8 from 60 s;
# - `fifo`: the gradient alone, the same for 90 s with global-default replaced (--config) by a level
#   of the same shares with one queue (queues 1, handSize 1, queueLengthLimit 128): the same
#   gateway, levels and learned limit, no fair queuing between the elephants and the mouse;
# - `static-N`: `--server-concurrency N`, 30 s at K = 8 (the steady phase only). ServerCL is shared
#   by the 8 built-in levels: with only global-default busy, it gets 7, 8, 9, 11, 15 and 30 seats at
#   N = 8, 9, 10, 13, 24 and 48 after the first borrowing adjustment (at 10 s; 2 to 5 seats before),
#   which the load reads from the admin metrics (`apiserver_flowcontrol_current_limit_seats`).
#
# A fresh gateway per run (each learns from its cold start); the upstream runs throughout, reset
# by each run. Interleaved rounds; the load pinned to core 1 with taskset, the servers unpinned.
# Appends JSON lines to $OUT (default a new file under /tmp), then prints the summary
# (bench/adaptive_summary.ts).
#
# Usage: bench/adaptive_gateway.sh [rounds=3] [statics="8 9 10 13 24 48"] [variants="auto fifo static"]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
read -r -a statics <<<"${2:-8 9 10 13 24 48}"
read -r -a kinds <<<"${3:-auto fifo static}"
out=${OUT:-$(mktemp /tmp/adaptive_gateway.XXXXXX.jsonl)}
base_port=${BASE_PORT:-18580}
up_port=$base_port
gw_port=$((base_port + 1))
admin_port=$((base_port + 2))
work=$(mktemp -d /tmp/adaptive_gateway.XXXXXX)
headers=(-H "X-Remote-User: probe" -H "X-Remote-Group: system:authenticated")

# pids (stopped on exit, with `work` removed): bench/_processes.sh.
source bench/_processes.sh

# global-default as one FIFO: the built-in level's shares and lending, one queue.
cat >"$work/fifo.yaml" <<'EOF'
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata:
  name: global-default
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 20
    lendablePercent: 50
    limitResponse:
      type: Queue
      queuing:
        queues: 1
        handSize: 1
        queueLengthLimit: 128
EOF

deno run --allow-net=127.0.0.1 bench/adaptive_upstream.ts "$up_port" >"$work/upstream.log" 2>&1 &
pids+=($!)
until curl -sf -X POST "http://127.0.0.1:$up_port/_ctl/workers?k=8" >/dev/null; do sleep 0.2; done

# The apf task's flags, as `deno task apf` runs the gateway.
read -r -a apf_flags <<<"$(deno eval --quiet 'const t = JSON.parse(Deno.readTextFileSync("deno.json")).tasks.apf.split(/\s+/); console.log(t.slice(2, t.indexOf("src/cli/main.ts")).join(" "))')"

# One run: a fresh gateway with the given flags, the load for `seconds`, the gateway stopped.
run() {
  local variant=$1 round=$2 seconds=$3 changes=$4
  shift 4
  deno run --quiet "${apf_flags[@]}" src/cli/main.ts serve --upstream "http://127.0.0.1:$up_port" \
    --listen "127.0.0.1:$gw_port" --admin-listen "127.0.0.1:$admin_port" --trust-identity-headers \
    "$@" >"$work/gateway-$variant-$round.log" 2>&1 &
  local gw=$!
  pids+=($gw)
  until curl -sf "${headers[@]}" "http://127.0.0.1:$gw_port/ready" >/dev/null; do sleep 0.2; done
  taskset -c 1 deno run --allow-net=127.0.0.1 --allow-sys=loadavg --allow-write="$out" \
    bench/adaptive_load.ts --gateway "http://127.0.0.1:$gw_port" \
    --upstream "http://127.0.0.1:$up_port" --admin "http://127.0.0.1:$admin_port" --out "$out" \
    --label "variant=$variant,round=$round" --seconds "$seconds" --changes "$changes"
  kill -TERM "$gw"
  wait "$gw" || true
}

echo "results: $out" >&2
for r in $(seq 1 "$rounds"); do
  for kind in "${kinds[@]}"; do
    case "$kind" in
    auto) run auto "$r" 90 "30:4,60:8" --server-concurrency auto ;;
    fifo) run fifo "$r" 90 "30:4,60:8" --server-concurrency auto --config "$work/fifo.yaml" ;;
    static) for n in "${statics[@]}"; do run "static-$n" "$r" 30 "" --server-concurrency "$n"; done ;;
    *) echo "unknown variant $kind" >&2 && exit 2 ;;
    esac
  done
done
deno run --allow-read bench/adaptive_summary.ts "$out"
