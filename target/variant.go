package target

// MatchDevice reports whether the device a construct with device clause
// dev would run on matches one of selectors: a backend (DeviceInfo.Backend,
// the plugin's name: "host", "opencl", "cuda"), a device type
// (DeviceInfo.Type: "gpu", "cpu", "accelerator"), or "initial" for the
// initial device (which matches nothing else). A clause that names no
// device matches nothing (the construct reports the error). It resolves
// the clause as a construct does (DefaultDevice, OMP_TARGET_OFFLOAD) and
// opens nothing; safe for concurrent use.
//
// It is OpenMP's context selector device={kind(...), arch(...)}, known at
// launch: the launcher of a kernel with variants (gompt-kernels'
// //gompt:variant) calls it to pick the kernel to run on dev.
func MatchDevice(dev DeviceClause, selectors ...string) bool {
	r := state()
	n, err := r.resolve(dev.Num())
	if err != nil {
		return false
	}
	if n == len(r.devs) {
		for _, s := range selectors {
			if s == "initial" {
				return true
			}
		}
		return false
	}
	info := &r.devs[n].info
	for _, s := range selectors {
		if s != "" && (s == info.Backend || s == info.Type) {
			return true
		}
	}
	return false
}
