#!/usr/bin/env bash
# ci/gpu/build.sh: builds, on a machine with Go, everything the GPU run
# needs into .gpu/ (ignored by git): the test binaries of the packages
# that talk to a GPU, the commands and the examples. The GPU machine has no
# Go; carry .gpu there and run ci/gpu/run.sh in the repository root:
#
#   ci/gpu/build.sh                      # here
#   OUT=/some/dir ci/gpu/run.sh          # there (the device tool: OUT=$OUT, carry .gpu)
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:/usr/local/go/bin"
out=.gpu
mkdir -p "$out"
# Stripped (-s -w): the device tool carries at most 64 MiB.
ld=(-ldflags '-s -w')
for p in device/cuda device/opencl target target/tooltest kernels cmd/gompt-kernels/internal/corpus examples/heat; do
	go test -c "${ld[@]}" -o "$out/$(echo "$p" | tr / _).test" "./$p"
done
for c in cmd/ompt-bench cmd/ompt-devinfo; do
	go build "${ld[@]}" -o "$out/$(basename "$c")" "./$c"
done
for e in saxpy matmul jacobi veccopy heat; do
	go build "${ld[@]}" -o "$out/$e" "./examples/$e"
done
go build "${ld[@]}" -o "$out/veccopy-printer" -tags ompt_printer ./examples/veccopy
# This machine's OpenCL ICD loader (ocl-icd: libc only), for a GPU machine
# whose driver install lacks one: run.sh uses it only if it finds none there.
mkdir -p "$out/lib"
loader=$(ldconfig -p 2>/dev/null | awk '/libOpenCL\.so\.1 .*x86-64/ {print $NF; exit}')
if [ -n "$loader" ]; then
	cp -L "$loader" "$out/lib/libOpenCL.so.1"
else
	echo "build.sh: no libOpenCL.so.1 here to carry; the GPU machine must have one" >&2
fi
du -sh "$out"
