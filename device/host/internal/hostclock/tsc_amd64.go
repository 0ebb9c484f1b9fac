package hostclock

func rdtsc() uint64

func cpuid(leaf uint32) (eax, ebx, ecx, edx uint32)

// hasInvariantTSC reports whether the time-stamp counter runs at a
// constant rate in every power state (CPUID 0x80000007 EDX bit 8) and
// RDTSCP exists (0x80000001 EDX bit 27: a CPU without it is too old to trust).
// golang.org/x/sys/cpu has neither bit (its X86 flags stop at leaf 7 and
// it does not export cpuid), so the probe stays here.
func hasInvariantTSC() bool {
	if max, _, _, _ := cpuid(0x80000000); max < 0x80000007 {
		return false
	}
	_, _, _, ext := cpuid(0x80000001)
	_, _, _, pm := cpuid(0x80000007)
	return ext&(1<<27) != 0 && pm&(1<<8) != 0
}
