package target

import (
	"sync/atomic"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// queueCounter is a device that counts the queues made on it.
type queueCounter struct {
	device.Device
	made atomic.Int32
}

func (c *queueCounter) NewQueue() (device.Queue, error) {
	c.made.Add(1)
	return c.Device.NewQueue()
}

// TestLearnProfilesMakesNoExtraQueue: learning whether a plugin's queues
// profile makes no queue of its own: the one it asks is the first
// construct's. With a device whose queues do not profile, the answer is no.
func TestLearnProfilesMakesNoExtraQueue(t *testing.T) {
	p, ok := device.Lookup("host")
	require.True(t, ok, `plugin "host" is not registered`)
	ds, err := p.Devices()
	require.NoError(t, err, "host devices")
	require.NotEmpty(t, ds, "host devices")
	qc := &queueCounter{Device: ds[0]}
	d := &dev{plugin: "host", d: qc}
	d.learnProfiles()
	assert.True(t, d.profiles, "host queues time their own operations, but profiles is false")
	c, err := d.take()
	require.NoError(t, err)
	assert.Equal(t, int32(1), qc.made.Load(), "queues made by learning profiles and taking the first construct")
	c.q.Release()

	plain := &dev{plugin: "plain", d: plainDevice{ds[0]}}
	plain.learnProfiles()
	assert.False(t, plain.profiles, "a device whose queues do not profile: profiles is true")
	c, err = plain.take()
	require.NoError(t, err)
	c.q.Release()
}

// plainDevice's queues hide every optional interface of the host queue.
type plainDevice struct{ device.Device }

func (p plainDevice) NewQueue() (device.Queue, error) {
	q, err := p.Device.NewQueue()
	return struct{ device.Queue }{q}, err
}
