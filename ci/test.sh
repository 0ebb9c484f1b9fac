#!/usr/bin/env bash
# ci/test.sh: the project's one test command. It installs what the tests
# need when missing (Debian packages), then runs, in order: gofmt, go vet
# with and without cgo, a 32-bit build and the tests that run there, go
# test -race, go test without cgo, and every example on every device
# present. CI (.ci/run) calls it with CI=true, where a dependency that
# cannot be installed is a failure, never a skip (the 32-bit tests are
# skipped on a machine that cannot run 386 binaries: no package gives
# that).
# Besides the tests it runs LLVM's Archer (libarcher.so from libomp-19-dev,
# with clang's ThreadSanitizer runtime from libclang-rt-19-dev) attached
# to an example on 8 goroutines.
#
#   ci/test.sh            # everything
#   ci/test.sh -short     # skip the examples sweep
#   ci/test.sh -deps      # only install and check the dependencies, then say what would be skipped
#
# Outside CI, a dependency that cannot be installed (an apt lock held by
# another process for longer than GOMPT_APT_WAIT seconds, default 600; no
# root) skips the steps that need it; the run ends with the list of skipped
# steps and why instead of "all checks passed", and fails (status 1) when a
# whole plugin went untested (the OpenCL plugin with no OpenCL device).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
short=0 depsonly=0
case "${1:-}" in
-short) short=1 ;;
-deps) depsonly=1 ;;
esac

step() { printf '\n=== %s\n' "$*"; }
die() { printf 'ci/test.sh: %s\n' "$*" >&2; exit 1; }

# skipped lists "what: why" for every step or part of one that ran
# nothing; untested lists the plugins none of whose tests could run.
skipped=()
untested=()
skip() { skipped+=("$1: $2"); printf 'ci/test.sh: SKIPPED %s: %s\n' "$1" "$2" >&2; }

# apt_retry runs an apt-get command, retrying while another process holds
# apt's or dpkg's lock (unattended-upgrades, another install), for up to
# GOMPT_APT_WAIT seconds; other failures end it at once.
apt_retry() {
	local waited=0 limit=${GOMPT_APT_WAIT:-600} pause=${GOMPT_APT_PAUSE:-10}
	while :; do
		if DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=0 "$@" >>"$aptlog" 2>&1; then
			return 0
		fi
		if ! tail -5 "$aptlog" | grep -Eqi 'could not get lock|unable to acquire the dpkg frontend lock|unable to lock|is held by process'; then
			return 1
		fi
		if [ "$waited" -ge "$limit" ]; then
			echo "ci/test.sh: apt's lock is still held after ${waited}s" >>"$aptlog"
			return 1
		fi
		echo "ci/test.sh: apt's lock is held by another process; retrying in ${pause}s (${waited}s of ${limit}s)" >&2
		sleep "$pause"
		waited=$((waited + pause))
	done
}

# --- dependencies ----------------------------------------------------------
aptlog=${TMPDIR:-/tmp}/gompt-apt.log
pkgs=(gcc pocl-opencl-icd ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-headers clinfo clang-19 libclc-19 libomp-19-dev openmpi-bin libclang-rt-19-dev)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	step "installing ${missing[*]}"
	: >"$aptlog"
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		if ! { apt_retry update -qq && apt_retry install -y -qq "${missing[@]}"; }; then
			tail -20 "$aptlog" >&2
			[ -n "${CI:-}" ] && die "could not install ${missing[*]}"
			why="could not install ${missing[*]} ($(grep -Ei 'lock|^E:' "$aptlog" | tail -1))"
		fi
	elif [ -n "${CI:-}" ]; then
		die "missing ${missing[*]} and cannot install them (need root and apt-get)"
	else
		why="missing ${missing[*]} and cannot install them (need root and apt-get)"
	fi
