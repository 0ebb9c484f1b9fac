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
}
