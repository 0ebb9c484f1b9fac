package corpus

// Control uses every statement of the subset: if/else chains, the three
// for forms, range over an int, switches with and without a tag, break
// and continue (labelled too), early return, var declarations, parallel
// assignment and shadowing.
//
//gompt:kernel dims=n
func Control(i int, n int, a []int32, out []int64) {
	x := int64(a[i])
	var acc int64
	var flag bool
	// Three-clause for, with continue (the post statement still runs)
	// and break.
	for j := 0; j < 10; j++ {
		if j == 2 {
			continue
		}
		if int64(j) > x%7+3 {
			break
		}
		acc += int64(j)
	}
	// Condition-only and infinite loops.
	k := x
	for k > 100 {
		k /= 3
	}
	for {
		k++
		if k%5 == 0 {
			break
		}
	}
	acc = acc*1000 + k
	// Range over an int, a switch inside with break (leaves the switch
	// only), and a labelled continue.
outer:
	for j := range 6 {
		switch {
		case j == 1:
			acc += 7
			break
		case j == int(x%4):
			continue outer
		default:
			acc -= 1
		}
		for m := range int64(3) {
			if m == 1 {
				continue outer
			}
			acc += m + 1
		}
	}
	// A switch with a tag, cases listing values, default in the middle.
	switch r := x % 6; r {
	case 0, 3:
		acc *= 3
	default:
		flag = true
	case 1:
		acc -= 100
	}
	// Parallel assignment and shadowing.
	p, q := acc, x
	p, q = q, p
	if q := p + 1; q > 0 {
		acc += q
	} else if q < -10 {
		acc -= q
	} else {
		acc ^= q
	}
	{
		x := x * 2
		acc += x
	}
	if flag {
		acc = -acc
	}
	out[i] = acc + q
	if x < 0 {
		return
	}
	out[i]++
}

// Labels: a labelled break out of two loops, and a loop whose condition
// reads what the body writes.
//
//gompt:kernel dims=n
func Labels(i int, n int, a []int64, out []int64) {
	v := a[i]
	var found int64 = -1
search:
	for x := int64(0); x < 8; x++ {
		for y := int64(0); y < 8; y++ {
			if x*y == v%50 {
				found = x*8 + y
				break search
			}
		}
	}
	steps := 0
	for u := v; u != 1 && u > 0 && steps < 100; steps++ {
		if u%2 == 0 {
			u /= 2
		} else {
			u = 3*u + 1
		}
	}
	out[i] = found*1000 + int64(steps)
}
