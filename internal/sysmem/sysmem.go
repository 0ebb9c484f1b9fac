// Package sysmem reads how much memory the process may use: what the host
// device reports as its global memory, and what the runtime's initial
// device weighs host allocations against. It sits below both, so that
// neither imports the other.
package sysmem

// Fallback is the memory assumed where the machine's cannot be read.
const Fallback = 4 << 30
