package corpus

// RowRuns walks rows from the point's diagonal, which its Go image takes
// once per loop, as slices of the loop's turns (plan.LoopRows): a point
// past the last column has no turns, where a's row from the first turn
// would begin past a's end; a running sum that reads the element the
// turn before wrote; a loop left by break and continue, whose counter is
// read beside its rows; a labelled loop, which keeps its form (an inner
// loop continues it); and a row per turn of an outer loop.
//
//gompt:kernel dims=m len(a)=m*n len(b)=m*n len(c)=m len(d)=3*m*n
func RowRuns(i int, m, n int, lim float64, a, b, c, d []float64) {
	for j := i + 1; j < n; j++ {
		a[i*n+j] += a[i*n+j-1]
	}
	var s float64
	for j := i; j < n; j++ {
		v := b[i*n+j] * 0.5
		if v > lim {
			break
		}
		if v < 0 {
			continue
		}
		s += v + float64(j)
	}
	var t float64
rows:
	for j := 0; j < n; j++ {
		t += b[i*n+j]
		for k := 0; k < 2; k++ {
			if t > lim*float64(k+3) {
				continue rows
			}
		}
		t *= 0.5
	}
	c[i] = s + t
	for r := 0; r < 3; r++ {
		for j := 0; j < n; j++ {
			d[(r*m+i)*n+j] = d[(r*m+i)*n+j]*float64(r+1) + b[i*n+j]
		}
	}
}

// SumTurns runs loops whose turns each sum over an inner loop that is the
// same in every turn; its Go image runs four turns together, each turn's
// sum through its terms in order, then their tails in order
// (plan.SumJams): a head that declares and defines locals, a local of the
// inner loop, a tail that reads what an earlier turn's tail wrote, a
// head and tail that reach the turn's own element of one buffer, and a
// counter that may run up to the largest int. Loops whose head reads
// what the tail before it wrote (a variable, or the next turn's element)
// run one turn at a time.
//
//gompt:kernel dims=m len(a)=m*n len(w)=k len(out)=m*n len(far)=m len(last)=m
func SumTurns(i int, m, n, k, lo, hi int, a, w, out, far, last []float64) {
	for j := 0; j < n; j++ {
		var s float64
		d := a[i*n+j] * 0.5
		for t := 0; t < k; t++ {
			p := w[t] * d
			s += p
		}
		out[i*n+j] = s
		out[i*n+j] += out[i*n] * 0.25
	}
	for j := 0; j < n; j++ {
		v := out[i*n+j] * 0.5
		for t := 0; t < k; t++ {
			v += w[t] * a[i*n+j]
		}
		out[i*n+j] = v
	}
	for j := 0; j < n; j++ {
		v := out[i*n+j] * 0.5
		for t := 0; t < k; t++ {
			v += w[t]
		}
		out[i*n+(j+1)%n] += v
	}
	for q := lo; q < hi; q++ {
		c := float64(q-lo) / 3
		for t := 0; t < k; t++ {
			c = c*0.5 + w[t]
		}
		far[i] += c
	}
	acc := float64(i)
	for j := 0; j < n; j++ {
		s := acc
		for t := 0; t < k; t++ {
			s += w[t]
		}
		acc = s * 0.5
	}
	last[i] = acc
}

// SumRows is 2mm's second product, row i: each turn's head reads the
// element its tail writes, and no check is left, so its OpenCL C runs
// four turns together too (emitc's sum jam), where c is apart from a
// and b. It is float32, so that an OpenCL device without fp64 (Mesa's
// rusticl on llvmpipe) runs the jam as well.
//
//gompt:kernel dims=m len(a)=m*k len(b)=k*n len(c)=m*n
func SumRows(i int, m, n, k int, a, b, c []float32) {
	for j := 0; j < n; j++ {
		s := c[i*n+j] * 0.5
		for t := 0; t < k; t++ {
			s += a[i*k+t] * b[t*n+j]
		}
		c[i*n+j] = s
	}
}

// Triangle walks row i's lower triangle, to the diagonal itself
// (j <= i): the prover bounds j by i+1, and i+1 by the rows, so every
// element is in range without a check.
//
//gompt:kernel dims=n len(a)=n*n len(out)=n*n
func Triangle(i int, n int, a, out []float64) {
	for j := 0; j <= i; j++ {
		out[i*n+j] = a[j*n+i] * 0.5
	}
}

// RowUpdates updates row i of c from columns of a, to the diagonal
// (syrk's loop, j <= i) and then past it (j from i+1, no turn in the last
// row): its Go image runs four turns of k together over each row, each
// element through its four updates in order (emitgo's point jam), where
// c's buffer overlaps none of a's, and the loops as written otherwise.
//
//gompt:kernel dims=n len(c)=n*n len(a)=n*m
func RowUpdates(i int, n, m int, s float64, c, a []float64) {
	for k := 0; k < m; k++ {
		w := s * a[i*m+k]
		for j := 0; j <= i; j++ {
			c[i*n+j] += w * a[j*m+k]
		}
	}
	for k := 0; k < m; k++ {
		for j := i + 1; j < n; j++ {
			c[i*n+j] -= a[j*m+k] * 0.5
		}
	}
}
