package mapping

// This file is the ordered index of a Table: a B-tree (CLRS, with items in
// every node) keyed by the start address of each entry's host range. Keys are
// unique because entries never overlap. Wide nodes keep the tree shallow
// (depth 4 at a million entries) and each node's keys in a few cache lines;
// nodes are recycled through a free list so that a steady state of inserts
// and deletes does not allocate. Not safe for concurrent use: the Table's
// lock guards it.

const (
	degree  = 16           // minimum degree t: every node but the root holds t-1..2t-1 keys
	maxKeys = 2*degree - 1 // 31

	maxFreeNodes = 64 // nodes kept for reuse after deletes
)

type node struct {
	n    int
	leaf bool
	keys [maxKeys]uintptr
	ents [maxKeys]*entry
	kids [maxKeys + 1]*node // nil in a leaf
}

type tree struct {
	root  *node
	len   int
	free  *node // free list, linked through kids[0]
	nfree int
}

func (t *tree) newNode(leaf bool) *node {
	x := t.free
	if x == nil {
		x = new(node)
	} else {
		t.free = x.kids[0]
		x.kids[0] = nil
		t.nfree--
	}
	x.leaf = leaf
	return x
}

func (t *tree) freeNode(x *node) {
	*x = node{}
	if t.nfree < maxFreeNodes {
		x.kids[0] = t.free
		t.free = x
		t.nfree++
	}
}

