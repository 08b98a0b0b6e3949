#!/usr/bin/env bash
# User-space instructions per request of one server, counted by valgrind's callgrind: unlike
# req/s, the count repeats within ~2% from run to run and whatever else the machine is doing, so a
# change of 1% shows (docs/benchmarks.md, "Instructions per request"). Kernel work (the socket
# writes) is not counted, and code runs ~50× slower under valgrind, so warm-up is by count.
#   bench/instructions.sh <server.js> [path]        e.g. bench/instructions.sh dist/src/main.js /health
#   bench/instructions.sh bench/baseline-server.ts   the bare Fastify baseline
# LOGIN=1 logs in as the bench admin first and sends its token (for /api/v1/verify-token).
# LOGIN_BODY=1 posts the bench admin's credentials instead (for /api/v1/login; use small counts,
# argon2 under valgrind takes about a second a hash: WARMUP=300 REQUESTS=200).
# WARMUP (default 20000), REQUESTS (default 10000) and CONNECTIONS (default 8) set the load.
set -euo pipefail
cd "$(dirname "$0")/.."
server=${1:?usage: bench/instructions.sh <server.js> [path]}
path=${2:-/health}
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
dir=$(mktemp -d)
port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
export PORT=$port DATABASE_URL=sqlite:$dir/db.sqlite PUBLIC_URL=http://127.0.0.1:$port \
  ADMIN_EMAIL=bench-admin@gatehouse.test ADMIN_PASSWORD='correct horse battery staple 42' LOG_LEVEL=info
# Under valgrind the event loop is ~50× slower: that is not pressure to shed load for.
export PRESSURE_MAX_EVENT_LOOP_DELAY_MS=0
valgrind --tool=callgrind --smc-check=all-non-file --instr-atstart=no --separate-threads=yes \
  --callgrind-out-file="$dir/callgrind.out" node "$server" >"$dir/server.log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 1200); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
  sleep 0.2
done
if [ -n "${LOGIN:-}" ]; then
  AUTHORIZATION="Bearer $(curl -sf -H 'content-type: application/json' \
    -d "{\"email\":\"$ADMIN_EMAIL\",\"password\":\"$ADMIN_PASSWORD\"}" "http://127.0.0.1:$port/api/v1/login" |
    node -e 'let s="";process.stdin.on("data",(d)=>(s+=d)).on("end",()=>console.log(JSON.parse(s).access_token))')"
  export AUTHORIZATION
fi
if [ -n "${LOGIN_BODY:-}" ]; then
  BODY="{\"email\":\"$ADMIN_EMAIL\",\"password\":\"$ADMIN_PASSWORD\"}"
  export BODY
fi
requests=${REQUESTS:-10000}
connections=${CONNECTIONS:-8}
node bench/amount.ts "http://127.0.0.1:$port$path" "${WARMUP:-20000}" "$connections" >/dev/null
callgrind_control -i on $pid >/dev/null 2>&1
result=$(node bench/amount.ts "http://127.0.0.1:$port$path" "$requests" "$connections")
callgrind_control -i off $pid >/dev/null 2>&1
callgrind_control -d $pid >/dev/null 2>&1
kill -TERM $pid
wait $pid || true
# Each dump file ends with its count (totals:); the dumps add up. One file per thread: "-01" is the
# main thread (the event loop), the others V8's helpers (their share moves with when code is
# compiled) and libuv's pool (argon2 runs there, the same count for every hash).
total=$(grep -h '^totals:' "$dir"/callgrind.out* | awk '{ s += $2 } END { print s }')
main=$(cat "$dir"/callgrind.out*-01 | grep -h '^totals:' | awk '{ s += $2 } END { print s }')
echo "$server $path: $((total / requests)) instructions per request, $((main / requests)) on the main thread ($result)"
