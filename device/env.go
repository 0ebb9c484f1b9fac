package device

import (
	"fmt"
	"os"
	"sort"
	"sync"
)

// EnvVar is one environment variable of a plugin (Registration.Env).
type EnvVar struct {
	Name    string // "GOMPT_CUDA_SCHED"
	Accepts string // what it takes, for the warning: "auto, spin, yield or blocking"
	Default string // what an unset or refused value means: "blocking"

	// Check reports whether v, a value the variable is set to, is one the
	// plugin takes; nil takes every value.
	Check func(v string) bool

	// Library marks the variable that names the plugin's driver library:
	// the runtime reports a value with which the plugin found no device
	// (an error under OMP_TARGET_OFFLOAD=mandatory).
	Library bool
}

// Refuses reports whether e's Check refuses v (an empty v, unset, never
// is).
func (e EnvVar) Refuses(v string) bool { return v != "" && e.Check != nil && !e.Check(v) }

// Warning is the one-line warning for a value v that e refuses:
// `gompt: NAME="v": want ACCEPTS; using DEFAULT`.
func (e EnvVar) Warning(v string) string {
	return fmt.Sprintf("gompt: %s=%q: want %s; using %s", e.Name, v, e.Accepts, e.Default)
}

// EnvVars returns the environment variables of every registered plugin,
// sorted by name, each with its plugin's name.
func EnvVars() []PluginEnv {
	regMu.RLock()
	defer regMu.RUnlock()
	var out []PluginEnv
	for _, r := range plugins {
		for _, e := range r.Env {
			out = append(out, PluginEnv{Plugin: r.Name, EnvVar: e})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// PluginEnv is an environment variable and the plugin that registered it.
type PluginEnv struct {
	Plugin string
	EnvVar
}

// envOwnerLocked returns the plugin that registered variable name; regMu
// is held.
func envOwnerLocked(name string) (string, bool) {
	for _, r := range plugins {
		for _, e := range r.Env {
			if e.Name == name {
				return r.Name, true
			}
		}
	}
	return "", false
}

var warned sync.Map // "NAME=value" of the refused values reported

// WarnOnce reports whether the warning for value v of variable name is
// still to be given in this process, and marks it given: a refused value
// is reported once, by the runtime's start-up or by the plugin reading
// it (Getenv), whichever is first.
func WarnOnce(name, v string) bool {
	_, done := warned.LoadOrStore(name+"="+v, true)
	return !done
}

// Getenv returns the value of the environment variable name, which a
// plugin registered (Registration.Env), or "" when it is unset or its
// Check refuses it; a refused value gets its warning on standard error,
// once per process (WarnOnce). Plugins read their variables with it, so
// that one bad value is reported once, whoever reads it first.
func Getenv(name string) string {
	v := os.Getenv(name)
	regMu.RLock()
	var e EnvVar
	found := false
	for _, r := range plugins {
		for _, x := range r.Env {
			if x.Name == name {
				e, found = x, true
			}
		}
	}
	regMu.RUnlock()
	if !found || !e.Refuses(v) {
		return v
	}
	if WarnOnce(name, v) {
		fmt.Fprintln(os.Stderr, e.Warning(v))
	}
	return ""
}
