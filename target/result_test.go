package target_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
)

// A Result's value is computed once, after its task has succeeded, by the
// first Wait; never when the task failed, whose Wait gives the zero value.
func TestResult(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int32
	tk := target.Go(func() error { <-release; return nil })
	r := target.NewResult(tk, func() int { calls.Add(1); return 42 })
	assert.Same(t, tk, r.Task())
	select {
	case <-r.Done():
		t.Fatal("Done before the task finished")
	default:
	}
	close(release)
	for range 3 {
		v, err := r.Wait()
		assert.NoError(t, err)
		assert.Equal(t, 42, v)
	}
	assert.EqualValues(t, 1, calls.Load(), "the value is computed once")

	boom := errors.New("boom")
	f := target.NewResult(target.Go(func() error { return boom }), func() int { calls.Add(1); return 7 })
	v, err := f.Wait()
	assert.ErrorIs(t, err, boom)
	assert.Zero(t, v)
	assert.EqualValues(t, 1, calls.Load(), "no value for a failed task")
}

// MatchDevice matches a device clause's device by its backend and type,
// and the initial device by "initial" alone; a clause that names no
// device matches nothing.
func TestMatchDevice(t *testing.T) {
	initial := target.Dev(target.InitialDevice)
	assert.True(t, target.MatchDevice(initial, "cuda", "initial"))
	assert.False(t, target.MatchDevice(initial, "host", "cpu", "opencl", "cuda", "gpu"))
	for _, d := range target.Devices() {
		dev := target.Dev(d.Num)
		assert.True(t, target.MatchDevice(dev, d.Backend), "%s: its backend %s", d.ID, d.Backend)
		assert.True(t, target.MatchDevice(dev, "nothing", d.Type), "%s: its type %s", d.ID, d.Type)
		assert.False(t, target.MatchDevice(dev, "initial"), d.ID)
		assert.False(t, target.MatchDevice(dev), d.ID)
	}
	assert.False(t, target.MatchDevice(target.Dev(1<<20), "host", "opencl", "cuda", "initial"))
}
