package target

import (
	"sync/atomic"
	"testing"

	"github.com/gompt/gompt/device"
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
	if !ok {
		t.Fatal(`plugin "host" is not registered`)
	}
	ds, err := p.Devices()
	if err != nil || len(ds) == 0 {
		t.Fatalf("host devices: %v", err)
	}
	qc := &queueCounter{Device: ds[0]}
	d := &dev{plugin: "host", d: qc}
	d.learnProfiles()
	if !d.profiles {
		t.Error("host queues time their own operations, but profiles is false")
	}
	c, err := d.take()
	if err != nil {
		t.Fatal(err)
	}
	if n := qc.made.Load(); n != 1 {
		t.Errorf("learning profiles and taking the first construct made %d queues, want 1", n)
	}
	c.q.Release()

	plain := &dev{plugin: "plain", d: plainDevice{ds[0]}}
	plain.learnProfiles()
	if plain.profiles {
		t.Error("a device whose queues do not profile: profiles is true")
	}
	c, err = plain.take()
	if err != nil {
		t.Fatal(err)
	}
	c.q.Release()
}

// plainDevice's queues hide every optional interface of the host queue.
type plainDevice struct{ device.Device }

func (p plainDevice) NewQueue() (device.Queue, error) {
	q, err := p.Device.NewQueue()
	return struct{ device.Queue }{q}, err
}
