package buffered_test

import (
	"fmt"
	"sync"

	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target"
)

// A tracing tool: it starts device tracing in device_initialize, and the
// runtime hands it buffers of trace records through its buffer callback,
// on the device's tracing goroutine. It counts the records by type and
// prints the counts when it is finalized.
func init() {
	ompt.RegisterTool("buffered", func(ompVersion int, runtime string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: initialize, Finalize: finalize}
	})
}

var (
	mu     sync.Mutex
	counts = map[string]int{}
	// Each traced device's entry points, from its lookup.
	advance = map[int]ompt.AdvanceBufferCursorFunc{}
	handles = map[int]*ompt.DeviceHandle{}
	record  ompt.GetRecordOMPTFunc
)

func initialize(lookup ompt.LookupFunc, initialDevice int, toolData *ompt.Data) int {
	set := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
	set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(deviceInitialize))
	return 1
}

func deviceInitialize(dev int, typ string, h *ompt.DeviceHandle, lookup ompt.LookupFunc, doc string) {
	mu.Lock()
	advance[dev] = lookup("ompt_advance_buffer_cursor").(ompt.AdvanceBufferCursorFunc)
	handles[dev] = h
	record = lookup("ompt_get_record_ompt").(ompt.GetRecordOMPTFunc)
	mu.Unlock()
	start := lookup("ompt_start_trace").(ompt.StartTraceFunc)
	setTrace := lookup("ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)
	start(h, bufferRequest, bufferComplete)
	setTrace(h, true, 0) // every record type
}

// bufferRequest gives the runtime a buffer to fill.
func bufferRequest(dev int) []byte { return make([]byte, 4096) }

// bufferComplete walks the records in buffer[begin:bytes).
func bufferComplete(dev int, buffer []byte, bytes, begin uint64, owned bool) {
	mu.Lock()
	defer mu.Unlock()
	for cur, ok := begin, bytes > begin; ok; cur, ok = advance[dev](handles[dev], buffer, bytes, cur) {
		r := record(buffer, cur)
		switch {
		case r.Target() != nil:
			counts["target"]++
		case r.DataOp() != nil:
			counts["data_op"]++
		case r.Kernel() != nil:
			counts["kernel"]++
		}
	}
}

func finalize(toolData *ompt.Data) {
	mu.Lock()
	defer mu.Unlock()
	fmt.Println("records:", counts)
}

func Example() {
	x := []float32{1, 2, 3, 4}
	y := make([]float32, 4)
	err := target.Target(target.Region{
		Device: target.Dev(target.DefaultDevice),
		Kernel: kernels.Saxpy,
		Shape:  target.N(len(x)),
		Maps:   []target.Map{target.To(x), target.ToFrom(y)},
		Args:   []target.Arg{target.Int(len(x)), target.Float32(1), target.Slice(x), target.Slice(y)},
	})
	if err != nil {
		fmt.Println(err)
	}
	// Shutdown delivers the last records and finalizes the tool.
	target.Shutdown()
	// Output:
	// records: map[data_op:7 kernel:1 target:2]
}
