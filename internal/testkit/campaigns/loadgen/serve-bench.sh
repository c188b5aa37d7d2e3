#!/bin/bash
# serve-bench.sh measures idkit serve on loopback with loadgen: one line per
# run with requests and IDs a second, latency percentiles (from when each
# request was due, and service time from when it was sent), the CPU time
# the server and loadgen spent, and the machine's load average when the run
# started. A net/http server with a fixed body (loadgen -baseline) runs
# beside it as the floor.
#
#   internal/testkit/campaigns/loadgen/serve-bench.sh            # from the repository root
#   RUNS=3 D=10s internal/testkit/campaigns/loadgen/serve-bench.sh
#
# Each run records D (default 10s) after a 2 s warm-up. The server and
# loadgen are separate processes on the same machine.
set -eu
root=$(cd "$(dirname "$0")/../../../.." && pwd)
dir=$(mktemp -d)
trap 'kill $PID $BASE 2>/dev/null || true; rm -rf "$dir"' EXIT
(cd "$root" && go build -o "$dir/idkit" ./cmd/idkit/idkit-full && go build -o "$dir/loadgen" ./internal/testkit/campaigns/loadgen/cmd/loadgen)
cd "$dir"
./idkit launch begin --log bench.db >/dev/null
./idkit serve --addr 127.0.0.1:18090 --node 7 --log bench.db 2>serve.err &
PID=$!
./loadgen -baseline 127.0.0.1:18092 2>/dev/null &
BASE=$!
sleep 1
cpu() { awk '{print $14+$15}' /proc/$1/stat; } # utime+stime, in ticks
tck=$(getconf CLK_TCK)
run() {
  local pid=$1 addr=$2; shift 2
  local load s0 s1 out lg sent
  load=$(cut -d' ' -f1 /proc/loadavg)
  s0=$(cpu "$pid")
  out=$( { /usr/bin/time -f "%U %S" ./loadgen -addr "$addr" -d "${D:-10s}" -warmup 2s "$@" ; } 2>time.out )
  s1=$(cpu "$pid")
  lg=$(tail -1 time.out | awk '{print $1+$2}')
  sent=$(echo "$out" | grep -o 'sent=[0-9]*' | cut -d= -f2)
  awk -v out="$out" -v la="$load" -v s="$((s1-s0))" -v tck="$tck" -v lg="$lg" -v sent="$sent" 'BEGIN {
    printf "%s load=%s server_cpu=%.2fs loadgen_cpu=%.2fs cpu_us_per_req=%.1f\n", out, la, s/tck, lg, (s/tck+lg)*1e6/sent }'
}
S="$PID 127.0.0.1:18090"
B="$BASE 127.0.0.1:18092"
for _ in $(seq "${RUNS:-2}"); do
  run $B -path '/baseline' -rate 10000 -want 1
  run $S -path '/v1/traceid?n=1' -rate 10000 -want 1
  run $S -path '/v1/traceid?n=1' -rate 20000 -want 1
  run $B -path '/baseline' -rate 0 -conns 8 -want 1
  run $S -path '/v1/traceid?n=1' -rate 0 -conns 8 -want 1
  run $S -path '/v1/decimalid?n=1000' -rate 0 -conns 4 -want 1000
  run $S -path '/v1/decimalid?n=1000' -rate 5000 -want 1000
  run $S -path '/v1/traceid?n=1000' -rate 0 -conns 4 -want 1000
  run $S -path '/v1/objectid?n=1000' -rate 0 -conns 4 -want 1000
  run $S -path '/v1/decimalid?n=10000' -rate 0 -conns 4 -want 10000
done
kill -TERM $PID $BASE
wait $PID || true
