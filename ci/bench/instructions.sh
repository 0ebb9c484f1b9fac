#!/usr/bin/env bash
# ci/bench/instructions.sh: instructions per empty target region on
# host:0 (and per region that maps 4 KiB to and from the device, the
# map path's figure), counted with callgrind instead of timed, so that a change to the
# tools interface can be compared on a machine whose speed wanders. Each
# case runs twice in ompt-bench's child mode (in-process, the tool's
# environment set), 20000 and 60000 iterations, with GOMAXPROCS=1 and
# asynchronous preemption off (callgrind does not follow Go's signals);
# the difference divided by 40000 is the cost of one region, start-up
# cancelled out. RDTSCP is off too (GODEBUG=cpu.rdtscp=off): valgrind 3.19
# does not decode it, and Go 1.26's runtime uses it for its lock timing.
# Tracing is counted with two Ps (below). Prints one JSON line per case:
#
#   {"name":"empty_target_ctool_all","device":"host:0","instructions_per_op":3411}
#
# Needs valgrind (installed when missing and running as root), gcc (or
# $CC) and LLVM's omp-tools.h (libomp-19-dev, or $GOMPT_OMPT_INCLUDE). Not part of ci/test.sh: it is a
# benchmark.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v valgrind >/dev/null; then
	if [ "$(id -u)" = 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null
	else
		echo "instructions.sh: need valgrind" >&2
		exit 1
	fi
fi
# omp-tools.h where ctoolbuild.HeaderDir (internal/testkit/ctoolbuild) looks: $GOMPT_OMPT_INCLUDE, the newest
# LLVM's clang resource directory, /usr/include, /usr/local/include
hdr=
for f in ${GOMPT_OMPT_INCLUDE:+"$GOMPT_OMPT_INCLUDE/omp-tools.h"} \
	$(ls /usr/lib/llvm-*/lib/clang/*/include/omp-tools.h 2>/dev/null | sort -rV) \
	/usr/include/omp-tools.h /usr/local/include/omp-tools.h; do
	if [ -f "$f" ]; then hdr=$f; break; fi
done
if [ -z "$hdr" ]; then
	echo "instructions.sh: no omp-tools.h (install libomp-19-dev, or set GOMPT_OMPT_INCLUDE to its directory)" >&2
	exit 1
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir "$out/inc"
ln -s "$hdr" "$out/inc/omp-tools.h" # alone: clang's own stddef.h must not shadow gcc's
"${CC:-gcc}" -shared -fPIC -O2 -I "$out/inc" -o "$out/libempty.so" target/internal/cabi/testdata/empty.c
go build -o "$out/ompt-bench" ./cmd/ompt-bench

procs=1 # GOMAXPROCS of the runs
vgflags=()
count() { # case n env... -> instructions collected; stops on a failed run
	local c=$1 n=$2
	shift 2
	if ! env "$@" GOMPT_BENCH_CHILD=1 GOMAXPROCS=$procs GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off \
		valgrind --tool=callgrind "${vgflags[@]}" --callgrind-out-file="$out/cg.out" \
		"$out/ompt-bench" -json -device host:0 -case "$c" -benchtime "${n}x" >"$out/res.json" 2>"$out/cg.err" ||
		grep -q '"error"' "$out/res.json"; then
		echo "instructions.sh: $c failed:" >&2
		cat "$out/res.json" "$out/cg.err" >&2
		exit 1
	fi
	sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$out/cg.err"
}

one() { # case env...
	local c=$1 a b
	shift
	a=$(count "$c" 20000 "$@")
	b=$(count "$c" 60000 "$@")
	if [ -z "$a" ] || [ -z "$b" ]; then
		echo "instructions.sh: $c: callgrind collected nothing; its log:" >&2
		cat "$out/cg.err" >&2
		exit 1
	fi
	printf '{"name":"%s","device":"host:0","instructions_per_op":%d}\n' "$c" $(((b - a) / 40000))
}

one empty_target_notool
one empty_target_tool_none GOMPT_BENCH_TOOL=none
one empty_target_tool_all GOMPT_BENCH_TOOL=all
one empty_target_tool_threads GOMPT_BENCH_TOOL=threads
one empty_target_ctool_all OMP_TOOL_LIBRARIES="$out/libempty.so"
one target_tofrom_4KiB
# Tracing runs with its delivery goroutine beside the construct
# (GOMAXPROCS=2 and valgrind's fair scheduler). With one P and no
# preemption that goroutine would run only when the loop yields: the
# ring fills, records are lost, and each run delivers a different share,
# so the count would follow what was lost. Here every record is
# delivered; runs still differ by about 3 % (the goroutines' waits).
procs=2
vgflags=(--fair-sched=yes)
one empty_target_tracing GOMPT_BENCH_TOOL=traceonly GOGC=off
