# Sourced by the bench scripts that run nginx (bench/gateway_nginx.sh, bench/gateway_idle_memory.sh),
# after they set `work` (a scratch directory) and `variants`: `nginx_bin` (installed from Debian's
# nginx-light with apt-get where missing and allowed; where it cannot be, the variant `nginx` is
# dropped from `variants`, with a message: test `[ -x "$nginx_bin" ]`), `pids` (the processes
# started, stopped on exit, when `work` is removed) and `nginx_with`.

nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
if [ ! -x "$nginx_bin" ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light) \
    >/dev/null 2>&1 || true
fi
if [ ! -x "$nginx_bin" ]; then
  echo "nginx is not installed and could not be: measuring the other variants only" >&2
  read -r -a variants <<<"$(printf '%s\n' "${variants[@]}" | grep -v '^nginx$' | tr '\n' ' ')"
fi

# pids (stopped on exit, with `work` removed): bench/_processes.sh.
source bench/_processes.sh

# nginx_with name server [worker_connections=4096]: an nginx of one worker with `server` as its only
# server block, in the foreground; its pid goes last in `pids`.
nginx_with() {
  local name=$1 server=$2 connections=${3:-4096}
  mkdir -p "$work/$name"
  cat >"$work/$name/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $work/$name/nginx.pid;
error_log $work/$name/error.log warn;
events { worker_connections $connections; }
http {
  access_log off;
  client_body_temp_path $work/$name;
  proxy_temp_path $work/$name;
  fastcgi_temp_path $work/$name;
  uwsgi_temp_path $work/$name;
  scgi_temp_path $work/$name;
  $server
}
CONF
  "$nginx_bin" -c "$work/$name/nginx.conf" -e "$work/$name/error.log" &
  pids+=($!)
}
