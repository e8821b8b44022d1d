package main

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/kgrag/kgrag/internal/retrieval"
)

// tracer wraps a Backend and records, per question, how long each lookup
// took and how many records it returned: what -trace writes, one JSON
// line per question, so that the slow questions can be told apart from
// the usual ones.
type tracer struct {
	retrieval.Backend
	mu   sync.Mutex
	cur  map[string]lookup
	outs []traceLine
}

type lookup struct {
	MS   float64 `json:"ms"`
	Rows int     `json:"rows"`
}

type traceLine struct {
	Question int               `json:"question"`
	TotalMS  float64           `json:"total_ms"`
	KNNMS    float64           `json:"knn_ms"`
	Lookups  map[string]lookup `json:"lookups"`
}

func (t *tracer) record(name string, start time.Time, rows int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == nil {
		t.cur = map[string]lookup{}
	}
	l := t.cur[name]
	l.MS += float64(time.Since(start).Microseconds()) / 1000
	l.Rows += rows
	t.cur[name] = l
}

// done closes question i.
func (t *tracer) done(i int, total, knn time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.outs = append(t.outs, traceLine{Question: i, TotalMS: float64(total.Microseconds()) / 1000,
		KNNMS: float64(knn.Microseconds()) / 1000, Lookups: t.cur})
	t.cur = nil
}

func (t *tracer) write(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, l := range t.outs {
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return nil
}

func (t *tracer) Entities(ctx context.Context, ids []string) ([]retrieval.EntityRecord, error) {
	start := time.Now()
	r, err := t.Backend.Entities(ctx, ids)
	t.record("entities", start, len(r))
	return r, err
}

func (t *tracer) Relationships(ctx context.Context, ids []string) ([]retrieval.RelationshipRecord, error) {
	start := time.Now()
	r, err := t.Backend.Relationships(ctx, ids)
	t.record("relationships", start, len(r))
	return r, err
}

func (t *tracer) TextUnits(ctx context.Context, ids []string) ([]retrieval.TextUnitRecord, error) {
	start := time.Now()
	r, err := t.Backend.TextUnits(ctx, ids)
	t.record("text_units", start, len(r))
	return r, err
}

func (t *tracer) Reports(ctx context.Context, ids []string, maxLevel int64) ([]retrieval.ReportRecord, error) {
	start := time.Now()
	r, err := t.Backend.Reports(ctx, ids, maxLevel)
	t.record("reports", start, len(r))
	return r, err
}
