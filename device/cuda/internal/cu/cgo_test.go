//go:build cgo

package cu

import (
	"errors"
	"strings"
	"testing"
)

func TestLoadNotCUDA(t *testing.T) {
	if !Available {
		t.Skip("built without cgo")
	}
	err := Load("libc.so.6")
	var ms *MissingSymbolError
	if !errors.As(err, &ms) || ms.Symbol != "cuInit" || ms.Library != "libc.so.6" {
		t.Fatalf("Load(libc.so.6) = %v, want a MissingSymbolError for cuInit", err)
	}
	if !strings.Contains(err.Error(), "missing symbol cuInit") {
		t.Errorf("message %q does not name the symbol", err)
	}
}
