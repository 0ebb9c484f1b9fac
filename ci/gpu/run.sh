#!/usr/bin/env bash
# ci/gpu/run.sh [tests|bench|all]: the GPU run, on the machine with the
# GPU, from the repository root, with the binaries ci/gpu/build.sh made in
# .gpu/: the tests and examples, the benchmarks, or both (the default).
# Each part takes a few minutes; the device tool allows 10 per command, so
# run them as two commands. Every step runs even if one before failed;
# each writes its output under $OUT (default ./gpu-out), and summary.txt
# has one line per step with its exit status and seconds. NVIDIA's OpenCL is reached through an ICD file naming
# libnvidia-opencl.so.1 (OCL_ICD_VENDORS), POCL through its own.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
bin=$PWD/.gpu
icd=$(mktemp -d)
echo libnvidia-opencl.so.1 >"$icd/nvidia.icd"
# The ICD loader: the GPU machine's own libOpenCL.so.1 if the dynamic
# linker finds one, else one in a CUDA toolkit (which ships the loader),
# else the one build.sh carried in .gpu/lib; the last two are named to the
# plugin by GOMPT_OPENCL_LIBRARY. Without any, the OpenCL steps fail.
ocl_loader=$(ldconfig -p 2>/dev/null | awk '/libOpenCL\.so\.1 / {print $NF; exit}')
if [ -z "$ocl_loader" ]; then
	for f in /usr/local/cuda/lib64/libOpenCL.so.1 /usr/local/cuda-*/lib64/libOpenCL.so.1 /usr/lib64/libOpenCL.so.1 "$bin/lib/libOpenCL.so.1"; do
		if [ -e "$f" ]; then
			ocl_loader=$f
			export GOMPT_OPENCL_LIBRARY=$f
			break
		fi
	done
fi
: "${ocl_loader:=none found (no libOpenCL.so.1 on this machine, none carried in $bin/lib)}"
echo "OpenCL ICD loader: $ocl_loader" | tee "$OUT/opencl-loader.txt"
part=${1:-all}
summary=$OUT/summary.txt
touch "$summary"
step() { # step NAME DIR CMD...: run CMD in DIR, output to $OUT/NAME.txt
	local name=$1 dir=$2
	shift 2
	local t0=$SECONDS
	(cd "$dir" && "$@") >"$OUT/$name.txt" 2>&1
	local rc=$?
	printf '%-28s rc=%-3d %4ds\n' "$name" "$rc" "$((SECONDS - t0))" | tee -a "$summary"
}
nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
if [ "$part" = tests ] || [ "$part" = all ]; then
	step devinfo . "$bin/ompt-devinfo"
	step devinfo-nvidia-opencl . env OCL_ICD_VENDORS="$icd" GOMPT_PLUGINS=opencl "$bin/ompt-devinfo"
	# The CUDA plugin's tests: devicetest on every GPU, info, out of memory,
	# invalid PTX, missing kernel, launch limits, large copies, close, raw
	# baselines, peer copies; and the fault-injection tests. No GPU, or no
	# NVIDIA OpenCL device, is a failure here, not a skip.
	step cuda-test device/cuda env GOMPT_REQUIRE_GPU=1 "$bin/device_cuda.test" -test.v -test.count=1
	step opencl-nvidia-test device/opencl env CI=1 OCL_ICD_VENDORS="$icd" GOMPT_PLUGINS=opencl "$bin/device_opencl.test" -test.v -test.count=1
	step target-test-cuda target env GOMPT_PLUGINS=cuda,host "$bin/target.test" -test.count=1
	step tooltest-cuda target/tooltest env GOMPT_PLUGINS=cuda,host "$bin/target_tooltest.test" -test.count=1
	# Kernels generated from Go (gompt-kernels): the library, the corpus of
	# every construct of the subset, and examples/heat, each on the GPU
	# against the Go function, bit for bit where the Sample says so.
	step kernels-cuda kernels env GOMPT_PLUGINS=cuda,host "$bin/kernels.test" -test.count=1 -test.run 'CheckKernel|Host|Dot'
	step corpus-cuda cmd/gompt-kernels/internal/corpus env GOMPT_PLUGINS=cuda,host "$bin/cmd_gompt-kernels_internal_corpus.test" -test.count=1
	# The same corpus on NVIDIA's OpenCL: team kernels, local atomics and
	# compare-and-swap loops of array reductions, and the fault record,
	# through another compiler than clang's PTX.
	step corpus-nvidia-opencl cmd/gompt-kernels/internal/corpus env OCL_ICD_VENDORS="$icd" GOMPT_PLUGINS=opencl,host "$bin/cmd_gompt-kernels_internal_corpus.test" -test.count=1
	step heat-test-cuda examples/heat env GOMPT_PLUGINS=cuda,host "$bin/examples_heat.test" -test.count=1
	# Every example on the first GPU (device 0 with the default plugin order
	# cuda,opencl,host), on NVIDIA's OpenCL, and under the Go printer tool;
	# OMP_TARGET_OFFLOAD=mandatory: no quiet fallback to the host.
	for e in saxpy matmul jacobi veccopy heat; do
		step "example-$e-cuda" . env OMP_TARGET_OFFLOAD=mandatory GOMPT_PLUGINS=cuda "$bin/$e" -device 0
		step "example-$e-nvidia-opencl" . env OMP_TARGET_OFFLOAD=mandatory OCL_ICD_VENDORS="$icd" GOMPT_PLUGINS=opencl "$bin/$e" -device 0
	done
	step example-veccopy-printer-cuda . env OMP_TARGET_OFFLOAD=mandatory GOMPT_PLUGINS=cuda "$bin/veccopy-printer" -device 0
	step timeline-jacobi-cuda . env OMP_TARGET_OFFLOAD=mandatory GOMPT_PLUGINS=cuda GOMPT_TRACE="$OUT/trace-jacobi-cuda.json" "$bin/jacobi" -device 0
