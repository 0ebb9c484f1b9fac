package target

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/hostexec"
	"github.com/gompt/gompt/device/kcache"
	"github.com/gompt/gompt/mapping"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/omptrt"
)

// OpenMPVersion is the _OPENMP value this runtime follows (OpenMP 5.2).
const OpenMPVersion = 202111

// Device numbers with a special meaning, as in OpenMP 5.2.
const (
	// InitialDevice names the initial (host) device, omp_initial_device.
	InitialDevice = -1
	// InvalidDevice is omp_invalid_device.
	InvalidDevice = -2
	// DefaultDevice names the device in the default-device ICV
	// (OMP_DEFAULT_DEVICE, SetDefaultDevice), whose initial value is
	// device 0. A Region with no device clause (the zero Device field)
	// runs there too.
	DefaultDevice = -3
)

// PluginStatus tells what one plugin found.
type PluginStatus struct {
	Name    string
	Loaded  bool  // the plugin is registered and was asked for devices
	Devices int   // how many devices it contributed
	Err     error // why it has no devices, if it has none
}

// DeviceInfo describes one offload device as the runtime numbers it.
type DeviceInfo struct {
	Num    int    // the OpenMP device number
	ID     string // plugin name and number within the plugin, "host:0"
	Plugin string
	// Index is the device's place in its plugin's device list: the
	// device.Device the runtime drives is device.Lookup(Plugin)'s
	// Devices()[Index], for tools and benchmarks that talk to a plugin
	// directly, through the plugin contract.
	Index int
	// ZeroCopy says that maps on the device use the program's memory in
	// place, with OpenMP's unified-shared-memory semantics
	// (GOMPT_ZERO_COPY=on, on a device that shares the host's memory and
	// whose plugin can): nothing is copied, a kernel sees what the host
	// wrote last, and the host what the kernel wrote once the construct
	// ends. A slice the device cannot use in place (its driver would copy
	// it, or it is larger than MaxAlloc) is copied as ever.
	ZeroCopy bool
	device.Info
}

type runtimeState struct {
	cfg           config
	getenv        func(string) string // the environment start read
	plugins       []PluginStatus
	devs          []*dev
	defaultDevice atomic.Int64
	initial       hostMem // the initial device's memory routines

	// Shutdown, in order: closing refuses new constructs, tasks and
	// routines; once the nowait tasks and memory routines in flight have
	// ended, shut makes the devices refuse new queues, and each device
	// waits for its constructs to come back before it closes.
	closing  atomic.Bool
	envErr   error // a setting OMP_TARGET_OFFLOAD=mandatory makes an error (checkDevices)
	shut     atomic.Bool
	tasks    atomic.Int64 // nowait tasks started and not finished
	routines atomic.Int64 // memory routines on offload devices in flight

	// The first Shutdown call does the work; every call returns when
	// shutDone is closed, with shutErr. shutTasks counts the Shutdown
	// calls made from inside Go tasks (tasks that cannot end before
	// Shutdown does), which the first call does not wait for.
	shutDone  chan struct{}
	shutErr   error
	shutTasks atomic.Int64
}

var (
	rtOnce startOnce
	rt     *runtimeState
)

// state returns the runtime, starting it on first use. A tool's
// initializer that calls into the runtime while the tools start gets the
// runtime with its devices known (see startOnce); the interface is still
// pending then, so no tool sees the constructs it runs, nor the
// device_initialize of an offload device it is first to use.
func state() *runtimeState {
	if r := rtStarted.Load(); r != nil {
		return r // every call once started: inlined, one load
	}
	return startState()
}

// rtStarted is rt once its start-up is over.
var rtStarted atomic.Pointer[runtimeState]

func startState() *runtimeState {
	rtOnce.Do(func() {
		rt = start(os.Getenv)
		// Tools start after the devices are known and before any is used.
		omptrt.Start(omptRuntime{})
	})
	if rtOnce.done.Load() {
		rtStarted.Store(rt)
	}
	return rt
}

// omptRuntime answers the tools interface's questions about the runtime.
// It reads rt directly: a tool's initializer runs inside state's once.
type omptRuntime struct{}

func (omptRuntime) NumDevices() int { return len(rt.devs) }

// omptDevice is a device as the tools interface sees it.
type omptDevice struct{ d *dev }

