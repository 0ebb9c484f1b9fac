//go:build !(linux && (amd64 || arm64))

package ompt

// procID is ompt_get_proc_id: unknown (-1) on this system.
func procID() int { return -1 }
