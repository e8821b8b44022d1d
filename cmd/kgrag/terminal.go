package main

import (
	"io"
	"os"

	"github.com/kgrag/kgrag/internal/ui"
)

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && ui.IsTerminal(f)
}