fi
# Mesa's rusticl, the second OpenCL implementation the tests run on
# (llvmpipe as a CPU device: no fp64, no 64-bit atomics, 32 KiB of local
# memory, unusable event times, 512-byte base alignment). Its package,
# mesa-opencl-icd, depends on libclc-15, which Debian declares in conflict
# with libclc-19 (the PTX's, whose files it would replace), though the only
# files rusticl takes from it, the SPIR-V libraries spirv*-mesa3d-.spv, are
# in no other package. So libclc-15 is repacked with only those and without
# the conflict, and installed beside libclc-19. RUSTICL_ENABLE=swrast (set
# below) makes rusticl show llvmpipe; without it rusticl lists no device.
rusticl_lib=/usr/lib/$(uname -m)-linux-gnu/libRusticlOpenCL.so.1
rusticl_why=
setup_rusticl() {
	if [ -f "$rusticl_lib" ] && [ -f /usr/lib/clc/spirv64-mesa3d-.spv ]; then
		return 0
	fi
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
		rusticl_why="not installed, and installing needs root, apt-get and dpkg-deb"
		return 1
	fi
	step "installing Mesa's rusticl (mesa-opencl-icd) beside libclc-19"
	local dir deb
	dir=$(mktemp -d)
	if ! apt_retry update -qq || ! (cd "$dir" && apt_retry -o APT::Sandbox::User=root download libclc-15); then
		rusticl_why="apt-get download libclc-15 failed ($(grep -Ei 'lock|^E:' "$aptlog" | tail -1))"
		return 1
	fi
	deb=$(ls "$dir"/libclc-15_*.deb 2>/dev/null | head -1)
	if [ -z "$deb" ] || ! dpkg-deb -R "$deb" "$dir/pkg"; then
		rusticl_why="apt-get download libclc-15 gave no package to repack"
		return 1
	fi
	find "$dir/pkg/usr/lib/clc" \( -type f -o -type l \) ! -name 'spirv*-mesa3d-.spv' -delete
	sed -i -e '/^\(Depends\|Conflicts\|Breaks\|Replaces\|Provides\|Installed-Size\):/d' \
		-e 's/^Version: \(.*\)$/Version: \1+gompt1/' "$dir/pkg/DEBIAN/control"
	rm -f "$dir/pkg/DEBIAN/md5sums"
	if ! dpkg-deb -b "$dir/pkg" "$dir/libclc-15-spirv.deb" >/dev/null ||
		! apt_retry install -y -qq "$dir/libclc-15-spirv.deb" mesa-opencl-icd; then
		tail -20 "$aptlog" >&2
		rusticl_why="installing mesa-opencl-icd with libclc-15's SPIR-V files failed ($(grep -Ei 'lock|^E:' "$aptlog" | tail -1))"
		return 1
	fi
	if [ ! -f /usr/lib/clc/nvptx64--nvidiacl.bc ]; then
		rusticl_why="installing rusticl removed libclc-19's files"
		return 1
	fi
	rm -rf "$dir"
}
: >>"$aptlog"
setup_rusticl || true
export RUSTICL_ENABLE=${RUSTICL_ENABLE:-swrast}
# ocl_list prints clinfo's list of platforms and devices (nothing without
# clinfo); read whole, not piped into a grep -q that may close the pipe
# before clinfo is done (pipefail would then fail the test on SIGPIPE).
ocl_list() { clinfo -l 2>/dev/null || true; }
has_device() { grep -q Device <<<"$1"; }
has_rusticl() { grep -A1 '^Platform.*rusticl' <<<"$1" | grep -q Device; }

# Archer: LLVM's OpenMP race detector, an OMPT tool that needs clang's
# ThreadSanitizer runtime in the process.
archer=/usr/lib/llvm-19/lib/libarcher.so
tsan=$(ls /usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.tsan-"$(uname -m)".so \
	/usr/lib/llvm-19/lib/clang/19/lib/"$(uname -m)"-*/libclang_rt.tsan.so 2>/dev/null | head -1 || true)
if [ -n "${CI:-}" ]; then
	[ -f "$archer" ] || die "libomp-19-dev has no $archer (Archer)"
	[ -n "$tsan" ] || die "clang's ThreadSanitizer runtime (libclang-rt-19-dev, libclang_rt.tsan) missing"
	command -v clang-19 >/dev/null || die "clang-19 missing"
	[ -f /usr/lib/clc/nvptx64--nvidiacl.bc ] || die "libclc-19 missing"
	[ -f /usr/lib/llvm-19/lib/clang/19/include/omp-tools.h ] || die "libomp-19-dev (omp-tools.h) missing"
	has_device "$(ocl_list)" || die "no OpenCL device (POCL) found by clinfo"
	[ -z "$rusticl_why" ] || die "Mesa's rusticl: $rusticl_why"
	has_rusticl "$(ocl_list)" ||
		die "Mesa's rusticl lists no device (RUSTICL_ENABLE=$RUSTICL_ENABLE): $(ocl_list | tr '\n' ' ')"
	command -v mpirun >/dev/null || die "openmpi-bin (mpirun) missing"
fi
# What the tests can use, whatever the install did: each missing piece
# skips the tests that need it (they say so with t.Skip), listed here.
why=${why:-}
have_ocl=1
if ! has_device "$(ocl_list)"; then
	have_ocl=0
	skip "OpenCL plugin tests, the tracing property test on OpenCL, examples on an OpenCL device" "no OpenCL device found by clinfo${why:+; $why}"
	untested+=("opencl")
fi
if [ $have_ocl = 1 ] && ! has_rusticl "$(ocl_list)"; then
	skip "every OpenCL test on a second implementation (Mesa's rusticl)" "${rusticl_why:-rusticl lists no device (RUSTICL_ENABLE=$RUSTICL_ENABLE)}"
