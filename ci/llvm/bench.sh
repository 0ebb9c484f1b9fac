#!/usr/bin/env bash
# ci/llvm/bench.sh: LLVM libomptarget's host offload plugin on the cases
# ompt-bench also runs (empty_target, target_tofrom_4KiB), printed as the
# same JSON lines with device "llvm<version>-host", so the two can be read
# side by side:
#
#   ci/llvm/bench.sh && go run ./cmd/ompt-bench -json -device host:0 -case empty_target,target_tofrom_4KiB
#
# Needs Debian's clang-14 and clang-tools-14 (installed when missing and
# running as root). libomp-14-dev conflicts with the libomp-19-dev the
# tests need, so it is never installed: its .debs are downloaded and
# unpacked into a temporary folder instead. Not part of ci/test.sh: it is a
# benchmark.
set -euo pipefail
cd "$(dirname "$0")"
v=${LLVM_VERSION:-14}
if ! command -v clang-$v >/dev/null || [ ! -x /usr/lib/llvm-$v/bin/clang-offload-wrapper ]; then
	if [ "$(id -u)" = 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang-$v clang-tools-$v >/dev/null
	else
		echo "bench.sh: need clang-$v and clang-tools-$v" >&2
		exit 1
	fi
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
(cd "$out" && apt-get download -qq libomp-$v-dev libomp5-$v >/dev/null 2>&1) ||
	{ echo "bench.sh: cannot download libomp-$v-dev and libomp5-$v" >&2; exit 1; }
for d in "$out"/*.deb; do dpkg -x "$d" "$out/root"; done
lib=$out/root/usr/lib/llvm-$v/lib
inc=$(dirname "$(find "$out/root" -name omp.h | head -1)")
clang-$v -O2 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -I"$inc" -L"$lib" -o "$out/bench" bench.c \
	-Wl,-rpath,"$lib"
LD_LIBRARY_PATH=$lib "$out/bench" "llvm$v-host"
