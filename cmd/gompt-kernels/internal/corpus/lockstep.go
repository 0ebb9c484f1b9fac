package corpus

// Conv is a row convolution whose loop over the weights does not depend
// on the point: its Go image runs the points of a row in lockstep (a
// local declared in the loop, a conditional update, a return every point
// takes, an element read at a lane's offset).
//
//gompt:kernel dims=n,m len(w)=k
func Conv(j, i int, m, n, k int, w []float32, in, out []float32) {
	if k <= 0 {
		return
	}
	var acc, peak float32
	for p := 0; p < k; p++ {
		t := w[p] * in[i*n+(j+p)%n]
		acc += t
		if t > peak {
			peak = t
		}
	}
	out[i*n+j] = acc - peak + in[i*n+j]
}