func (o omptDevice) NumProcs() int       { return o.d.info.ComputeUnits }
func (o omptDevice) Now() (int64, error) { return o.d.d.Now() }

// Wtime returns elapsed wall-clock seconds on the runtime's time base
// (omp_get_wtime); ompt_translate_time maps device times onto it.
func Wtime() float64 { return ompt.Wtime() }

// open resolves a device argument and makes sure the device is
// initialised (device_initialize is the first event naming it). d is nil
// for the initial device.
func open(devArg int) (n int, d *dev, err error) {
	r := state()
	if r.closing.Load() {
		return 0, nil, ErrShutdown
	}
	n, err = r.resolve(devArg)
	if err != nil {
		return 0, nil, err
	}
	if n == len(r.devs) {
		return n, nil, nil
	}
	d = r.devs[n]
	d.initOnce.Do(d.initialize)
	return n, d, nil
}

// initialize tells the tools about the device, once, on first use.
func (d *dev) initialize() {
	d.learnProfiles()
	if err := omptrt.DeviceInitialize(d.num, d.plugin+" "+d.info.Name, omptDevice{d}); err != nil {
		d.infof(infoAll, "tools interface: %v", err)
		return
	}
	d.initialized.Store(true)
}

// learnProfiles sets d.profiles: whether the plugin's queues time their
// own operations. It asks the queue of the device's first construct, which
// it keeps idle for the first construct that needs one, rather than making
// a queue only to ask.
func (d *dev) learnProfiles() {
	c, err := d.take()
	if err != nil {
		return
	}
	d.profiles = c.prof != nil
	d.park(c)
}

// start discovers plugins and devices. Devices are numbered across
// plugins in plugin order; each is initialised lazily on first use.
func start(getenv func(string) string) *runtimeState {
	r := &runtimeState{cfg: readConfig(getenv), getenv: getenv, shutDone: make(chan struct{})}
	r.defaultDevice.Store(int64(r.cfg.defaultDevice))
	for _, name := range r.cfg.plugins {
		st := PluginStatus{Name: name}
		p, ok := device.Lookup(name)
		if !ok {
			st.Err = fmt.Errorf("plugin %q is not registered (registered: %v)", name, device.Plugins())
			r.plugins = append(r.plugins, st)
			continue
		}
		st.Loaded = true
		if r.cfg.offload == OffloadDisabled {
			st.Err = errors.New("OMP_TARGET_OFFLOAD=disabled")
			r.plugins = append(r.plugins, st)
			continue
		}
		devs, err := p.Devices()
		st.Err = err
		for i, d := range devs {
			dv := newDev(len(r.devs), name, i, d, r.cfg.info)
			if a, ok := d.(device.Aliaser); ok && r.cfg.zeroCopy && dv.info.UnifiedMemory {
				dv.alias = a
			}
			r.devs = append(r.devs, dv)
		}
		st.Devices = len(devs)
		if len(devs) > 0 {
			st.Err = nil
		}
		r.plugins = append(r.plugins, st)
	}
	r.checkDevices(getenv)
	if r.cfg.displayEnv != "" {
		r.displayEnv(os.Stderr)
	}
	return r
}

// NumDevices returns the number of offload devices (omp_get_num_devices).
func NumDevices() int { return len(state().devs) }

// InitialDeviceNum returns the device number of the initial device, which
// is NumDevices() (omp_get_initial_device).
func InitialDeviceNum() int { return len(state().devs) }

// IsInitialDevice reports whether dev names the initial device, directly or
// through DefaultDevice or InitialDevice.
func IsInitialDevice(dev int) bool {
	n, err := state().resolve(dev)
	return err == nil && n == len(state().devs)
}

// GetDefaultDevice returns the default-device ICV (omp_get_default_device).
func GetDefaultDevice() int { return int(state().defaultDevice.Load()) }

// SetDefaultDevice sets the default-device ICV (omp_set_default_device).
func SetDefaultDevice(n int) { state().defaultDevice.Store(int64(n)) }

// Offloading returns the target-offload-var ICV.
func Offloading() Offload { return state().cfg.offload }

// Plugins returns what each plugin in GOMPT_PLUGINS order found.
func Plugins() []PluginStatus { return append([]PluginStatus(nil), state().plugins...) }

