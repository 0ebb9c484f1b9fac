#!/usr/bin/env bash
# ci/llvm/bench.sh: LLVM libomptarget's host offload plugin on the cases
# ompt-bench also runs (empty_target, target_tofrom_4KiB), printed as the
# same JSON lines with device "llvm<version>-host", so the two can be read
# side by side:
#
#   ci/llvm/bench.sh && go run ./cmd/ompt-bench -json -device host:0 -case empty_target,target_tofrom_4KiB
#
# Needs Debian's clang-14, clang-tools-14 and libomp-14-dev (installed here when missing
# and running as root). Not part of ci/test.sh: it is a benchmark.
set -euo pipefail
cd "$(dirname "$0")"
v=${LLVM_VERSION:-14}
if ! command -v clang-$v >/dev/null || [ ! -x /usr/lib/llvm-$v/bin/clang-offload-wrapper ] || ! ls /usr/lib/llvm-$v/lib/libomptarget* >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ]; then
		apt-get install -y -qq clang-$v clang-tools-$v libomp-$v-dev >/dev/null
	else
		echo "bench.sh: need clang-$v and libomp-$v-dev" >&2
		exit 1
	fi
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
clang-$v -O2 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -o "$out/bench" bench.c \
	-Wl,-rpath,/usr/lib/llvm-$v/lib
LD_LIBRARY_PATH=/usr/lib/llvm-$v/lib "$out/bench" "llvm$v-host"
