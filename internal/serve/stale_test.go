package serve

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/kgrag/kgrag/internal/answer"
	"github.com/kgrag/kgrag/internal/engine"
	"github.com/kgrag/kgrag/internal/mode"
	"github.com/kgrag/kgrag/internal/retrieval"
)

// loadEngine answers with the load it was built on, and runs commit
// between reading its context and answering, as a kgrag load committing
// in the middle of a question would.
type loadEngine struct {
	load   int64
	commit func()
}

func (e loadEngine) Mode() mode.Mode { m, _ := mode.Lookup(mode.Local); return m }
func (loadEngine) Plan(context.Context, engine.Question, *answer.Result) error {
	return engine.ErrNoPlan
}

func (e loadEngine) Context(_ context.Context, _ engine.Question, res *answer.Result) error {
	res.Context = &answer.Context{Text: fmt.Sprint("load ", e.load)}
	e.commit()
	return nil
}

func (e loadEngine) Search(ctx context.Context, q engine.Question, h engine.Hooks, res *answer.Result) error {
	if err := e.Context(ctx, q, res); err != nil {
		return err
	}
	if err := h.Retrieved(res); err != nil {
		return err
	}
	a := res.Context.Text
	res.Answer = &a
	if h.Answer != nil {
		return h.Answer(a)
	}
	return nil
}

// TestStaleGraph: a load committed in the store while a question read its
// context makes the server reload and ask again, so the answer and what
// streamed of it come from the new load alone; a graph that changes under
// every try ends in errBusyGraph (503), and a graph without a load record
// is never checked.
func TestStaleGraph(t *testing.T) {
	for _, tt := range []struct {
		name        string
		commits     int64 // loads committed during questions, one per question read
		stamped     bool
		wantAnswer  string
		wantVersion uint64
		wantErr     error
	}{
		{name: "unchanged", commits: 0, stamped: true, wantAnswer: "load 0", wantVersion: 1},
		{name: "one load during the question", commits: 1, stamped: true, wantAnswer: "load 1", wantVersion: 2},
		{name: "loads during every try", commits: 100, stamped: true, wantErr: errBusyGraph},
		{name: "no load record", commits: 1, stamped: false, wantAnswer: "load 0", wantVersion: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var store atomic.Int64 // the load the store holds
			commits := tt.commits
			commit := func() {
				if commits > 0 {
					commits--
					store.Add(1)
				}
			}
			load := func(context.Context) (*Graph, error) {
				at := store.Load()
				g := &Graph{Name: "test", Source: noSource{},
					Engines: map[string]engine.Engine{mode.Local: loadEngine{load: at, commit: commit}}}
				if tt.stamped {
					g.Stamp = func(context.Context) (string, error) { return fmt.Sprint(store.Load()), nil }
					g.StampAtLoad = fmt.Sprint(at)
				}
				return g, nil
			}
			s, err := New(t.Context(), DefaultConfig(), load)
			if err != nil {
				t.Fatal(err)
			}
			var streamed []uint64
			rep, err := s.ask(t.Context(), question{mode: mode.Local, text: "q"}, func(v uint64, _ string) error {
				streamed = append(streamed, v)
				return nil
			})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("ask: %v; want %v", err, tt.wantErr)
				}
				if status, _ := failure(err); status != 503 {
					t.Errorf("status %d; want 503", status)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *rep.Answer != tt.wantAnswer || rep.GraphVersion != tt.wantVersion {
				t.Errorf("answer %q from version %d; want %q from %d", *rep.Answer, rep.GraphVersion, tt.wantAnswer, tt.wantVersion)
			}
			if len(streamed) != 1 || streamed[0] != tt.wantVersion {
				t.Errorf("streamed pieces of versions %v; want one, of %d", streamed, tt.wantVersion)
			}
		})
	}
}

// noSource is a Source no test calls.
type noSource struct{ retrieval.Source }
