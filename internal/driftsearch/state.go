package driftsearch

import "github.com/kgrag/kgrag/internal/llmcall"

// Action is one step of a DRIFT search: a question and, once answered,
// its answer, score and follow-up questions. The question itself is
// action 0, answered by the primer.
type Action struct {
	ID    int    `json:"id"`
	Query string `json:"query"`
	// Answered says a call answered it; Answer may still be "" when the
	// reply held none.
	Answered bool     `json:"answered"`
	Answer   string   `json:"answer,omitempty"`
	Score    *float64 `json:"score,omitempty"`
	// Round is the round that answered it: 0 the primer, 1..Depth the
	// follow-up rounds; 0 and Answered false for one left open.
	Round     int      `json:"round"`
	FollowUps []string `json:"follow_ups,omitempty"`
	// Context is the local search context the answer came from (not for
	// the primer's action).
	Context *Records `json:"context,omitempty"`
	// Call is the model call that answered it (not for the primer's
	// action, whose calls are Result.Primer); Parse says how its reply
	// parsed.
	Call *llmcall.Call `json:"call,omitempty"`
	// Failed says its call failed for good; it is not asked again.
	Failed bool `json:"failed,omitempty"`
}

// Records are the ids of a local search context's records, table by
// table in the order printed, and its tokens.
type Records struct {
	Reports       []string `json:"reports"`
	Entities      []string `json:"entities"`
	Relationships []string `json:"relationships"`
	Sources       []string `json:"sources"`
	Tokens        int      `json:"tokens"`
}

// Edge links an action to a follow-up it asked for (GraphRAG's query
// state graph); one edge per time it was asked for.
type Edge struct {
	Source int `json:"source"`
	Target int `json:"target"`
}

// state is the graph of actions in the order they were added, as
// GraphRAG's QueryState holds them: one action per distinct question
// (GraphRAG's DriftAction compares by query).
type state struct {
	actions []*Action
	byQuery map[string]int
	edges   []Edge
}

func newState(question string) *state {
	s := &state{byQuery: map[string]int{}}
	s.add(question)
	return s
}

// add returns the action of query, adding it when new.
func (s *state) add(query string) *Action {
	if i, ok := s.byQuery[query]; ok {
		return s.actions[i]
	}
	a := &Action{ID: len(s.actions), Query: query}
	s.byQuery[query] = a.ID
	s.actions = append(s.actions, a)
	return a
}

// follow adds a's follow-ups and the edges to them.
func (s *state) follow(a *Action) {
	for _, q := range a.FollowUps {
		s.edges = append(s.edges, Edge{a.ID, s.add(q).ID})
	}
}

// open are the actions neither answered nor failed, in the order added.
// GraphRAG shuffles them (random.shuffle, unseeded, when no scorer is
// given, as DRIFTSearch never gives one); kgrag keeps the order the
// questions were asked in, breadth first, which is repeatable and asks
// the primer's follow-ups before their own.
func (s *state) open() []*Action {
	var out []*Action
	for _, a := range s.actions {
		if !a.Answered && !a.Failed {
			out = append(out, a)
		}
	}
	return out
}
