#!/usr/bin/env bash
# ci/test.sh: the project's one test command. It installs what the tests
# need when missing (Debian packages), then runs, in order: gofmt, go vet
# with and without cgo, go test -race, go test without cgo, and every
# example on every device present. CI (.ci/run) calls it with CI=true, where
# a dependency that cannot be installed is a failure, never a skip.
#
#   ci/test.sh            # everything
#   ci/test.sh -short     # skip the examples sweep
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
short=0
[ "${1:-}" = "-short" ] && short=1

step() { printf '\n=== %s\n' "$*"; }
die() { printf 'ci/test.sh: %s\n' "$*" >&2; exit 1; }

# --- dependencies ----------------------------------------------------------
pkgs=(gcc pocl-opencl-icd ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-headers clinfo clang-19 libclc-19 libomp-19-dev)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	step "installing ${missing[*]}"
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}") >/tmp/gompt-apt.log 2>&1 ||
			{ tail -20 /tmp/gompt-apt.log >&2; [ -n "${CI:-}" ] && die "could not install ${missing[*]}"; }
	elif [ -n "${CI:-}" ]; then
		die "missing ${missing[*]} and cannot install them (need root and apt-get)"
	else
		echo "warning: missing ${missing[*]}; tests that need them will skip" >&2
	fi
fi
if [ -n "${CI:-}" ]; then
	command -v clang-19 >/dev/null || die "clang-19 missing"
	[ -f /usr/lib/clc/nvptx64--nvidiacl.bc ] || die "libclc-19 missing"
	[ -f /usr/lib/llvm-19/lib/clang/19/include/omp-tools.h ] || die "libomp-19-dev (omp-tools.h) missing"
	clinfo -l 2>/dev/null | grep -q Device || die "no OpenCL device (POCL) found by clinfo"
fi
# On a machine without an NVIDIA driver the CUDA plugin must say so (its
# loader path is exercised, not skipped).
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1'; then
	export GOMPT_EXPECT_NO_CUDA=1
fi

# --- static checks ---------------------------------------------------------
step "gofmt"
bad=$(gofmt -l . | grep -v '^vendor/' || true)
[ -z "$bad" ] || die "gofmt would change: $bad"
step "go vet (cgo)"
go vet ./...
step "go vet (CGO_ENABLED=0)"
CGO_ENABLED=0 go vet ./...

# --- tests -----------------------------------------------------------------
step "go test -race ./..."
go test -race -count=1 -timeout 40m ./...
step "tracing property test on every OpenCL device (the default run uses the host device)"
if clinfo -l 2>/dev/null | grep -q Device; then
	GOMPT_PLUGINS=opencl go test -count=1 -race ./target/tooltest
fi
step "FuzzMapping against the reference model, bounded (ci/reliability.sh runs it longer)"
go test -run '^$' -fuzz '^FuzzMapping$' -fuzztime "${FUZZTIME:-20s}" ./mapping

step "CGO_ENABLED=0 go test ./..."
# A build without cgo has no OpenCL, CUDA or C tools by design: their tests
# skip there with the reason (CI is unset for this pass only, so a skip is
# not a failure); the host device, mapping, target and Go tools all run.
env -u CI CGO_ENABLED=0 go test -count=1 -timeout 20m ./...

# --- examples on every device ----------------------------------------------
if [ $short = 0 ]; then
	step "examples on every device"
	mkdir -p ci/build
	go build -o ci/build/ ./cmd/ompt-devinfo ./examples/saxpy ./examples/matmul ./examples/jacobi ./examples/veccopy
	ci/build/ompt-devinfo
	ndev=$(ci/build/ompt-devinfo -json | sed -n 's/.*"initial_device": \([0-9]*\).*/\1/p')
	[ -n "$ndev" ] || die "ompt-devinfo -json gave no initial_device"
	for d in $(seq 0 "$ndev"); do
		ci/build/saxpy -device "$d" -n 1000003
		ci/build/matmul -device "$d" -n 96
		ci/build/jacobi -device "$d" -nx 130 -ny 97 -iters 40 -k 20
		ci/build/veccopy -device "$d"
	done
fi
echo
echo "ci/test.sh: all checks passed"
