#!/usr/bin/env bash
# ci/reliability.sh: the reliability run of issue 8, and the one command
# that regenerates docs/reliability.md from it. In order:
#
#   1. FuzzMapping (mapping/fuzz_test.go) against the reference model for
#      FUZZTIME (default 60s; the committed corpus runs first);
#   2. the fault matrix (target/soak TestFaultMatrix, device/faulty);
#   3. the concurrency soak under -race: 64 goroutines x SOAK_ITERS
#      (default 1000) mixed constructs on every device, sharing inputs and
#      outputs, and again with a tracing tool attached (target/soak/tooled),
#      records vs callbacks;
#   4. the misbehaving tools and the shutdown leak check;
#   5. the model-based concurrent test under -race (target/soak TestModel)
#      for MODEL_TIME (default 60s) on each device;
#   6. mutation testing (ci/mutate, issue 21) of a seeded sample of
#      MUT_N mutants (default 100) of mapping, ompt (with its engine,
#      target/internal/omptrt) and target each
#      (MUT_SEED, default 1); MUT_N=0 skips it;
#
# then writes docs/reliability.md with the figures of this run.
#
#   ci/reliability.sh                          # the long run (about 15 min on 2 cores)
#   FUZZTIME=20s SOAK_ITERS=50 MODEL_TIME=5s ci/reliability.sh   # the bounded run CI uses
#   OUT=/tmp/r.md ci/reliability.sh            # write the report elsewhere
#
# Checks by class: every test may write NAME.classes into
# $GOMPT_RELIABILITY_OUT, one line per class of check and device, four
# tab-separated fields: class, device, checks run, checks failed
# (target/soak's writeClasses). The report's table of checks by class is
# made from every such file; the classes named in expected_classes below
# get a TODO line until their test writes its file.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
FUZZTIME=${FUZZTIME:-60s}
SOAK_ITERS=${SOAK_ITERS:-1000}
MODEL_TIME=${MODEL_TIME:-60s}
MUT_N=${MUT_N:-100}
MUT_SEED=${MUT_SEED:-1}
# Classes other tests are to report (NAME.classes), with what they cover.
expected_classes=(
	"pointers:pointer-type arguments and maps"
	"bounds:out-of-bounds list items and arguments"
	"shape:launch shapes"
	"shutdown:Shutdown under load"
)
OUT=${OUT:-docs/reliability.md}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GOMPT_RELIABILITY_OUT=$work

step() { printf '\n=== %s\n' "$*"; }
fail=0

step "fuzz: FuzzMapping for $FUZZTIME"
corpus=$(ls mapping/testdata/fuzz/FuzzMapping | wc -l)
if go test -run '^$' -fuzz '^FuzzMapping$' -fuzztime "$FUZZTIME" ./mapping >"$work/fuzz.log" 2>&1; then
	fuzzres="no failure"
else
	fuzzres="FAILED (see below)"
	fail=1
fi
tail -3 "$work/fuzz.log"
fuzzline=$(grep -E '^fuzz: elapsed' "$work/fuzz.log" | tail -1 || true)

step "bad input by class (pointer types, bounds, shapes) and Shutdown under load, every device"
if ! GOMPT_PLUGINS=opencl,host go test -race -count=1 -run '^(TestBufferShorterThanLen|TestBufferElementType|TestScalarRangeAndUntypedBuffer|TestShapeLimits|TestPointerElementsRefused|TestShutdownUnderLoad)$' ./target >"$work/classes.log" 2>&1; then
	fail=1
fi
grep -E '^(--- |ok|FAIL)' "$work/classes.log" || true

step "fault matrix, soak ($SOAK_ITERS iterations), shutdown leaks under -race"
if ! GOMPT_SOAK_ITERS=$SOAK_ITERS go test -race -count=1 -v -timeout 30m \
	-run 'TestFaultMatrix|TestSoak|TestShutdownLeaks' ./target/soak >"$work/soak.log" 2>&1; then
	fail=1
	soakres="FAILED"
else
	soakres="passed"
fi
grep -E '^(--- |ok|FAIL)' "$work/soak.log" || true

step "soak with a tracing tool and misbehaving tools under -race"
if ! GOMPT_SOAK_ITERS=$SOAK_ITERS go test -race -count=1 -v -timeout 30m ./target/soak/tooled >"$work/tooled.log" 2>&1; then
	fail=1
	toolres="FAILED"
else
	toolres="passed"
fi
grep -E '^(--- |ok|FAIL)' "$work/tooled.log" || true

step "model-based concurrent test under -race, $MODEL_TIME per device"
if ! GOMPT_MODEL_TIME=$MODEL_TIME go test -race -count=1 -v -timeout 60m -run '^TestModel$' ./target/soak >"$work/model.log" 2>&1; then
	fail=1
	modelres="FAILED"
