# Sourced by the fleet service's performance scripts (serve_cpu.sh, serve_soak.sh):
#   start_serve BUILD_DIR
# starts a fresh `vigil serve` of BUILD_DIR on a free loopback port, with a bearer token, in a new
# temporary directory, and sets $work (that directory: tok, fleet.db, port, serve.log), $server
# (the server's pid) and $url. Exits 3, the server stopped, when it does not start within 10 s.
start_serve() {
  local build=$1
  work=$(mktemp -d)
  echo t >"$work/tok"
  "$build/vigil" --quiet serve --db "$work/fleet.db" --listen 127.0.0.1:0 \
    --port-file "$work/port" --token-file "$work/tok" 2>"$work/serve.log" &
  server=$!
  for _ in $(seq 100); do [[ -s $work/port ]] && break; sleep 0.1; done
  if [[ ! -s $work/port ]]; then
    echo "vigil serve did not start: $(cat "$work/serve.log")" >&2
    kill "$server" 2>/dev/null || true
    exit 3
  fi
  url="http://127.0.0.1:$(cat "$work/port")"
}
