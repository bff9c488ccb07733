# Sourced by the bench scripts that start servers: `pids` (append each background process's pid),
# stopped with SIGTERM on exit, and `work` (a scratch directory, when the script set one) removed.

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "${work:-}" ]; then rm -rf "$work"; fi
}
trap cleanup EXIT