else
	modelres="passed"
fi
grep -E '^(--- |ok|FAIL)|^    --- |rounds in' "$work/model.log" || true

step "mutation testing: $MUT_N sampled mutants (seed $MUT_SEED) of mapping, ompt, target/internal/omptrt, target"
if [ "$MUT_N" -gt 0 ]; then
	go build -o "$work/mutate" ./ci/mutate
	for p in mapping ompt target/internal/omptrt target; do
		nice "$work/mutate" -pkg "./$p" -n "$MUT_N" -seed "$MUT_SEED" -summary "$work/mutate.tsv" \
			>"$work/mutate-${p//\//_}.log" 2>&1 || fail=1
		grep -E '^(mutate|score)' "$work/mutate-${p//\//_}.log" || tail -5 "$work/mutate-${p//\//_}.log"
	done
fi

# mutate_table formats ci/mutate's summary lines as a markdown table.
mutate_table() {
	if [ ! -s "$work/mutate.tsv" ]; then
		echo "(not run: MUT_N=0, or see the log)"
		return
	fi
	echo "| package (sample) | mutants | compiled | killed | timed out | survived | equivalent | score |"
	echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
	awk -F'\t' '{ printf "| %s | %d | %d | %d | %d | %d | %d | %s %% |\n", $1, $2, $3, $4, $5, $6, $7, $8 }' "$work/mutate.tsv"
	for p in mapping ompt target/internal/omptrt target; do
		if grep -q '^survivors' "$work/mutate-${p//\//_}.log" 2>/dev/null; then
			printf '\nSurvivors in %s (file:line: mutation, function, line):\n\n' "$p"
			sed -n '/^survivors/,$p' "$work/mutate-${p//\//_}.log" | tail -n +2 | sed 's/^  */- `/; s/$/`/; s/\t/` `/g'
		fi
	done
}

leak=$(grep -E 'goroutines: [0-9]+ before|known issue: [0-9]+ goroutines' "$work/soak.log" | head -1 | sed 's/^ *//' || true)
races=$(cat "$work/soak.log" "$work/tooled.log" "$work/model.log" | { grep -c 'WARNING: DATA RACE' || true; })
modelraces=$(grep -c 'WARNING: DATA RACE' "$work/model.log" || true)

