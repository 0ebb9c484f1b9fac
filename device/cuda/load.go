//go:build cgo

package cuda

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/cuda/internal/cu"
)

// function is a kernel's PTX module loaded on one device (device.Function).
type function struct {
	g          *gpu
	k          *device.Kernel
	mod        cu.Module
	fn         cu.Function
	maxThreads int // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
	bytes      int
	op         string // "launch NAME", for errors (made once, not per launch)
}

func (f *function) Kernel() *device.Kernel  { return f.k }
func (f *function) Image() device.ImageKind { return ImagePTX }
func (f *function) Bytes() int              { return f.bytes }

// LoadImage JIT-compiles img, k's PTX image, for this device
// (cuModuleLoadDataEx; generic.Driver). Errors: CodeInvalidBinary when the
// driver rejects it (with the JIT log) or its entry's parameters do not
// match k.Params in number and size, or in name where the PTX keeps the
// source's (checkPTXParams, before the driver sees it), CodeNotFound when
// the module has no entry of the image's name.
func (g *gpu) LoadImage(k *device.Kernel, img *device.Image) (device.Function, error) {
	op := "load " + k.Name
	if err := g.usable(op); err != nil {
		return nil, err
	}
	entry := img.Entry
	if entry == "" {
		entry = k.Name
	}
	// A missing entry is left to the driver, whose CUDA_ERROR_NOT_FOUND
	// becomes CodeNotFound below.
	if err := checkPTXParams(k, img.Source, entry); err != nil && !errors.Is(err, errNoEntry) {
		return nil, device.Errorf(g.id, op, device.CodeInvalidBinary, "kernel %s: %v", k.Name, err)
	}
	mod, _, err := cu.ModuleLoadDataEx(g.ctx, img.Source)
	if err != nil {
		return nil, &device.Error{Op: op, Device: g.id, Code: device.CodeInvalidBinary, Err: err}
	}
	fn, err := cu.ModuleGetFunction(g.ctx, mod, entry)
	if err != nil {
		cu.ModuleUnload(g.ctx, mod)
		var ce *cu.Error
		if errors.As(err, &ce) && ce.Result == cu.ERROR_NOT_FOUND {
			var names []string
			for _, e := range ptxEntries(img.Source) {
				names = append(names, e.name)
			}
			return nil, device.Errorf(g.id, op, device.CodeNotFound,
				"kernel %s: no entry %q in its PTX module (entries: %s): %w", k.Name, entry, strings.Join(names, ", "), err)
		}
		return nil, g.fail(op, err)
	}
	maxT, err := cu.FuncGetAttribute(g.ctx, cu.FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn)
	if err != nil {
		cu.ModuleUnload(g.ctx, mod)
		return nil, g.fail(op, err)
	}
	// What the kernel needs that only its built form tells: a team kernel's
	// block, and its static shared memory, within this device's limits for
	// it, refused here, before any copy, never left to fail its launch.
	need := func(kind device.NeedKind, amount int64, use, lacks string) error {
		cu.ModuleUnload(g.ctx, mod)
		return device.BuiltNeedError(k, kind, amount, use, g.id, g.info.Name, lacks)
	}
	if t := k.TeamSize(); t > maxT {
		return nil, need(device.NeedTeamSize, int64(t), fmt.Sprintf("teams of %d threads", t),
			fmt.Sprintf("runs this kernel in blocks of at most %d threads (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)", maxT))
	}
	if shared, err := cu.FuncGetAttribute(g.ctx, cu.FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn); err == nil && uint64(shared) > g.info.LocalMem {
		return nil, need(device.NeedLocalMem, int64(shared), fmt.Sprintf("%d bytes of static shared memory", shared),
			fmt.Sprintf("has at most %d bytes of shared memory per block (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)", g.info.LocalMem))
	}
	return &function{g: g, k: k, mod: mod, fn: fn, maxThreads: maxT, bytes: len(img.Source), op: "launch " + k.Name}, nil
}
