package ui_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/ui"
)

func TestProgress(t *testing.T) {
	var nilProgress *ui.Progress
	nilProgress.Add(5) // a nil Progress draws nothing and does not panic
	nilProgress.Done()
	if p := ui.NewProgress(&bytes.Buffer{}, false, "wrote", "triples"); p != nil {
		t.Errorf("NewProgress(enabled=false) = %v; want nil", p)
	}

	var buf bytes.Buffer
	p := ui.NewProgress(&buf, true, "uploaded", "triples")
	p.Add(1000)
	p.Add(234)
	p.Done()
	out := buf.String()
	if !strings.Contains(out, "uploaded 1234 triples (") || !strings.HasSuffix(out, "\n") {
		t.Errorf("progress output %q; want the final count 1234 and a newline", out)
	}
}