// upper returns the number of keys of x that are <= a.
func upper(x *node, a uintptr) int {
	lo, hi := 0, x.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if x.keys[m] <= a {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// lower returns the number of keys of x that are < a.
func lower(x *node, a uintptr) int {
	lo, hi := 0, x.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if x.keys[m] < a {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// around returns the entry with the greatest key <= a and the entry with the
// smallest key > a, either nil when there is none, in one descent.
func (t *tree) around(a uintptr) (le, gt *entry) {
	x := t.root
	for x != nil {
		i := upper(x, a)
		if i > 0 {
			le = x.ents[i-1]
		}
		if i < x.n {
			gt = x.ents[i]
		}
		if x.leaf {
			break
		}
		x = x.kids[i]
	}
	return le, gt
}

// insert adds e under key e.start, which must not be in the tree.
func (t *tree) insert(e *entry) {
	k := e.start
	if t.root == nil {
		t.root = t.newNode(true)
	}
	if t.root.n == maxKeys {
		r := t.newNode(false)
		r.kids[0] = t.root
		t.root = r
		t.split(r, 0)
	}
	x := t.root
	for !x.leaf {
		i := upper(x, k)
		if x.kids[i].n == maxKeys {
			t.split(x, i)
			if k > x.keys[i] {
				i++
			}
		}
		x = x.kids[i]
	}
	i := upper(x, k)
	copy(x.keys[i+1:x.n+1], x.keys[i:x.n])
	copy(x.ents[i+1:x.n+1], x.ents[i:x.n])
	x.keys[i], x.ents[i] = k, e
	x.n++
	t.len++
}

// split splits the full child i of x around its median, which moves up
// into x (not full).
func (t *tree) split(x *node, i int) {
	y := x.kids[i]
	z := t.newNode(y.leaf)
	z.n = degree - 1
	copy(z.keys[:degree-1], y.keys[degree:])
	copy(z.ents[:degree-1], y.ents[degree:])
	if !y.leaf {
		copy(z.kids[:degree], y.kids[degree:])
		clear(y.kids[degree:])
	}
	mk, me := y.keys[degree-1], y.ents[degree-1]
	clear(y.ents[degree-1:])
	y.n = degree - 1

	copy(x.kids[i+2:x.n+2], x.kids[i+1:x.n+1])
	x.kids[i+1] = z
	copy(x.keys[i+1:x.n+1], x.keys[i:x.n])
	copy(x.ents[i+1:x.n+1], x.ents[i:x.n])
	x.keys[i], x.ents[i] = mk, me
	x.n++
}

// maxDepth bounds the height of the tree: with every node but the root
// holding at least degree children, 24 levels is far more than memory holds.
const maxDepth = 24

// delete removes key k; a key not in the tree changes nothing. It removes
// from a leaf (an internal key is first replaced by its predecessor) and
// then repairs underflow bottom-up, borrowing from a sibling or merging
// with one, so a delete after an insert at the same place does not undo
// the insert's split (no split/merge thrash in steady state).
func (t *tree) delete(k uintptr) {
	if r := t.root; r != nil && r.leaf { // no path to keep, nothing to repair
		i := lower(r, k)
		if i < r.n && r.keys[i] == k {
			t.cut(r, i)
		}
		return
	}
	type step struct {
		x *node
		i int // the child taken
	}
	var path [maxDepth]step
	d := 0
	x := t.root
	i := 0
	for {
		if x == nil {
			return
		}
		i = lower(x, k)
		if i < x.n && x.keys[i] == k {
			break
		}
		if x.leaf {
			return
		}
		path[d] = step{x, i}
		d++
		x = x.kids[i]
	}
	if !x.leaf { // swap in the predecessor, the last key of the left subtree
		path[d] = step{x, i}
		d++
		y := x.kids[i]
		for !y.leaf {
			path[d] = step{y, y.n}
			d++
			y = y.kids[y.n]
		}
		x.keys[i], x.ents[i] = y.keys[y.n-1], y.ents[y.n-1]
		x, i = y, y.n-1
	}
	t.cut(x, i)

	for d > 0 && x.n < degree-1 {
		d--
		p, c := path[d].x, path[d].i
		switch {
		case c > 0 && p.kids[c-1].n >= degree:
			rotateRight(p, c)
		case c < p.n && p.kids[c+1].n >= degree:
			rotateLeft(p, c)
		case c < p.n:
			t.merge(p, c)
		default:
			t.merge(p, c-1)
		}
		x = p
	}
	if r := t.root; r.n == 0 && !r.leaf {
		t.root = r.kids[0]
		t.freeNode(r)
	}
	// An empty leaf stays the root: a table that maps and unmaps one
	// item per construct neither clears a node nor takes one each time.
}

// cut removes key i from leaf x.
func (t *tree) cut(x *node, i int) {
	copy(x.keys[i:x.n-1], x.keys[i+1:x.n])
	copy(x.ents[i:x.n-1], x.ents[i+1:x.n])
	x.ents[x.n-1] = nil
	x.n--
	t.len--
}

// merge joins child i+1 of x and the key between them into child i; together
// they hold at most maxKeys-1 keys.
func (t *tree) merge(x *node, i int) {
	y, z := x.kids[i], x.kids[i+1]
	y.keys[y.n], y.ents[y.n] = x.keys[i], x.ents[i]
	copy(y.keys[y.n+1:], z.keys[:z.n])
	copy(y.ents[y.n+1:], z.ents[:z.n])
	if !y.leaf {
		copy(y.kids[y.n+1:], z.kids[:z.n+1])
	}
	y.n += z.n + 1

	copy(x.keys[i:x.n-1], x.keys[i+1:x.n])
	copy(x.ents[i:x.n-1], x.ents[i+1:x.n])
	x.ents[x.n-1] = nil
	copy(x.kids[i+1:x.n], x.kids[i+2:x.n+1])
	x.kids[x.n] = nil
	x.n--
	t.freeNode(z)
}

// rotateRight moves the last key of child i-1 up into x and x's key i-1
// down into the front of child i.
func rotateRight(x *node, i int) {
	l, c := x.kids[i-1], x.kids[i]
	copy(c.keys[1:c.n+1], c.keys[:c.n])
	copy(c.ents[1:c.n+1], c.ents[:c.n])
	if !c.leaf {
		copy(c.kids[1:c.n+2], c.kids[:c.n+1])
		c.kids[0] = l.kids[l.n]
		l.kids[l.n] = nil
	}
	c.keys[0], c.ents[0] = x.keys[i-1], x.ents[i-1]
	c.n++
	x.keys[i-1], x.ents[i-1] = l.keys[l.n-1], l.ents[l.n-1]
	l.ents[l.n-1] = nil
	l.n--
}

// rotateLeft moves the first key of child i+1 up into x and x's key i down
// onto the end of child i.
func rotateLeft(x *node, i int) {
	c, r := x.kids[i], x.kids[i+1]
	c.keys[c.n], c.ents[c.n] = x.keys[i], x.ents[i]
	if !c.leaf {
		c.kids[c.n+1] = r.kids[0]
		copy(r.kids[:r.n], r.kids[1:r.n+1])
		r.kids[r.n] = nil
	}
	c.n++
	x.keys[i], x.ents[i] = r.keys[0], r.ents[0]
	copy(r.keys[:r.n-1], r.keys[1:r.n])
	copy(r.ents[:r.n-1], r.ents[1:r.n])
	r.ents[r.n-1] = nil
	r.n--
}

// walk calls f for every entry in key order until f returns false.
func (t *tree) walk(f func(*entry) bool) {
	if t.root != nil {
		walkNode(t.root, f)
	}
}

func walkNode(x *node, f func(*entry) bool) bool {
	for i := 0; i < x.n; i++ {
		if !x.leaf && !walkNode(x.kids[i], f) {
			return false
		}
		if !f(x.ents[i]) {
			return false
		}
	}
	return x.leaf || walkNode(x.kids[x.n], f)
}
