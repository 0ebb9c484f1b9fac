package device

import (
	"cmp"
	"slices"
	"sort"
	"sync"
)

// Registration is what a plugin tells the runtime about itself, once,
// from its init function (RegisterPlugin): everything the shared layers
// need, so that adding a plugin is adding its package and one import.
type Registration struct {
	Name   string // "host", "opencl": what GOMPT_PLUGINS names, and device ids' prefix
	Plugin Plugin

	// Order places the plugin in the default order, used when
	// GOMPT_PLUGINS is not set: plugins with an Order above 0, lowest
	// first (equal Orders by name). 0 leaves it out of the default;
	// GOMPT_PLUGINS can still name it.
	Order int

	// Images are the kinds of kernel image its devices run, best first
	// (the plugin's generic.Config.Images; ompt-devinfo shows them): the
	// names of its formats, which its package declares as constants.
	Images []ImageKind

	// Native is the kind of its native trace records (RegisterNative),
	// NativeNone if it has none: what a tool reads them as.
	Native NativeKind

	// Env are its environment variables: the runtime checks their values
	// at start-up (a value a Check refuses gets its one-line warning),
	// shows the set ones under OMP_DISPLAY_ENV=verbose, and reports a
	// Library variable with which the plugin found no device. The plugin
	// reads them with Getenv.
	Env []EnvVar
}

var (
	regMu   sync.RWMutex
	plugins = map[string]Registration{}
)

// Register makes plugin p available under name ("host", "cuda",
// "opencl"), outside the default order and with nothing else to say
// (RegisterPlugin says more). It panics if p is nil, name is empty or
// taken, as sql.Register does.
func Register(name string, p Plugin) { RegisterPlugin(Registration{Name: name, Plugin: p}) }

// RegisterPlugin registers a plugin as r describes it. Plugins call it
// from their init function. It panics on a nil Plugin, an empty or taken
// name, a negative Order, a NativeKind never registered, an image kind
// without a name, or an environment variable without a name or
// registered by another plugin.
func RegisterPlugin(r Registration) {
	regMu.Lock()
	defer regMu.Unlock()
	switch {
	case r.Plugin == nil:
		panic("device: Register plugin is nil")
	case r.Name == "":
		panic("device: Register with empty name")
	case r.Order < 0:
		panic("device: Register of plugin " + r.Name + " with a negative Order")
	case r.Native != NativeNone && int(r.Native) >= len(nativeTypes()):
		panic("device: Register of plugin " + r.Name + " with a native record kind never registered (RegisterNative)")
	case slices.Contains(r.Images, ""):
		panic("device: Register of plugin " + r.Name + " with an image kind without a name")
	}
	if _, dup := plugins[r.Name]; dup {
		panic("device: Register called twice for plugin " + r.Name)
	}
	for _, e := range r.Env {
		if e.Name == "" {
			panic("device: Register of plugin " + r.Name + ": an environment variable without a name")
		}
		if other, ok := envOwnerLocked(e.Name); ok {
			panic("device: Register of plugin " + r.Name + ": environment variable " + e.Name + " is plugin " + other + "'s")
		}
	}
	r.Images = slices.Clone(r.Images)
	r.Env = slices.Clone(r.Env)
	plugins[r.Name] = r
}

// Lookup returns the plugin registered under name.
func Lookup(name string) (Plugin, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	r, ok := plugins[name]
	return r.Plugin, ok
}

// Registered returns the registration of plugin name.
func Registered(name string) (Registration, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	r, ok := plugins[name]
	return r, ok
}

// Plugins returns the names of the registered plugins, sorted.
func Plugins() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	names := make([]string, 0, len(plugins))
	for n := range plugins {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// DefaultOrder returns the names of the plugins in the default order:
// those registered with an Order above 0, lowest first.
func DefaultOrder() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	var rs []Registration
	for _, r := range plugins {
		if r.Order > 0 {
			rs = append(rs, r)
		}
	}
	slices.SortFunc(rs, func(a, b Registration) int {
		return cmp.Or(cmp.Compare(a.Order, b.Order), cmp.Compare(a.Name, b.Name))
	})
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Name
	}
	return names
}
