package device

import (
	"sort"
	"sync"
)

var (
	regMu   sync.RWMutex
	plugins = map[string]Plugin{}
)

// Register makes a plugin available under name ("host", "cuda", "opencl").
// Plugins call it from their init function. It panics if p is nil or if a
// plugin of that name is already registered, as sql.Register does.
func Register(name string, p Plugin) {
	regMu.Lock()
	defer regMu.Unlock()
	if p == nil {
		panic("device: Register plugin is nil")
	}
	if name == "" {
		panic("device: Register with empty name")
	}
	if _, dup := plugins[name]; dup {
		panic("device: Register called twice for plugin " + name)
	}
	plugins[name] = p
}

// Lookup returns the plugin registered under name.
func Lookup(name string) (Plugin, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	p, ok := plugins[name]
	return p, ok
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