// Devices describes every offload device, in device-number order.
func Devices() []DeviceInfo {
	r := state()
	out := make([]DeviceInfo, len(r.devs))
	for i, d := range r.devs {
		out[i] = DeviceInfo{Num: d.num, ID: d.id, Plugin: d.plugin, Index: d.index, ZeroCopy: d.alias != nil, Info: d.info}
	}
	return out
}

// ErrDevice is matched (errors.Is) by every error about a device number
// that does not name a usable device.
var ErrDevice = errors.New("target: no such device")

// resolve turns a device argument into a device number 0..N, where N is
// the initial device. It applies the default-device ICV and
// OMP_TARGET_OFFLOAD.
func (r *runtimeState) resolve(n int) (int, error) {
	nd := len(r.devs)
	explicit := true
	switch n {
	case DefaultDevice:
		n = int(r.defaultDevice.Load())
		explicit = false
	case InitialDevice:
		return nd, nil
	}
	if r.cfg.offload == OffloadDisabled {
		return nd, nil
	}
	if r.envErr != nil && n != nd {
		return 0, r.envErr
	}
	if n >= 0 && n < nd {
		return n, nil
	}
	if n == nd {
		if nd == 0 && r.cfg.offload == OffloadMandatory {
			return 0, fmt.Errorf("%w: OMP_TARGET_OFFLOAD=mandatory and no offload device is available (%s)", ErrDevice, r.why())
		}
		return nd, nil
	}
	if !explicit && r.cfg.offload == OffloadDefault {
		// A default device ICV that names no device falls back.
		return nd, nil
	}
	return 0, fmt.Errorf("%w: device %d is out of range: %d offload device(s) 0..%d, initial device %d (%s)",
		ErrDevice, n, nd, nd-1, nd, r.why())
}

// why summarises plugin status for error messages.
func (r *runtimeState) why() string {
	s := ""
	for i, p := range r.plugins {
		if i > 0 {
			s += "; "
		}
		if p.Devices > 0 {
			s += fmt.Sprintf("%s: %d device(s)", p.Name, p.Devices)
		} else {
			// A plugin's error usually begins with its name
			// (device.NoDevice): say it once.
			s += p.Name + ": " + strings.TrimPrefix(fmt.Sprint(p.Err), p.Name+": ")
		}
	}
	return s
}

// Shutdown waits for outstanding work, releases every queue, mapping and
// device resource, closes the devices, and finalizes the tools interface
// (device_unload, device_finalize, then each tool's finalize). Go has no
// atexit: a program that wants its tools finalized calls Shutdown before it
// exits, as the examples do.
//
// Outstanding work is every construct already begun on any goroutine:
// nowait tasks already returned to the caller, synchronous constructs
// holding a queue, and device memory routines in flight; Shutdown waits
// for each to end. A construct, task or routine started after Shutdown
// began fails with an error saying the runtime is shut down (also one
// that had resolved its device but not yet taken a queue, and the end of
// a target data region whose body was still running).
//
// Shutdown may be called from any goroutine, more than once and
// concurrently: every call returns once the shutdown is complete, with
// the first call's result. Called from a Go task (Go), or from a target
// data region's body, it does not wait for that task or region to end
// (it could not). Called from inside the runtime's own work, a tool's
// callback or a kernel's Go image, which the shutdown would have to wait
// for, it returns an error at once and shuts nothing down.
func Shutdown() error {
	r := state()
	inTask, err := shutdownCaller()
	if err != nil {
		return err
	}
	if inTask {
		r.shutTasks.Add(1) // never undone: this call returns only when all is done
	}
	if r.closing.Swap(true) {
		<-r.shutDone
		return r.shutErr
	}
	// Wait for every task but those blocked in Shutdown. shutTasks only
	// grows and counts tasks that tasks counts too, so tasks at or below
	// it (read after tasks) means no other task is left.
	for d := time.Microsecond; r.tasks.Load() > r.shutTasks.Load(); d = min(2*d, time.Millisecond) {
		time.Sleep(d)
	}
	waitZero(&r.routines)
	r.shut.Store(true)
	var errs []error
	for _, d := range r.devs {
		if err := d.close(); err != nil {
			errs = append(errs, err)
		}
		if d.initialized.Load() {
			d.fmu.Lock()
			for _, m := range d.modules {
				omptrt.DeviceUnload(d.num, m)
			}
			d.modules = nil
			d.fmu.Unlock()
			if err := omptrt.DeviceFinalize(d.num); err != nil {
				errs = append(errs, err)
			}
			if written, lost := omptrt.TraceStats(d.num); lost > 0 {
				d.infof(infoAll, "device tracing: %d records written, %d lost (the tool gave no buffer, or too small a one)", written, lost)
			}
		}
	}
	omptrt.Finalize()
	// The kernel worker goroutines go too; a Run after this (there is
	// none: constructs fail) would still work, on the caller alone.
	hostexec.Default().Close()
	r.shutErr = errors.Join(errs...)
	close(r.shutDone)
	return r.shutErr
}

