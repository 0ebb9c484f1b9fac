package corpus

// ProductLen writes every element of b, len(b)=m*k, through an index the
// generator proves below m*k (its loop's bound, which it reads from
// mul, len(mul)=k*m, too). b's length is m*k as Go computes it, two
// negative factors making a positive one, in the runtime's check, the
// OpenCL C and the Go image alike; it was 0 there while the loop ran
// m*k times, and a proven store wrote past a short buffer. Its buffer
// named mul takes no name of the OpenCL C's helpers.
//
//gompt:kernel dims=n len(b)=m*k len(mul)=k*m
func ProductLen(i int, n int, m, k int, mul []int64, b []int64) {
	for j := range m * k {
		b[j] = int64(j)*100 + int64(len(b)) + mul[j]
	}
}
