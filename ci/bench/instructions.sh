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
# Tracing is counted otherwise (traced, below). Prints one JSON line per case:
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

count() { # case n env... -> instructions collected; stops on a failed run
	local c=$1 n=$2
	shift 2
	if ! env "$@" GOMPT_BENCH_CHILD=1 GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off \
		valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" \
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

# Tracing: a construct's own instructions, without the tracing goroutine
# that delivers its records. The count above would take in how many
# records that goroutine delivered: with GOMAXPROCS=1 and no preemption
# it runs only when the loop yields, the ring fills and records are lost,
# so each run delivers a different share. Here both run (GOMAXPROCS=2,
# valgrind's fair scheduler: every record is delivered), and the figure
# is the benchmark loop's own instructions (its inclusive cost in one run
# of 60000, over 60000; start-up is outside the loop); the goroutine's
# are printed per record (an empty region makes three: its target begin
# and end, and its kernel).
traced() { # case env...
	local c=$1
	shift
	if ! env "$@" GOMPT_BENCH_CHILD=1 GOMAXPROCS=2 GOGC=off GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off \
		valgrind --tool=callgrind --fair-sched=yes --callgrind-out-file="$out/cg.out" \
		"$out/ompt-bench" -json -device host:0 -case "$c" -benchtime 60000x >"$out/res.json" 2>"$out/cg.err" ||
		grep -q '"error"' "$out/res.json"; then
		echo "instructions.sh: $c failed:" >&2
		cat "$out/res.json" "$out/cg.err" >&2
		exit 1
	fi
	callgrind_annotate --inclusive=yes "$out/cg.out" >"$out/cg.txt"
	local loop run
	loop=$(awk '/main\.emptyTarget\.loopTarget\.func1 /{gsub(",", "", $1); print $1; exit}' "$out/cg.txt")
	run=$(awk '/omptrt\.\(\*tracer\)\.run /{gsub(",", "", $1); print $1; exit}' "$out/cg.txt")
	if [ -z "$loop" ] || [ -z "$run" ]; then
		echo "instructions.sh: $c: no loop or tracing goroutine in callgrind's output" >&2
		exit 1
	fi
	printf '{"name":"%s","device":"host:0","instructions_per_op":%d,"tracing_goroutine_per_record":%d}\n' \
		"$c" $((loop / 60000)) $((run / 180000))
}

one empty_target_notool
one empty_target_tool_none GOMPT_BENCH_TOOL=none
one empty_target_tool_all GOMPT_BENCH_TOOL=all
one empty_target_tool_threads GOMPT_BENCH_TOOL=threads
one empty_target_ctool_all OMP_TOOL_LIBRARIES="$out/libempty.so"
one target_tofrom_4KiB
traced empty_target_tracing GOMPT_BENCH_TOOL=traceonly