// shutdownCaller tells where Shutdown was called from, by the frames on
// the calling goroutine's stack: from a Go task's function (inTask), or
// from inside work that Shutdown would wait for (an error saying so): a
// tool's callback, dispatched by the tools interface, or a kernel's Go
// image, run by the team executor. Only Shutdown pays for the walk.
func shutdownCaller() (inTask bool, err error) {
	var pcs [128]uintptr
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs[:])])
	for {
		f, more := frames.Next()
		switch pkg, _, _ := strings.Cut(strings.TrimPrefix(f.Function, modulePath), "."); {
		case f.Function == goTaskFrame:
			inTask = true
		case pkg == "target/internal/omptrt" || pkg == "target/internal/cabi":
			return false, errors.New("target: Shutdown called from a tool's callback: the event that called the tool cannot end before the callback returns, and Shutdown would wait for it; call Shutdown after the callback, from the program")
		case pkg == "device/hostexec":
			return false, errors.New("target: Shutdown called from a kernel's Go image: the construct running the kernel cannot end before it returns, and Shutdown would wait for it; call Shutdown from the program")
		}
		if !more {
			return inTask, nil
		}
	}
}

// modulePath is this module's import path with a trailing slash, and
// goTaskFrame the name of the function that calls a Go task's function,
// as runtime.Frame names them.
var (
	modulePath  = strings.TrimSuffix(funcName(funcName), "target.funcName")
	goTaskFrame = funcName(runGoTask)
)

func funcName(f any) string { return runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name() }

// ErrShutdown is the error of every construct, task and routine started
// after Shutdown began (match it with errors.Is).
var ErrShutdown = errors.New("target: runtime is shut down (target.Shutdown was called)")

// waitZero waits for n, which only falls once Shutdown has begun, to reach
// zero, polling with a backoff up to a millisecond.
func waitZero(n *atomic.Int64) {
	for d := time.Microsecond; n.Load() > 0; d = min(2*d, time.Millisecond) {
		time.Sleep(d)
	}
}

// beginRoutine marks a device memory routine in flight on an offload
// device, or fails once Shutdown has begun; endRoutine ends it.
func (r *runtimeState) beginRoutine() error {
	r.routines.Add(1)
	if r.closing.Load() {
		r.routines.Add(-1)
		return ErrShutdown
	}
	return nil
}

func (r *runtimeState) endRoutine() { r.routines.Add(-1) }

// dev is one offload device with its runtime bookkeeping.
type dev struct {
	num    int
	id     string
	plugin string
	index  int // in the plugin's device list
	d      device.Device
	info   device.Info
	table  *mapping.Table
	infoOn int

	spare   atomic.Pointer[construct] // the last construct given back
	qmu     sync.Mutex
	idle    []*construct // more idle constructs, each with its queue
	created int          // constructs made, under qmu: idle, spare or in use

	alias    device.Aliaser  // maps use the program's memory in place (GOMPT_ZERO_COPY); nil: they copy
	kernels  *kcache.Kernels // the device's kernel cache; nil for a device without one
	fmu      sync.Mutex
	reported map[*device.Kernel]bool // kernels whose first load on d the tools were told of, under fmu
	modules  []uint64                // OMPT module ids of loaded images, under fmu

	initOnce    startOnce   // device_initialize; its callback may use the device
	initialized atomic.Bool // device_initialize was reported
	profiles    bool        // the plugin's queues time their own operations

	amu    sync.Mutex
	allocs map[device.DevicePtr]int // omp_target_alloc'd buffers and sizes
	assocs map[uintptr]association  // Associate's associations in force, by host start
}

