package extraction

import (
	"fmt"
	"strconv"
	"time"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/extraction/tuples"
	"github.com/kgrag/kgrag/internal/graphbuild"
	"github.com/kgrag/kgrag/internal/llm"
)

// Unit is one text unit to extract from: GraphRAG's text_units id and
// text (internal/chunk.TextUnit's ID and Text).
type Unit struct {
	ID   string
	Text string
}

// Stages of extraction, as UnitError.Stage and Dropped.Stage name them.
const (
	StageGraph  = "graph"
	StageClaims = "claims"
)

// Stats count what extraction conversations did: one unit's graph or
// claims conversation, or the sum of many (Stats.Add). The zero value is
// empty and ready to Add to.
type Stats struct {
	// Calls counts model calls made (the first extraction, gleaning
	// rounds and loop questions), failed ones included; the client's own
	// HTTP retries are not counted.
	Calls int `json:"calls"`
	// Gleanings counts gleaning rounds answered, LoopChecks the loop
	// questions answered, and UnclearAnswers those answered with neither
	// yes nor no (taken as no, as GraphRAG does).
	Gleanings      int `json:"gleanings"`
	LoopChecks     int `json:"loop_checks"`
	UnclearAnswers int `json:"unclear_answers"`
	// GleaningsSkipped counts the conversations whose next round was not
	// asked because it would pass Options.MaxPromptTokens.
	GleaningsSkipped int `json:"gleanings_skipped,omitempty"`
	// Records counts the records the parser saw in all replies; each was
	// kept as an entity, relationship or claim, or dropped.
	Records       int `json:"records"`
	Entities      int `json:"entities"`
	Relationships int `json:"relationships"`
	Claims        int `json:"claims"`
	Dropped       int `json:"dropped"`
	// Repairs adds up the parser's repairs (tuples.Result.Repairs) over
	// all replies; nil when there were none.
	Repairs map[tuples.Repair]int `json:"repairs,omitempty"`
	// PromptTokens and CompletionTokens are kgrag's own counts (the
	// Encoder's): per call, the tokens of every message sent (without the
	// chat template's few tokens per message) and of the reply. Server is
	// what the server reported, zero where it reports nothing.
	PromptTokens     int       `json:"prompt_tokens"`
	CompletionTokens int       `json:"completion_tokens"`
	Server           llm.Usage `json:"server_usage"`
	// Elapsed is the wall time of the conversations, summed.
	Elapsed time.Duration `json:"elapsed"`
}

// Add adds o's counts to s.
func (s *Stats) Add(o Stats) {
	s.Calls += o.Calls
	s.Gleanings += o.Gleanings
	s.LoopChecks += o.LoopChecks
	s.UnclearAnswers += o.UnclearAnswers
	s.GleaningsSkipped += o.GleaningsSkipped
	s.Records += o.Records
	s.Entities += o.Entities
	s.Relationships += o.Relationships
	s.Claims += o.Claims
	s.Dropped += o.Dropped
	s.addRepairs(o.Repairs)
	s.PromptTokens += o.PromptTokens
	s.CompletionTokens += o.CompletionTokens
	s.Server.PromptTokens += o.Server.PromptTokens
	s.Server.CompletionTokens += o.Server.CompletionTokens
	s.Server.TotalTokens += o.Server.TotalTokens
	s.Elapsed += o.Elapsed
}

func (s *Stats) addRepairs(r map[tuples.Repair]int) {
	for k, n := range r {
		if n == 0 {
			continue
		}
		if s.Repairs == nil {
			s.Repairs = make(map[tuples.Repair]int)
		}
		s.Repairs[k] += n
	}
}

// RepairCount is the number of repairs of every kind in s.Repairs.
func (s Stats) RepairCount() int {
	n := 0
	for _, c := range s.Repairs {
		n += c
	}
	return n
}

// Dropped is a record the parser could not read, with where it came from:
// the stage and the round (0 for the first extraction, then 1 for the
// first gleaning round, and so on).
type Dropped struct {
	Stage string `json:"stage"`
	Round int    `json:"round"`
	tuples.Dropped
}

