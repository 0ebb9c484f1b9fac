package target

// The plugins are linked into every program that imports target, so one
// binary finds whatever devices a machine has at run time. (DESIGN.md's
// layout lets target import only device, mapping and ompt; users import
// target alone, so target is where the plugins are pulled in. No plugin
// imports target.)
import (
	_ "github.com/gompt/gompt/device/host"
)
