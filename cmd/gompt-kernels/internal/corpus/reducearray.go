package corpus

// Hist256 counts v's values in 256 bins (h, 32-bit) and sums them per bin
// of 16 (s, 64-bit): array reductions, each team adding into its private
// copy, the copies added into h and s.
//
//gompt:kernel dims=n reduce(h)=+ reduce(s)=+ len(h)=256 len(s)=16
func Hist256(i int, n int, v []uint8, h []uint32, s []int64) {
	b := v[i]
	h[b]++
	s[b%16] += int64(b) - 3
	s[15-b%16] -= int64(i & 7)
	h[b^0x80]--
}

// Extremes keeps, per bin, the least and greatest of v (float64 and
// float32, through compare-and-swap loops), the product of odd factors
// (uint32, wrapping: a CAS loop), the greatest k (uint32: the device's
// atomic_max) and the least of a 64-bit value (a CAS loop): array
// reductions whose results do not depend on the order the points are
// combined in, so every device gives the Go function's bits.
//
//gompt:kernel dims=n reduce(lo)=min reduce(hi)=max reduce(p)=* reduce(m)=max reduce(q)=min len(lo)=64 len(hi)=64 len(p)=16 len(m)=16 len(q)=16
func Extremes(i int, n int, v []float64, k []int32, lo []float64, hi []float32, p []uint32, m []uint32, q []int64) {
	b := i & 63
	lo[b] = min(lo[b], v[i])
	hi[b] = max(float32(v[i]), hi[b], -1)
	c := k[i] & 15
	p[c] *= uint32(k[i]) | 1
	m[c] = max(m[c], uint32(k[i])*uint32(i))
	q[c] = min(int64(k[i])*int64(i)-int64(n), q[c])
}

// FloatBins sums float32 values into bins and multiplies float64 factors
// near 1 into others: float array reductions, whose order of combining
// differs between devices (the Sample's tolerance says so).
//
//gompt:kernel dims=n reduce(s)=+ reduce(p)=* len(s)=32 len(p)=8
func FloatBins(i int, n int, v []float32, s []float32, p []float64) {
	s[i&31] += v[i]
	s[(i+7)&31] -= v[i] * 0.25
	p[i&7] *= 1 + float64(v[i]-1)/1024
}

// EmptyBins has an array reduction and an empty body: h comes back as it
// went.
//
//gompt:kernel dims=n reduce(h)=+ len(h)=8
func EmptyBins(i int, n int, h []float32) {
}