// Result is what was extracted from one text unit: the records of every
// round of the conversation, in reply order (GraphRAG concatenates the
// rounds' replies and keeps every record, repeats included), and the
// counts of each stage.
type Result struct {
	TextUnitID    string
	Entities      []tuples.Entity
	Relationships []tuples.Relationship
	// Claims is empty when claims are off.
	Claims  []tuples.Claim
	Dropped []Dropped
	// Graph and ClaimStats count the two conversations; ClaimStats is
	// zero when claims are off.
	Graph      Stats
	ClaimStats Stats
	Elapsed    time.Duration
	// Err is the unit's failure, nil when it had none. Records read
	// before the failure are kept, but a failure in the graph stage
	// leaves the graph records out of Extraction (GraphRAG drops a text
	// unit whose extraction failed), while one in the claims stage spoils
	// only the claims.
	Err *UnitError
}

// GraphOK reports whether the unit's graph conversation completed.
func (r *Result) GraphOK() bool { return r.Err == nil || r.Err.Stage != StageGraph }

// Extraction returns the unit's entities and relationships as
// graphbuild.Merge takes them, in reply order. It shares no memory with r.
func (r *Result) Extraction() graphbuild.Extraction {
	x := graphbuild.Extraction{TextUnitID: r.TextUnitID}
	for _, e := range r.Entities {
		x.Entities = append(x.Entities, graphbuild.Entity{Title: e.Title, Type: e.Type, Description: e.Description})
	}
	for _, rel := range r.Relationships {
		x.Relationships = append(x.Relationships, graphbuild.Relationship{Source: rel.Source, Target: rel.Target,
			Description: rel.Description, Weight: rel.Weight, HasWeight: rel.HasWeight})
	}
	return x
}

// Extractions maps results to graphbuild.Merge's input, in order,
// leaving out nil results and units whose graph conversation failed.
func Extractions(results []*Result) []graphbuild.Extraction {
	var out []graphbuild.Extraction
	for _, r := range results {
		if r != nil && r.GraphOK() {
			out = append(out, r.Extraction())
		}
	}
	return out
}

// Covariates maps the claims of results to GraphRAG's covariates table,
// in text unit and reply order, as GraphRAG's extract_covariates lists
// them. A unit whose claim conversation failed contributes none (GraphRAG
// drops what the failed call would have given), nor does one whose graph
// conversation failed, since its text unit has no entities to relate the
// claims to. Ids are name-based (graphbuild.CovariateID), so a repeated
// run gives the same table; GraphRAG draws uuid4s.
func Covariates(results []*Result) []graphrag.Covariate {
	var out []graphrag.Covariate
	for _, r := range results {
		if r == nil || r.Err != nil {
			continue
		}
		for i, c := range r.Claims {
			out = append(out, graphrag.Covariate{
				ID:              graphbuild.CovariateID(r.TextUnitID, i),
				HumanReadableID: strconv.Itoa(len(out)),
				CovariateType:   "claim",
				Type:            c.Type, Description: c.Description,
				SubjectID: c.Subject, ObjectID: c.Object, Status: c.Status,
				StartDate: c.StartDate, EndDate: c.EndDate, SourceText: c.SourceText,
				TextUnitID: r.TextUnitID,
			})
		}
	}
	return out
}

// UnitError is a failed model call of one text unit's extraction. It
// unwraps to the call's error (an *llm.Error, or the context's error), so
// errors.Is(err, llm.ErrUnreachable) works through it.
type UnitError struct {
	TextUnitID string
	Stage      string // StageGraph or StageClaims
	Round      int    // as Dropped.Round; a loop question counts with the round it follows
	Err        error
}

func (e *UnitError) Error() string {
	return fmt.Sprintf("extraction: text unit %s: %s extraction round %d: %v", e.TextUnitID, e.Stage, e.Round, e.Err)
}

func (e *UnitError) Unwrap() error { return e.Err }
