#!/bin/bash
# run-bench.sh BENCH_DIR - every benchmark program in turn, as `make bench` runs them, each
# under a header with the time and the load average; goes on past a program that fails (or
# hangs: each has a time bound) and exits 1 at the end if any did (the list is printed).  Root.  Not a test: the figures are
# copied into NOTES by hand, from a run on a quiet machine (each program prints the load
# average beside its figures and warns above 2).
#
# Issue 20's programs first, then the others:
#   bench-classic  GET_USAGE / REGISTER / KILL server CPU at 10, 100 and 1,000 families with
#                  5,000 background processes: classic-floor (the protocol alone), the floor
#                  with --exact-reads (it also reads the counter files an exact answer needs:
#                  the least any daemon that reads them per request costs), procd
#                  (state file on a tmpfs; with its D-Bus socket and a D-Bus client, and
#                  again --classic-only, as HTCondor runs it: no D-Bus) and, when
#                  CONDOR_PROCD names one, condor_procd, one after the other for each family
#                  count (ratios from the same minute); GET_USAGE twice in each run, client
#                  and daemon pinned to one CPU, then to two (--placement both)
#   bench-fds      fds and RSS per family, 10,000 families under a 20,000-fd limit, and the
#                  answer at the limit
#   bench-starter  procd-starter /bin/true, embedded and with procd, against fork+exec
#   bench-node     the HTCondor-shaped node (20 jobs polled every 5 s, churn, 5,000
#                  background processes, 220 s per daemon): procd and condor_procd's CPU
#   bench-trackers, bench-usage-files, bench-procd --short, bench-restart (200 families),
#   bench-boundary
# 15 to 20 minutes on a 2-core machine with CONDOR_PROCD (measured by parts, 2026-11-25, load
# 2-4: bench-node 7.5 min for its 2 x 220 s, condor_procd's 1,000 REGISTERs ~0.15 s each with
# 6,000 processes ~3 min, bench-fds 2 min, bench-procd --short 2 min, the rest seconds each);
# a program that hangs is stopped after its bound (10-15 min).
#
# Environment: CONDOR_PROCD=<path of HTCondor's condor_procd> adds it to bench-classic and
# bench-node; BENCH_ROUNDS=N repeats bench-classic's daemons N times in turn;
# BENCH_SETTLE_LOAD / BENCH_SETTLE_MAX_SEC: the wait for a quiet machine before each
# program (settle, below).
# BENCH_QUICK=1: the short modes (10 and 100 families, 1,000 background processes, bench-fds
# at 1,000 families, bench-node 40 s): a check that every program runs, in a few minutes; its
# times are not the figures.
set -u
B=${1:?usage: run-bench.sh BENCH_DIR}
CONDOR=${CONDOR_PROCD:-}
QUICK=${BENCH_QUICK:-}
FAILED=()
T0=$(date +%s)

# settle: before each program, until the 1-min load average is below BENCH_SETTLE_LOAD
# (default 1.5), for at most BENCH_SETTLE_MAX_SEC (default 120; 0: no wait).  The programs
# themselves leave the load high behind them (bench-fds' 10,200 sleepers, 1,000 family
# roots made and killed), and the average takes a minute or more to fall: without a wait,
# the program after one of those ran at load 3-12 and warned that its figures were none
# (2026-11-26).  What the wait took is printed; a load still above the bound is printed
# beside the figures as before.
settle() {
        local bound=${BENCH_SETTLE_LOAD:-1.5} max=${BENCH_SETTLE_MAX_SEC:-120} waited=0
        while [ "$waited" -lt "$max" ] && awk -v b="$bound" '{ exit !($1 >= b) }' /proc/loadavg; do
                sleep 5
                waited=$((waited + 5))
        done
        [ "$waited" -eq 0 ] || echo "==== waited ${waited} s for the 1-min load to fall below $bound (now $(cut -d' ' -f1 /proc/loadavg))"
}

# run SECONDS TITLE COMMAND...: a program that hangs is stopped after SECONDS (SIGTERM,
# then SIGKILL 10 s later; exit 124) so that the others still run.
run() {
        local limit=$1 title=$2
        shift 2
        settle
        printf '\n==== %s\n==== %s  (%s UTC, load %s)\n' "$title" "$*" "$(date -u +%H:%M:%S)" \
                "$(cut -d' ' -f1-3 /proc/loadavg)"
        timeout -k 10 "$limit" "$@" || {
                local rc=$?
                local why="exit $rc"
                [ "$rc" -eq 124 ] && why="stopped after $limit s"
                echo "==== FAILED ($why): $title"
                FAILED+=("$title ($why)")
        }
}

if [ -n "$QUICK" ]; then
        FAMILIES="10 100" CLASSIC=(--background 1000 --calls 500) FDS=(--short) NODE=(--short)
else
        FAMILIES="10 100 1000" CLASSIC=(--calls 2000) FDS=() NODE=()
fi
[ -n "$CONDOR" ] || echo "run-bench: CONDOR_PROCD not set: condor_procd is left out of bench-classic and bench-node"

# BENCH_ROUNDS=N: the daemons N times in turn per family count (the floor and
# condor_procd scatter by up to 2x between runs; a round's runs share the machine's state,
# so take each ratio within a round and the median over rounds: NOTES 14.12)
for n in $FAMILIES; do
        for r in $(seq 1 "${BENCH_ROUNDS:-1}"); do
                run 600 "bench-classic, $n families, round $r: classic-floor" "$B/bench-classic" --families "$n" \
                        "${CLASSIC[@]}" --daemon "$B/classic-floor"
                run 600 "bench-classic, $n families, round $r: classic-floor --exact-reads" "$B/bench-classic" \
                        --families "$n" "${CLASSIC[@]}" --daemon "$B/classic-floor" --exact-reads
                run 600 "bench-classic, $n families, round $r: procd" "$B/bench-classic" --families "$n" \
                        "${CLASSIC[@]}" --state-tmpfs
                run 600 "bench-classic, $n families, round $r: procd --classic-only" "$B/bench-classic" \
                        --families "$n" "${CLASSIC[@]}" --state-tmpfs --classic-only
                [ -z "$CONDOR" ] || run 900 "bench-classic, $n families, round $r: condor_procd" "$B/bench-classic" \
                        --families "$n" "${CLASSIC[@]}" --daemon "$CONDOR"
        done
done
run 600 "bench-fds: fds and RSS per family, the fd limit" "$B/bench-fds" "${FDS[@]}"
run 600 "bench-starter: procd-starter /bin/true" "$B/bench-starter"
run 900 "bench-node: a whole HTCondor-shaped node" env CONDOR_PROCD="$CONDOR" "$B/bench-node" "${NODE[@]}"
run 600 "bench-trackers: usage query and kill-to-empty, cgroup vs /proc" "$B/bench-trackers"
run 300 "bench-usage-files: each counter file's read" "$B/bench-usage-files" --reads 2000
run 600 "bench-procd: GetUsage latency, RSS, idle CPU" "$B/bench-procd" --short
run 600 "bench-restart: restore of 200 families" "$B/bench-restart" --families 200
run 600 "bench-boundary: what the job-boundary options add" "$B/bench-boundary"

printf '\n==== run-bench: %d s in all, load %s\n' "$(($(date +%s) - T0))" "$(cut -d' ' -f1-3 /proc/loadavg)"
if [ ${#FAILED[@]} -gt 0 ]; then
        printf '==== failed: %s\n' "${FAILED[@]}"
        exit 1
fi
