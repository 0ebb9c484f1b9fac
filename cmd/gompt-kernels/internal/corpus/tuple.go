package corpus

// swapNext swaps b[j] and b[j+1] in one tuple assignment.
//
//gompt:func
func swapNext(b []int32, j int) {
	b[j], b[j+1] = b[j+1], b[j]
}

// Tuples assigns buffer elements and locals in tuple assignments, in Go's
// order: the values and the targets' indexes first (k, out[k] = ...
// stores at the k before the assignment), then the stores from left to
// right; in the kernel and in a helper.
//
//gompt:kernel dims=n len(out)=4*n
func Tuples(i int, n int, in []int32, out []int32) {
	o := 4 * i
	k := o
	k, out[k] = o+1, in[i]
	out[k], out[k+1] = in[i]*3, out[k-1]+1
	out[o], out[o+1] = out[o+1], out[o]
	var x, y int32
	x, y = out[o+2], x
	out[o+3], x = x+y, out[o]
	swapNext(out, o+1)
	out[o] += x
}
