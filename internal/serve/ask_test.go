package serve

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kgrag/kgrag/internal/answer"
)

func TestCitations(t *testing.T) {
	res := &answer.Result{Context: &answer.Context{Records: answer.Records{
		Entities:      []answer.Entity{{ID: "5", EntityID: "e5", Title: "SCROOGE"}, {ID: "7", EntityID: "e/7", Title: "MARLEY"}},
		Relationships: []answer.Relationship{{ID: "3", RelationshipID: "r3", Source: "SCROOGE", Target: "MARLEY", SourceID: "e5"}},
		Sources:       []answer.Source{{ID: "1", TextUnitID: "t1"}},
		Reports:       []answer.Report{{ID: "12", CommunityID: "c12", Title: "Counting-house"}},
	}}}
	tests := []struct {
		name, text string
		want       []string // kind/id
	}{
		{"none", "Scrooge is a miser.", nil},
		{"one group", "A miser [Data: Entities (5, 7)].", []string{"entity/5", "entity/7"}},
		{"several groups, +more and made-up ids", "X [Data: Entities (7, 99, +more); Relationships (3); Sources (1, 2)] and Y [Data: Reports (12)].",
			[]string{"entity/7", "relationship/3", "source/1", "report/12"}},
		{"repeated", "[Data: Entities (5)] then [Data: Entities (5, 7)]", []string{"entity/5", "entity/7"}},
		{"odd spacing and case", "[Data:entities(5 ,7)]", []string{"entity/5", "entity/7"}},
		{"not a citation", "[Entities (5)]", nil},
	}
	for _, tt := range tests {
		got := citations(tt.text, &Graph{}, res)
		var keys []string
		for _, c := range got {
			keys = append(keys, c.Kind+"/"+c.ID)
		}
		if len(keys) != len(tt.want) {
			t.Errorf("%s: citations %q; want %q", tt.name, keys, tt.want)
			continue
		}
		for i := range keys {
			if keys[i] != tt.want[i] {
				t.Errorf("%s: citations %q; want %q", tt.name, keys, tt.want)
				break
			}
		}
	}
	if c := citations("[Data: Entities (7)]", &Graph{}, res); len(c) != 1 || c[0].URL != "/api/entities/e%2F7" {
		t.Errorf("an id with a slash: %+v; want its URL path-escaped", c)
	}
}

// TestLimiter: n slots, a queue of q, then errBusy; a waiter whose
// context ends leaves the queue.
func TestLimiter(t *testing.T) {
	l := newLimiter(2, 1)
	ctx := context.Background()
	r1, err1 := l.acquire(ctx)
	r2, err2 := l.acquire(ctx)
	if err1 != nil || err2 != nil {
		t.Fatalf("the two slots: %v, %v", err1, err2)
	}
	got := make(chan error, 1)
	go func() {
		r, err := l.acquire(ctx) // queued
		if err == nil {
			r()
		}
		got <- err
	}()
	for l.waiting.Load() != 1 {
		time.Sleep(time.Millisecond)
	}
	if _, err := l.acquire(ctx); !errors.Is(err, errBusy) {
		t.Errorf("with the slots taken and the queue full: %v; want errBusy", err)
	}
	r1()
	if err := <-got; err != nil {
		t.Errorf("the queued one: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	r3, _ := l.acquire(ctx)
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if _, err := l.acquire(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("a waiter whose context ends: %v; want context.Canceled", err)
	}
	if n := l.waiting.Load(); n != 0 || l.refused.Load() != 1 {
		t.Errorf("waiting %d, refused %d; want 0 and 1", n, l.refused.Load())
	}
	r2()
	r3()
}
