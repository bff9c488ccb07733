# One TSV line of a `wrk --latency` run: round r, variant v, req/s, p50 and p99 in µs, non-2xx.
# Used as `wrk ... | awk -v r="$round" -v v="$variant" -f bench/_wrk_line.awk`.
function us(s) { if (s ~ /us$/) return s + 0; if (s ~ /ms$/) return s * 1000; return s * 1e6 }
BEGIN { bad = 0 }
/^ +50%/ { p50 = us($2) }
/^ +99%/ { p99 = us($2) }
/^Requests\/sec/ { rps = $2 }
/Non-2xx or 3xx responses/ { bad += $NF }
END { printf "%s\t%s\t%s\t%s\t%s\t%s\n", r, v, rps, p50, p99, bad }
