package corpus

import "math"

// SumInt64 adds int64 values, wrapping as Go does.
//
//gompt:kernel dims=n reduce=+
func SumInt64(i int, n int, a []int64) int64 { return a[i] * 0x3000000000000001 }

// SumFloat32 is a dot product.
//
//gompt:kernel dims=n reduce=+
func SumFloat32(i int, n int, x, y []float32) float32 { return x[i] * y[i] }

// SumFloat64In2D adds over a 2-D space, with a branch.
//
//gompt:kernel dims=nx,ny reduce=+
func SumFloat64In2D(x, y int, nx, ny int, a []float64) float64 {
	v := a[y*nx+x]
	if x == y {
		return 2 * v
	}
	return v
}

// ProdInt32 multiplies int32 values, wrapping.
//
//gompt:kernel dims=n reduce=*
func ProdInt32(i int, n int, a []int32) int32 { return a[i] | 1 }

// ProdFloat64 multiplies float64 values near 1.
//
//gompt:kernel dims=n reduce=*
func ProdFloat64(i int, n int, a []float64) float64 { return a[i] }

// MinInt16 is the least int16 value in a 3-D space.
//
//gompt:kernel dims=nx,ny,nz reduce=min
func MinInt16(x, y, z int, nx, ny, nz int, a []int16) int16 {
	return a[(z*ny+y)*nx+x] - int16(x*y)
}

// MinFloat32 is the least value, from Go's min.
//
//gompt:kernel dims=n reduce=min
func MinFloat32(i int, n int, a []float32) float32 { return a[i] - float32(i%5) }

// MaxUint64 is the greatest uint64 value.
//
//gompt:kernel dims=n reduce=max
func MaxUint64(i int, n int, a []uint64) uint64 { return a[i] * uint64(i+1) }

// MaxFloat64 is the greatest value of a transcendental function: within
// the tolerance of math.Sin.
//
//gompt:kernel dims=n reduce=max
func MaxFloat64(i int, n int, a []float64) float64 { return math.Sin(a[i] * float64(i)) }