fi
if ! command -v clang-19 >/dev/null || [ ! -f /usr/lib/clc/nvptx64--nvidiacl.bc ]; then
	skip "PTX-is-current check (kernels) and tools built with clang-19" "clang-19 or libclc-19 missing${why:+; $why}"
fi
if ! command -v mpirun >/dev/null; then
	skip "a timeline of an MPI job under mpirun (tools/timeline TestMPIRun)" "openmpi-bin missing${why:+; $why}"
fi
if [ ! -f /usr/lib/llvm-19/lib/clang/19/include/omp-tools.h ]; then
	skip "C tools compiled against omp-tools.h (target/internal/cabi, examples/tools/ctool)" "libomp-19-dev missing${why:+; $why}"
fi
have_archer=1
if [ ! -f "$archer" ] || [ -z "$tsan" ]; then
	have_archer=0
	skip "Archer (LLVM's OpenMP race detector) on an example with 8 goroutines" "libarcher.so (libomp-19-dev) or clang's ThreadSanitizer runtime (libclang-rt-19-dev) missing${why:+; $why}"
fi
if ! command -v cc >/dev/null && ! command -v gcc >/dev/null; then
	skip "everything built with cgo: OpenCL, CUDA (and its fake driver), C tools" "no C compiler${why:+; $why}"
	untested+=("opencl" "cuda")
fi