fi
if [ "$part" = bench ] || [ "$part" = all ]; then
	# Benchmarks: every case on the GPU (with the raw-binding baselines), and
	# the host and NVIDIA OpenCL devices beside it.
	step bench-cuda . sh -c "GOMPT_PLUGINS=cuda,host '$bin/ompt-bench' -json -device cuda:0 >'$OUT/bench-cuda.json'"
	step bench-nvidia-opencl . sh -c "OCL_ICD_VENDORS='$icd' GOMPT_PLUGINS=opencl,host '$bin/ompt-bench' -json -device opencl:0 >'$OUT/bench-nvidia-opencl.json'"
	# The waits and copies both ways on NVIDIA's OpenCL: its own
	# clWaitForEvents (which spins) against the plugin's callbacks, and
	# copies direct against staged (the raw pinned cases are the bound).
	for w in driver callback; do
		step "bench-nvidia-opencl-wait-$w" . sh -c "OCL_ICD_VENDORS='$icd' GOMPT_PLUGINS=opencl GOMPT_OPENCL_WAIT=$w '$bin/ompt-bench' -json -device opencl:0 -rounds 3 -case 'empty_target,wait_1ms,wait_1ms_x16,raw_cl_wait_1ms,raw_cl_wait_1ms_x16' >'$OUT/bench-nvidia-opencl-wait-$w.json'"
	done
	for s in off on; do
		step "bench-nvidia-opencl-staging-$s" . sh -c "OCL_ICD_VENDORS='$icd' GOMPT_PLUGINS=opencl GOMPT_OPENCL_STAGING=$s '$bin/ompt-bench' -json -device opencl:0 -rounds 3 -case 'h2d_64MiB,d2h_64MiB,raw_cl_h2d_64MiB,raw_cl_d2h_64MiB,raw_cl_h2d_64MiB_pinned,raw_cl_d2h_64MiB_pinned' >'$OUT/bench-nvidia-opencl-staging-$s.json'"
	done
	step bench-host . sh -c "GOMPT_PLUGINS=host '$bin/ompt-bench' -json -device host:0 >'$OUT/bench-host.json'"
fi
rm -rf "$icd"
echo "outputs in $OUT"
