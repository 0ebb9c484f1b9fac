package device

import (
	"fmt"
	"sync"
)

// The image kinds of the kernel library's formats are constants
// (ImageHost, ImageOpenCL, ImagePTX: the Go image, the OpenCL C every
// kernel is written in, and the PTX made from it). A plugin whose devices
// run another format registers it, and its kernels carry images of that
// kind.

var (
	imageMu    sync.RWMutex
	imageNames = map[ImageKind]string{}
	imageNext  = ImagePTX + 1
)

// RegisterImageKind registers a kind of kernel image named name ("spirv")
// and returns it; a plugin calls it once, for a package-level variable.
// It panics on an empty name, a name taken, or more than 255 kinds.
func RegisterImageKind(name string) ImageKind {
	imageMu.Lock()
	defer imageMu.Unlock()
	if name == "" {
		panic("device: RegisterImageKind with an empty name")
	}
	for k := ImageHost; k < imageNext; k++ {
		if k.nameLocked() == name {
			panic("device: RegisterImageKind: image kind " + name + " is registered already")
		}
	}
	if imageNext == 0 {
		panic("device: RegisterImageKind: more than 255 image kinds")
	}
	k := imageNext
	imageNames[k] = name
	imageNext++
	return k
}

func (k ImageKind) nameLocked() string {
	if k <= ImagePTX {
		return k.String()
	}
	return imageNames[k]
}

// imageKindName names a registered image kind, or "image(N)".
func imageKindName(k ImageKind) string {
	imageMu.RLock()
	name, ok := imageNames[k]
	imageMu.RUnlock()
	if ok {
		return name
	}
	return fmt.Sprintf("image(%d)", int(k))
}