# summary prints the end of the run: "all checks passed" only when no step
# was skipped; otherwise the skipped steps and why, and status 1 when a
# whole plugin went untested.
summary() {
	echo
	if [ ${#skipped[@]} -eq 0 ]; then
		if [ $depsonly = 1 ]; then
			echo "ci/test.sh: every dependency is there; no step would be skipped"
		else
			echo "ci/test.sh: all checks passed"
		fi
		exit 0
	fi
	if [ $depsonly = 1 ]; then
		echo "ci/test.sh: these steps would be skipped:"
	else
		echo "ci/test.sh: the checks that ran passed, but these were skipped:"
	fi
	for s in "${skipped[@]}"; do
		echo "  - $s"
	done
	if [ ${#untested[@]} -gt 0 ]; then
		echo "ci/test.sh: FAILED: nothing of the $(printf '%s\n' "${untested[@]}" | sort -u | paste -sd, -) plugin(s) was tested" >&2
		exit 1
	fi
	exit 0
}
if [ $depsonly = 1 ]; then
	summary
fi

# On a machine without an NVIDIA driver the CUDA plugin must say so (its
# loader path is exercised, not skipped).
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1'; then
	export GOMPT_EXPECT_NO_CUDA=1
fi

# --- static checks ---------------------------------------------------------
step "no build output committed"
# Built binaries (ELF files) belong in .gitignore'd folders, never in git.
elf=$(git ls-files -z 2>/dev/null | xargs -0 -r sh -c 'for f; do [ -f "$f" ] && head -c 4 "$f" | grep -q "^.ELF" && echo "$f"; done' sh || true)
[ -z "$elf" ] || die "build output (ELF files) is committed; remove it and ignore it: $elf"
step "gofmt"
bad=$(gofmt -l . | grep -v '^vendor/' || true)
[ -z "$bad" ] || die "gofmt would change: $bad"
step "go vet (cgo)"
go vet ./...
step "go vet (CGO_ENABLED=0)"
CGO_ENABLED=0 go vet ./...
step "32-bit build (GOARCH=386, GOARCH=arm)"
# The runtime, the plugins, the tools and the examples build where int is
# 32 bits (the next step runs the tests that can run there). gompt-kernels' corpus is
# left out: its kernels pin Go's 64-bit int (constants near MaxInt64).
pkgs=$(go list -f '{{if .GoFiles}}{{.ImportPath}}{{end}}' ./... | grep -v '/cmd/gompt-kernels/internal/corpus$')
for arch in 386 arm; do
	GOARCH=$arch CGO_ENABLED=0 go build $pkgs
done
step "32-bit tests (GOARCH=386, CGO_ENABLED=0)"
# The packages whose tests hold no 64-bit constant, run as 386 binaries
# where this machine runs them (an amd64 Linux kernel with IA-32
# emulation does): host:0 and the initial device on a 32-bit int.
probe=$(mktemp -d)
printf 'package main\n\nfunc main() {}\n' >"$probe/main.go"
if (cd "$probe" && GOARCH=386 CGO_ENABLED=0 go build -o probe main.go && ./probe) 2>/dev/null; then
	GOARCH=386 CGO_ENABLED=0 go test -count=1 ./mapping/ ./bench/polybench/ ./device/devicetest/ ./device/faulty/ \
		./device/host/ ./cmd/polybench/ ./ci/
else
	skip "32-bit tests" "this machine does not run 386 binaries"
fi
rm -rf "$probe"

# --- tests -----------------------------------------------------------------
step "go test -race ./..."
go test -race -count=1 -timeout 40m ./...
step "tracing property test on each OpenCL implementation (the default run uses the host device)"
# OCL_ICD_VENDORS makes the ICD loader see one implementation, so that
# each is device 0 of its run in turn.
if [ $have_ocl = 1 ]; then
	for icd in /etc/OpenCL/vendors/pocl.icd /etc/OpenCL/vendors/rusticl.icd; do
		[ -f "$icd" ] || continue
		list=$(OCL_ICD_VENDORS=$icd ocl_list)
		if ! has_device "$list"; then
			echo "($(basename "$icd" .icd): no device)"
			continue
		fi
		echo "--- $(basename "$icd" .icd): $(grep -m1 Device <<<"$list" | sed 's/.*Device #0: //')"
		OCL_ICD_VENDORS=$icd GOMPT_PLUGINS=opencl go test -count=1 -race ./target/tooltest
	done
else
	echo "(skipped: no OpenCL device; listed at the end)"
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
	go build -o ci/build/ ./cmd/ompt-devinfo ./examples/saxpy ./examples/matmul ./examples/jacobi ./examples/veccopy ./examples/pipeline ./examples/heat
	devinfo=$(ci/build/ompt-devinfo)
	echo "$devinfo"
	ndev=$(ci/build/ompt-devinfo -json | sed -n 's/.*"initial_device": \([0-9]*\).*/\1/p')
	[ -n "$ndev" ] || die "ompt-devinfo -json gave no initial_device"
	for d in $(seq 0 "$ndev"); do
		# Name the device and, for OpenCL, its implementation.
		echo "--- device $d: $(awk -v n="$d" '
			$1 == "Device" && $2 == n { on = 1; id = substr($3, 2, length($3) - 3); next }
			on && /^  Name:/ { sub(/^  Name: +/, ""); name = $0 }
			on && /^  platform:/ { sub(/^  platform: +/, ""); plat = " on " $0 }
			on && /^$/ { exit }
			END { if (id == "") print "the initial device"; else print id, name plat }' <<<"$devinfo")"
		ci/build/saxpy -device "$d" -n 1000003
		ci/build/matmul -device "$d" -n 96
		ci/build/jacobi -device "$d" -nx 130 -ny 97 -iters 40 -k 20
		ci/build/veccopy -device "$d"
		ci/build/pipeline -device "$d" -n 1000000 -chunks 10 -reps 3
		ci/build/heat -device "$d" -nx 130 -ny 97 -steps 41
	done
	# and by name, as a user would pick one
	ci/build/veccopy -device host:0
	[ $have_ocl = 0 ] || ci/build/veccopy -device opencl:0
	if grep -q '^Device .*(opencl:1)' <<<"$devinfo"; then
		ci/build/veccopy -device opencl:1
	fi

	step "Archer (LLVM's OpenMP race detector) attached to veccopy on 8 goroutines"
	# A tool with per-thread state: each OpenMP thread's pools are made at
	# its thread_begin and freed at its thread_end, on that thread. The
	# program must run to its end and exit 0 (before thread lives were
	# the runtime's holds, it died with a ThreadSanitizer SEGV).
	if [ $have_archer = 1 ]; then
		devs=(host:0)
		[ $have_ocl = 0 ] || devs+=(opencl:0)
		if grep -q '^Device .*(opencl:1)' <<<"$devinfo"; then
			devs+=(opencl:1)
		fi
		for d in "${devs[@]}"; do
			log=ci/build/archer-${d%%:*}.log
			if ! LD_PRELOAD="$tsan" OMP_TOOL_LIBRARIES="$archer" OMP_TOOL_VERBOSE_INIT="$log.init" \
				TSAN_OPTIONS=ignore_noninstrumented_modules=1 ci/build/veccopy -goroutines 8 -device "$d" >"$log" 2>&1; then
				cat "$log" >&2
				die "veccopy -goroutines 8 -device $d under Archer failed"
			fi
			grep -q "Tool was started and is using the OMPT interface" "$log.init" || { cat "$log.init" >&2; die "Archer did not attach to veccopy"; }
			if grep -q "ThreadSanitizer" "$log"; then
				cat "$log" >&2
				die "Archer reported a problem in veccopy -goroutines 8 -device $d"
			fi
			tail -1 "$log"
		done
	else
		echo "(skipped: listed at the end)"
	fi
else
	skip "examples on every device" "-short"
	skip "Archer on an example with 8 goroutines" "-short"
fi
summary
