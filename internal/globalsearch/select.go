package globalsearch

import (
	"context"
	"fmt"
	"sync"

	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/retrieval"
	"github.com/kgrag/kgrag/prompts"
)

// Selection is what dynamic community selection did.
type Selection struct {
	// Reports are the selected reports, by community number.
	Reports []retrieval.ReportRecord `json:"-"`
	// Rated lists the communities rated, in the order they were rated,
	// with their ratings.
	Rated []Rating `json:"rated"`
	// Levels counts, per level, the reports rated and found relevant.
	Levels []LevelCount `json:"levels"`
	// Parse counts the rating replies by how they parsed; Failed the
	// rating calls that failed for good. Both count as rating 1, as
	// GraphRAG's unparsable ones do.
	Parse  ParseCounts `json:"parse"`
	Failed int         `json:"failed"`
	Calls  int         `json:"llm_calls"`
	// Stopped says why the descent stopped before it was done: the call
	// limit.
	Stopped string `json:"stopped,omitempty"`
	// Degraded says how many ratings were done without, for
	// Result.Degraded.
	Degraded string `json:"-"`
}

// Rating is one rated community.
type Rating struct {
	Community string `json:"community"`
	Level     int64  `json:"level"`
	Rating    int    `json:"rating"`
	llmcall.Call
}

// LevelCount is one level of the descent.
type LevelCount struct {
	Level    int64 `json:"level"`
	Rated    int   `json:"rated"`
	Relevant int   `json:"relevant"`
}

// fallbackRating is the rating of a reply that gives none, or a call that
// failed: GraphRAG's default, which keeps the report at the default
// threshold rather than lose a branch of the hierarchy to a bad reply.
const fallbackRating = 1

// selectDynamic is GraphRAG's DynamicCommunitySelection.select: rate the
// root communities' reports, keep those rated at least DynamicThreshold
// and rate their children next, level by level; a relevant community
// replaces its parent unless DynamicKeepParent. When a level yields
// nothing relevant at all, every report of the next level is rated, down
// to DynamicMaxLevel. GraphRAG returns the kept reports in the order of a
// Python set; kgrag orders them by community number.
func (s *Searcher) selectDynamic(ctx context.Context, question string, all []retrieval.ReportRecord, progress func(Progress)) (*Selection, error) {
	byID := make(map[string]*retrieval.ReportRecord, len(all))
	levels := make(map[int64][]string)
	for i := range all {
		r := &all[i]
		byID[r.ID] = r
		levels[r.Level] = append(levels[r.Level], r.ID)
	}
	sel := &Selection{}
	relevant := make(map[string]bool)
	queue := levels[0]
	for level := int64(0); len(queue) > 0; {
		if limit := s.opts.MaxLLMCalls; limit > 0 && sel.Calls+len(queue)+2 > limit {
			sel.Stopped = fmt.Sprintf("stopped before rating %d reports at level %d: the limit of %d model calls leaves too few for the map and reduce calls",
				len(queue), level, limit)
			break
		}
		ratings, err := s.rateAll(ctx, question, queue, byID, level, progress)
		if err != nil {
			return nil, err
		}
		lc := LevelCount{Level: level, Rated: len(queue)}
		var next []string
		for i, id := range queue {
			r := ratings[i]
			sel.Rated = append(sel.Rated, r)
			sel.Calls++
			switch {
			case r.Err != "":
				sel.Failed++
			default:
				sel.Parse.add(r.Parse)
			}
			if r.Rating < s.opts.DynamicThreshold {
				continue
			}
			lc.Relevant++
			relevant[id] = true
			next = append(next, byID[id].Children...)
			if !s.opts.DynamicKeepParent && byID[id].Parent != "" {
				delete(relevant, byID[id].Parent)
			}
		}
		sel.Levels = append(sel.Levels, lc)
		queue = next
		level++
		if len(queue) == 0 && len(relevant) == 0 && level <= s.opts.DynamicMaxLevel {
			queue = levels[level]
		}
	}
	for _, id := range sortedKeys(relevant) {
		sel.Reports = append(sel.Reports, *byID[id])
	}
	if n := sel.Failed + sel.Parse.Unusable; n > 0 {
		sel.Degraded = fmt.Sprintf("global: %d of %d rating calls failed or gave no rating: those reports were rated %d (GraphRAG's default), which keeps them",
			n, len(sel.Rated), fallbackRating)
	}
	return sel, nil
}

// rateAll rates the reports of ids, Concurrency at a time, returning the
// ratings in the order of ids.
func (s *Searcher) rateAll(ctx context.Context, question string, ids []string, byID map[string]*retrieval.ReportRecord, level int64, progress func(Progress)) ([]Rating, error) {
	out := make([]Rating, len(ids))
	var mu sync.Mutex // orders the progress counts
	done := 0
	progress(Progress{Phase: PhaseRate, Total: len(ids), Level: level})
	err := s.each(ctx, len(ids), func(ctx context.Context, i int) error {
		r := byID[ids[i]]
		report := r.FullContent
		if s.b.Params().UseCommunitySummary {
			report = r.Summary
		}
		out[i] = Rating{Community: ids[i], Level: r.Level, Rating: fallbackRating}
		system, err := prompts.Render("global_rate", prompts.GlobalRate{Question: question, Report: report})
		if err != nil {
			return err
		}
		reply, call, err := s.chat.Call(ctx, system, question, ratingSchema)
		out[i].Call = call
		if err != nil && llmcall.Fatal(err) {
			return err
		}
		if err == nil {
			rating, ok, parse, fixes := parseRating(reply)
			out[i].Parse, out[i].Fixes = parse, fixes
			if ok {
				out[i].Rating = rating
			}
		}
		mu.Lock()
		done++
		progress(Progress{Phase: PhaseRate, Done: done, Total: len(ids), Level: level})
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("globalsearch: rate reports: %w", err)
	}
	return out, nil
}