func newDev(num int, plugin string, i int, d device.Device, info int) *dev {
	id := device.ID(plugin, i)
	return &dev{num: num, id: id, plugin: plugin, index: i, d: d, info: d.Info(), table: mapping.New(id),
		infoOn: info, allocs: map[device.DevicePtr]int{}, kernels: kcache.Of(d)}
}

// take returns an idle construct of d with its queue, or a new one. The
// last construct given back waits in an atomic slot, so a goroutine issuing
// constructs one after another pays two atomic operations and no lock.
//
// Once Shutdown has set shut, take fails: a construct taken from the spare
// slot then is put back with the idle ones, where Shutdown counts it.
func (d *dev) take() (*construct, error) {
	if c := d.spare.Swap(nil); c != nil {
		if shutting() {
			d.park(c)
			return nil, ErrShutdown
		}
		return c, nil
	}
	d.qmu.Lock()
	if shutting() {
		d.qmu.Unlock()
		return nil, ErrShutdown
	}
	if n := len(d.idle); n > 0 {
		c := d.idle[n-1]
		d.idle = d.idle[:n-1]
		d.qmu.Unlock()
		return c, nil
	}
	d.created++
	d.qmu.Unlock()
	q, err := d.d.NewQueue()
	if err != nil {
		d.qmu.Lock()
		d.created--
		d.qmu.Unlock()
		return nil, err
	}
	prof, _ := q.(device.Profiler)
	idle, _ := q.(device.Idler)
	waiter, _ := q.(device.Waiter)
	checked, _ := q.(device.CheckedLauncher)
	return &construct{d: d, q: q, prof: prof, idle: idle, waiter: waiter, checked: checked}, nil
}

// shutting reports whether Shutdown has stopped handing out queues.
func shutting() bool { return rt != nil && rt.shut.Load() }

// park puts c with the idle constructs.
func (d *dev) park(c *construct) {
	d.qmu.Lock()
	d.idle = append(d.idle, c)
	d.qmu.Unlock()
}

// give syncs c's queue and keeps c for reuse; a construct whose queue
// failed is released instead, so its error does not leak into the next
// construct.
func (d *dev) give(c *construct) error {
	if err := c.q.Sync(); err != nil {
		c.q.Release()
		d.qmu.Lock()
		d.created--
		d.qmu.Unlock()
		return err
	}
	if d.spare.CompareAndSwap(nil, c) {
		return nil
	}
	d.park(c)
	return nil
}

// drain waits until every construct d made is back (idle, or in the spare
// slot), so none is running when the device closes; take fails by then.
func (d *dev) drain() {
	for wait := time.Microsecond; ; wait = min(2*wait, time.Millisecond) {
		d.qmu.Lock()
		if c := d.spare.Swap(nil); c != nil {
			d.idle = append(d.idle, c)
		}
		back := len(d.idle) == d.created
		d.qmu.Unlock()
		if back {
			return
		}
		time.Sleep(wait)
	}
}

// load returns k loaded on d. The device's kernel cache (kcache.Kernels)
// finds a kernel loaded before without a call into the plugin or a lock:
// a loop launching one kernel costs one atomic load and a compare. The
// first use of a kernel on d goes to the device's Load (loadNew).
func (d *dev) load(k *device.Kernel) (device.Function, error) {
	if f, ok := d.kernels.Find(k); ok {
		return f, nil
	}
	return d.loadNew(k)
}

// loadNew loads k through the device (which builds it, or finds it in its
// cache) and tells the tools of its first load on d (device_load).
func (d *dev) loadNew(k *device.Kernel) (device.Function, error) {
	d.fmu.Lock()
	defer d.fmu.Unlock()
	if shutting() {
		return nil, ErrShutdown
	}
	f, err := d.d.Load(k)
	if err != nil {
		return nil, err
	}
	if !d.reported[k] {
		if d.reported == nil {
			d.reported = map[*device.Kernel]bool{}
		}
		d.reported[k] = true
		onLoad(d, k, f)
	}
	return f, nil
}