# classes_table pivots every NAME.classes file into one markdown table: a
# row per class, a column per device; a cell is the checks run, or how many
# of them failed.
classes_table() {
	cat "$work"/*.classes 2>/dev/null | awk -F'\t' '
	NF == 4 {
		if (!($1 in seenc)) { seenc[$1] = 1; cls[nc++] = $1 }
		if (!($2 in seend)) { seend[$2] = 1; devs[nd++] = $2 }
		runs[$1, $2] += $3; bad[$1, $2] += $4
	}
	END {
		if (nc == 0) { print "(no test wrote figures: see the logs)"; exit }
		printf "| class |"; for (j = 0; j < nd; j++) printf " %s |", devs[j]; print ""
		printf "| --- |"; for (j = 0; j < nd; j++) printf " --- |"; print ""
		for (i = 0; i < nc; i++) {
			printf "| %s |", cls[i]
			for (j = 0; j < nd; j++) {
				k = cls[i] SUBSEP devs[j]
				if (!(k in runs)) printf " |"
				else if (bad[k] > 0) printf " **%d of %d failed** |", bad[k], runs[k]
				else printf " %d |", runs[k]
			}
			print ""
		}
	}'
	for e in "${expected_classes[@]}"; do
		name=${e%%:*}
		[ -f "$work/$name.classes" ] || printf '\nTODO: no figures yet for %s: its test is to write %s.classes (see ci/reliability.sh).\n' "${e#*:}" "$name"
	done
}

step "writing $OUT"
mkdir -p "$(dirname "$OUT")"
{
	cat <<EOF
# Reliability report

Generated by \`ci/reliability.sh\` (FUZZTIME=$FUZZTIME SOAK_ITERS=$SOAK_ITERS MODEL_TIME=$MODEL_TIME) on
$(date -u +%Y-%m-%d) at commit $(git rev-parse --short HEAD), $(go version | cut -d' ' -f3), $(nproc) CPU cores.
Every figure below comes from that run; rerun the command to regenerate this page.
CI runs the bounded form: \`FUZZTIME=20s SOAK_ITERS=50 MODEL_TIME=5s ci/reliability.sh\`.

Results: fuzz $fuzzres, fault matrix and soak $soakres, tooled soak $toolres, model-based test $modelres, data races reported: $races.

## 1. Model-based fuzzing of the present table

\`FuzzMapping\` (mapping/fuzz_test.go) runs random programs of up to 80 steps
against \`mapping.Table\` and a reference model written for clarity
(mapping/model_test.go: a plain list of ranges with structured and dynamic
counts and its own device memory). The table's Ops is a fake device whose
memory is byte slices, so copies really move data. Steps: target enter data,
target exit data, a target region (structured enter, a kernel writing device
memory, structured exit), target data begin/end (nested), target update,
associate (new memory, or the same range and pointer again), disassociate,
a kernel writing a present range, the host writing its memory. List items
are random sub-slices (1 to 4 per construct) of three 48-byte buffers.

Bad inputs generated: empty (zero-length) list items, map types 0 and 7 (not
map types) and types the construct does not accept, the present modifier on
absent items, the always modifier, items of one construct that overlap, items
extending past a present entry, exit of absent items, associate over a
mapped range, disassociate of a mapped (not associated) range, of a range
still in a target data region, of a range not starting an association.
Faults: any step may fail its 1st, 2nd or 3rd device operation (alloc, copy
in, copy out, free).

Compared after every step: error or not and its code (or the injected
failure), the exact sequence of device operations with the host range each
moved, every entry and its counts, translation of sub-ranges of every entry,
presence of a grid of ranges (including ones straddling entries), device
memory of every entry, host memory, and that live device buffers are exactly
the entries' plus the program's own (no leak, no double free).

This run: corpus of $corpus committed inputs, then \`$fuzzline\`: $fuzzres.

Found while building it: no bug in \`mapping\`. The first crash input
(committed as testdata/fuzz/FuzzMapping/partial-exit-failure) was a harness
error that documents a property of \`Table.Exit\`: when one item's copy-out
fails, the other items of the construct are still unmapped. (Since the
structured-exit fix below, the model also releases a structured entry whose
copy-out failed, and retries a failed free once, as the table does.)

## 2. Fault injection

\`device/faulty\` wraps a device so that the Nth call of alloc, free, copy to
device, copy from device, copy (device to device), launch, record or new
queue fails with a \`*device.Error\` naming the operation (code out of
resources for alloc, unknown otherwise), or every queue operation is delayed.
The "faulty" plugin wraps the host devices; target/soak runs the runtime on
it (GOMPT_PLUGINS=faulty,opencl). For each construct and each operation, N
runs from 1 until the construct no longer reaches the Nth call. After each
fault: the error must name the operation; the present table
(\`target.MappingEntries\`) and the device's memory in use
(\`device.MemInfo\`) must be exactly as before the construct; then the same
construct, fault-free, must give correct results.

EOF
	cat "$work/faults.md" 2>/dev/null || echo "(the fault matrix wrote no figures: see the log)"
	cat <<'EOF'

### Found

- **Fixed: a structured exit leaked on a failed copy-out or free.** The end
  of a target region or target data region whose copy back or free failed
  used to restore the entry's counts "for a retry" that nothing could make,
  so the entry and its device memory stayed until `target.Shutdown`. Now
  (`mapping.Table.Exit`) a structured exit releases the mapping all the
  same and reports the lost copy, and a failed free is retried once (a
  single injected free failure is absorbed: the rows above that say so).
- **Exit data is not atomic, by design.** A failed copy-out in target exit
  data leaves that item mapped with its dynamic count, so the program can
  retry it, and unmaps the others: the one row above that differs from
  "as before".
- Entry-side faults (alloc, copy to device), launch, device-to-device copy,
  new queue and memory routines meet the contract in every case tried.

## 3. Concurrency soak

EOF
	echo "Under \`go test -race\`, target/soak TestSoak: $(head -1 "$work/soak.md" 2>/dev/null || echo 'no figures')"
	echo
	tail -n +2 "$work/soak.md" 2>/dev/null || true
	cat <<EOF

Each construct's results are verified, and the goroutines share their data:
every construct reads one of eight shared inputs (one per slice length; the
longest is over 256 KiB, which the host device copies on its queues'
goroutines, as a GPU copies any size) while other goroutines map the same
one (map to, or a reference held by enter data); each goroutine's outputs
are chunks of two arrays shared by all; two target nowait regions read the
same shared input into two outputs (the program of the report in issue
"Right answers or a clear error, always"); outputs are handed from goroutine
to goroutine through a channel, mapped by one (enter data) and unmapped by
the next (exit data from); and a data region's body panics, the caller
recovers, and the output must be unmapped and map tofrom correctly again.
Afterwards no entry is left mapped, the handed-over outputs hold what they
must, and each device's memory in use is back to its baseline. A goroutine
stops at its first failure; section 7 counts, by kind, the constructs run
and the goroutines a failure of that kind stopped.

With a Go tool attached that traces every device (target/soak/tooled
TestSoakTraced, also under -race): $(cat "$work/tooled.md" 2>/dev/null || echo 'no figures').
Records delivered plus records counted lost (\`omptrt.TraceStats\`) must equal
the callbacks of each kind (target begin and end, data op, submit).

## 4. Misbehaving tools

Each runs the soak (64 x 10) in a child process; results must stay correct.

$(cat "$work/misbehaving.md" 2>/dev/null || echo '(no figures)')

nilbuf: buffer_request returns nil every other time (those batches are lost
and counted). holdbuf: the tool keeps every completed buffer. panicbuf:
buffer_complete panics on its third call (tracing of that device ends,
the program goes on). goroutines: four tool goroutines call get_device_time,
flush_trace and pause/resume trace throughout (records issued while paused
are not written, by design). panicevent: a target_data_op callback panics: the
runtime recovers it, detaches that tool (no callback reaches it any more,
one line on stderr and in the verbose-init log says why), and the program
goes on with correct results. (Found by this run: the program used to crash;
fixed in ompt.)

## 5. Leaks

Device memory in use returns to its baseline after every soak test (above).
After \`target.Shutdown\`, in a child process: ${leak:-see log}.
The goroutine count must be back to its value before the runtime started
(found by this run: the host kernel pool's workers stayed; Shutdown now
stops them). The OpenCL binding's live-object counts are checked by
device/opencl's tests (TestNoLeakedObjects); CUDA's were not run (no GPU).

## 6. Model-based concurrent test

target/soak TestModel, under \`go test -race\`, for $MODEL_TIME on each
device: $(cat "$work/model.md" 2>/dev/null || echo 'no figures'). Data
races the race detector reported in it: $modelraces.

Each round, 8 goroutines run random programs (random map types, the always
and present modifiers, implicit maps, whole slices and sub-slices as kernel
arguments) over slices of one random length (on the host device every other
round is over 256 KiB): target regions (saxpy, fill, vecadd), nowait or not;
enter data, exit data and update, nowait or not, several in flight on
disjoint slices; data regions (nested up to twice) whose body runs
constructs of its own and returns nil, returns an error or panics (the
caller recovers); host writes; and bad inputs (the present modifier on an
absent item, exit data of an absent item), which must fail with a not-found
error and change nothing. The data: three shared inputs every goroutine
reads and maps at once (each epoch starts with every goroutine running two
target nowait regions on the same one); per-goroutine outputs that are
chunks of shared arrays; outputs handed between goroutines through a
channel, mapped or not; and at each epoch's end three goroutines compute
the next epoch's shared inputs on the device, each from two others read by
two goroutines at once. A sequential model of each goroutine's program
(plain Go: values, presence, reference counts, device copies, undefined
data) is compared after every construct and every Wait with every slice
the goroutine owns: its values, whether it is present, its structured and
dynamic counts. After each epoch no shared input may stay mapped, after
each round the present table is as before it, and after each device's
rounds its memory in use is back to its start. A failure counts against
the construct after which it was seen; the slice is then unmapped (or,
when it cannot be, replaced) so the round goes on. On the initial device
the same programs run with maps that do nothing.

Before the fixes of 2026-11-24 (a present entry carries the completion of
the copy filling it and of other constructs' work still using it; a data
region's maps are exited when its body panics), the bounded form gave
wrong results in 9 of 10 runs without -race, and data races, in every
class that shares an input, on the host device and on POCL, and every
data region whose body panicked left its items mapped. This run: see the
result line above and the table below.

## 7. Checks by class

Every class of check with a count, from every test that writes them (a
\`NAME.classes\` file, see ci/reliability.sh): how many ran on each device,
and how many failed.

$(classes_table)

## 8. Mutation testing

\`ci/mutate\` (issue 21) makes one small change to a package at a time
(flips a comparison, moves a boundary, swaps + and - or && and ||, removes
a call, assignment or defer, returns nil instead of an error, swaps 0 and
1 or true and false), runs the package's tests on it (through go's
-overlay: the tree is never changed), and counts the changes no test
noticed. This run: a sample of $MUT_N mutants per package, seed $MUT_SEED; the score
is killed (timed out included) over compiled, non-equivalent mutants
(equivalent ones are listed, each with why, in ci/mutate/equivalent.txt).
Targets on the full packages: mapping 95 %, ompt 90 %, target 85 %.

$(mutate_table)

Full runs: \`go run ./ci/mutate -pkg ./mapping\` (every mutant: 778 of
them, 37 minutes on 2 busy cores), \`-n N -seed S\` for a sample,
\`-also importers\` to run the tests of the packages built on it on the
mutants its own tests leave. docs/mutation.md has the scores of the full
and larger runs, with their commands and the survivors left.
EOF
} >"$OUT"
echo "wrote $OUT"
exit $fail