func (d *dev) close() error {
	// A first use still initializing the device, or loading a kernel, is
	// waited for; later ones find shut set (initialize never runs, load
	// fails).
	d.initOnce.Do(func() {})
	d.fmu.Lock()
	d.fmu.Unlock()
	d.drain()
	var errs []error
	d.qmu.Lock()
	idle := d.idle
	if c := d.spare.Swap(nil); c != nil {
		idle = append(idle, c)
	}
	for _, c := range idle {
		if err := c.q.Release(); err != nil {
			errs = append(errs, err)
		}
	}
	d.idle = nil
	d.qmu.Unlock()
	// Data still mapped (an enter data without its exit, a data region
	// whose body ran across Shutdown) goes too: the device's close does
	// not free memory on every plugin. Associated memory is the
	// program's own.
	for _, e := range d.table.Entries() {
		if e.Associated || e.Device == 0 {
			continue
		}
		if err := d.d.Free(e.Device); err != nil {
			errs = append(errs, err)
		}
	}
	d.amu.Lock()
	for p := range d.allocs {
		if err := d.d.Free(p); err != nil {
			errs = append(errs, err)
		}
		delete(d.allocs, p)
	}
	d.amu.Unlock()
	if c, ok := d.d.(device.Closer); ok {
		if err := c.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// onLoad reports a kernel image loaded on d (device_load); d.fmu is held.
func onLoad(d *dev, k *device.Kernel, f device.Function) {
	if !d.initialized.Load() {
		return
	}
	// A gompt module is one kernel's image with one entry: the module,
	// its file name and its entry are all named after the kernel.
	mod, err := omptrt.DeviceLoad(d.num, k.Name, 0, 0, uint64(f.Bytes()), 0, 0)
	if err != nil {
		d.infof(infoAll, "tools interface: device_load of %s: %v", k.Name, err)
		return
	}
	d.modules = append(d.modules, mod)
}

// infof prints a GOMPT_INFO diagnostic line.
func (d *dev) infof(bit int, format string, args ...any) {
	if d.infoOn&bit != 0 {
		fmt.Fprintf(os.Stderr, "gompt: "+d.id+": "+format+"\n", args...)
	}
}

// Describe names the device a construct with device argument dev would
// use: "device 0 (host:0, gompt host device)" or "the initial device (2)".
// A device number that names no device is described with the reason.
func Describe(dev int) string {
	r := state()
	n, err := r.resolve(dev)
	if err != nil {
		return err.Error()
	}
	if n == len(r.devs) {
		return fmt.Sprintf("the initial device (%d, host fallback, OMP_TARGET_OFFLOAD=%s)", n, r.cfg.offload)
	}
	d := r.devs[n]
	return fmt.Sprintf("device %d (%s, %s)", n, d.id, d.info.Name)
}

// OpenDevice opens the device a construct with device argument dev would
// use, as that construct would (the tools' device_initialize included),
// and returns all it can tell of it: its DeviceInfo, with what a device
// learns only when it opens (device.Describer: where its times come from,
// Info.TimeSource and BracketTimes, and limits it finds by probing). A
// device that cannot open gives its error; the initial device gives its
// own description. ompt-devinfo calls it for every device.
func OpenDevice(dev int) (DeviceInfo, error) {
	n, d, err := open(dev)
	if err != nil {
		return DeviceInfo{}, err
	}
	if d == nil {
		return DeviceInfo{Num: n, ID: "initial", Info: initialInfo}, nil
	}
	out := DeviceInfo{Num: n, ID: d.id, Plugin: d.plugin, ZeroCopy: d.alias != nil, Info: d.info}
	if ds, ok := d.d.(device.Describer); ok {
		if out.Info, err = ds.Describe(); err != nil {
			return DeviceInfo{}, err
		}
	}
	return out, nil
}

// DeviceNum resolves a device argument as a construct would: it returns
// the device number 0..NumDevices() the construct runs on (NumDevices()
// is the initial device), applying DefaultDevice, InitialDevice and
// OMP_TARGET_OFFLOAD, or the error (matching ErrDevice) the construct
// would fail with, which names the devices there are.
func DeviceNum(dev int) (int, error) { return state().resolve(dev) }

func deref[M any](p *M) M {
	var z M
	if p == nil {
		return z
	}
	return *p
}
