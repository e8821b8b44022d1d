package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kgrag/kgrag/internal/answer"
	"github.com/kgrag/kgrag/internal/engine"
	"github.com/kgrag/kgrag/internal/mode"
	"github.com/kgrag/kgrag/internal/retrieval"
)

// modeOf is the mode a model name chooses: "kgrag-local" or "local";
// "seed" and "kgrag-seed", sparql-templates' first names, still work.
func modeOf(model string) (string, bool) {
	m, ok := mode.Lookup(model)
	if !ok {
		return "", false
	}
	for _, s := range engine.Modes() {
		if s.Name == m.Name {
			return m.Name, true
		}
	}
	return "", false
}

// modeNames lists the modes served, for errors.
func modeNames() string {
	var names []string
	for _, m := range engine.Modes() {
		names = append(names, m.Name)
	}
	return strings.Join(names, ", ")
}

// question is one question to answer.
type question struct {
	mode        string
	text        string
	history     []retrieval.Turn
	contextOnly bool
	// plan asks what the question would cost (global and DRIFT search).
	plan bool
}

// reply is an answered question: the record kgrag ask --json prints, and
// the records the answer cites.
type reply struct {
	*answer.Result
	Citations []Citation `json:"citations"`
	// GraphVersion is the load of the graph that answered (as /readyz
	// counts them).
	GraphVersion uint64 `json:"graph_version"`
}

// errNoIndex: a mode whose vector index the server has not loaded.
var errNoIndex = errors.New("no vector index is loaded for this mode")

// errStale: the store's graph changed (a kgrag load committed) since the
// served graph was loaded, or while the question was read from it.
var errStale = errors.New("the graph in the store changed")

// staleTries is how often a question is asked again after the graph
// changed under it before the client is told to retry.
const staleTries = 3

// ask answers q on the graph served, streaming the answer to onAnswer
// (which may be nil) with the version of the graph answering. The
// limiter bounds it. The reply is returned with the error when the error
// came after the context was built.
//
// When the graph is read from a store that records its loads, an answer
// comes from one load of it: the load's stamp is read before the question
// and again once its context is read (before any of the answer streams).
// If it changed, a load committed meanwhile and the context may mix two
// graphs: the server reloads and asks again.
func (s *Server) ask(ctx context.Context, q question, onAnswer func(version uint64, piece string) error) (*reply, error) {
	for try := 1; ; try++ {
		g, done := s.pin()
		rep, err := s.askOn(ctx, g, q, onAnswer)
		done()
		if !errors.Is(err, errStale) {
			return rep, err
		}
		if try == staleTries {
			return nil, fmt.Errorf("%w while the question was read, %d times: %w", errStale, staleTries, errBusyGraph)
		}
		s.log.Info("the graph changed in the store; reloading", "version", g.version)
		if err := s.refresh(ctx, g); err != nil {
			return nil, err
		}
	}
}

// errBusyGraph: the graph kept changing under a question (503).
var errBusyGraph = errors.New("the graph is being updated; try again")

// current fails with errStale when g's store holds another load than g
// was loaded from.
func (g *Graph) current(ctx context.Context) error {
	if g.Stamp == nil {
		return nil
	}
	st, err := g.Stamp(ctx)
	if err != nil {
		return fmt.Errorf("serve: read the store's load record: %w", err)
	}
	if st != g.StampAtLoad {
		return errStale
	}
	return nil
}

// askOn answers q on g once.
func (s *Server) askOn(ctx context.Context, g *Graph, q question, onAnswer func(uint64, string) error) (*reply, error) {
	release, err := s.limit.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	eng, err := g.engine(q.mode)
	if err != nil {
		return nil, err
	}
	// Before: the modes that read the graph in several rounds (global,
	// DRIFT) are checked only here.
	if err := g.current(ctx); err != nil {
		return nil, err
	}
	t := time.Now()
	res := &answer.Result{Question: q.text, Mode: q.mode, Source: g.Name, Timings: map[string]float64{}}
	out := &reply{Result: res, Citations: []Citation{}, GraphVersion: g.version}
	eq := engine.Question{Text: q.text, History: q.history}
	hooks := engine.Hooks{Retrieved: func(*answer.Result) error { return g.current(ctx) }}
	if onAnswer != nil {
		hooks.Answer = func(piece string) error { return onAnswer(g.version, piece) }
	}
	switch {
	case q.plan && q.contextOnly:
		return nil, fmt.Errorf("%w: plan and context_only exclude each other", errBadQuestion)
	case q.plan:
		err = eng.Plan(ctx, eq, res)
	case q.contextOnly:
		if err = eng.Context(ctx, eq, res); err == nil {
			err = g.current(ctx)
		}
	default:
		err = eng.Search(ctx, eq, hooks, res)
	}
	switch {
	case errors.Is(err, errStale):
		return nil, err
	case errors.Is(err, engine.ErrNoPlan), errors.Is(err, engine.ErrNoContext):
		return nil, fmt.Errorf("%w: mode %s: %w", errBadQuestion, q.mode, err)
	case err != nil && res.Context == nil && res.Answer == nil:
		return nil, err
	}
	if res.Answer != nil {
		out.Citations = citations(*res.Answer, g, res)
		addIRIs(ctx, g, out.Citations)
	}
	res.Timings["total"] = ms(time.Since(t))
	if err != nil {
		return out, err
	}
	return out, nil
}

// errBadQuestion marks a question the client got wrong (400).
var errBadQuestion = errors.New("bad question")

// Citation is one record an answer cites ("[Data: Entities (5, 7)]")
// that was in its context, with where to read it.
type Citation struct {
	// Kind is entity, relationship, source (a text unit) or report.
	Kind string `json:"kind"`
	// ID is the id as cited (GraphRAG's human_readable_id, or the
	// community number of a report); RecordID the record's own id.
	ID       string `json:"id"`
	RecordID string `json:"record_id"`
	Title    string `json:"title,omitempty"`
	// URL is the record in this server's API, relative to its root.
	URL string `json:"url"`
	// IRI is a cited entity's IRI in the store (as kgrag load mints it,
	// or as the store holds it), for a workbench query; "" when unknown.
	IRI string `json:"iri,omitempty"`
	// Start and End are where the answer first cites it: the "[Data:
	// ...]" marker, in characters (runes), as OpenAI's url_citation
	// annotations count them.
	Start, End int `json:"-"`
}

// addIRIs fills the IRIs of the entities cs cites, with one lookup. A
// failed lookup leaves them out: the citations stand without.
func addIRIs(ctx context.Context, g *Graph, cs []Citation) {
	var ids []string
	for _, c := range cs {
		if c.Kind == "entity" {
			ids = append(ids, c.RecordID)
		}
	}
	if len(ids) == 0 || g.Source == nil {
		return
	}
	refs, err := g.Source.EntityRefs(ctx, ids, nil)
	if err != nil {
		return
	}
	iri := make(map[string]string, len(refs))
	for _, r := range refs {
		iri[r.ID] = g.entityIRI(r)
	}
	for i := range cs {
		if cs[i].Kind == "entity" {
			cs[i].IRI = iri[cs[i].RecordID]
		}
	}
}

// citeRE finds GraphRAG's citations: "[Data: Entities (1, 2, +more);
// Relationships (3)]".
var (
	citeRE  = regexp.MustCompile(`\[Data:\s*([^\]]*)\]`)
	groupRE = regexp.MustCompile(`([A-Za-z ]+?)\s*\(([^)]*)\)`)
)

// citations lists the records answer cites that res's context holds, in
// the order cited, each once. Ids cited that the context does not hold
// (the model made them up, or "+more") are left out.
func citations(text string, g *Graph, res *answer.Result) []Citation {
	out := []Citation{}
	seen := map[string]bool{}
	add := func(c Citation) {
		if k := c.Kind + "/" + c.ID; !seen[k] {
			seen[k] = true
			out = append(out, c)
		}
	}
	for _, loc := range citeRE.FindAllStringSubmatchIndex(text, -1) {
		start := utf8.RuneCountInString(text[:loc[0]])
		end := start + utf8.RuneCountInString(text[loc[0]:loc[1]])
		for _, grp := range groupRE.FindAllStringSubmatch(text[loc[2]:loc[3]], -1) {
			kind := strings.ToLower(strings.TrimSpace(grp[1]))
			for _, id := range strings.Split(grp[2], ",") {
				id = strings.TrimSpace(id)
				if id == "" || strings.HasPrefix(id, "+") {
					continue
				}
				if c, ok := resolve(kind, id, g, res); ok {
					c.Start, c.End = start, end
					add(c)
				}
			}
		}
	}
	return out
}

// resolve finds the record cited as kind id.
func resolve(kind, id string, g *Graph, res *answer.Result) (Citation, bool) {
	if c := res.Context; c != nil {
		switch kind {
		case "entities":
			for _, e := range c.Records.Entities {
				if e.ID == id {
					return Citation{Kind: "entity", ID: id, RecordID: e.EntityID, Title: e.Title, URL: "/api/entities/" + pathID(e.EntityID)}, true
				}
			}
		case "relationships":
			for _, r := range c.Records.Relationships {
				if r.ID == id {
					return Citation{Kind: "relationship", ID: id, RecordID: r.RelationshipID, Title: r.Source + " → " + r.Target, URL: "/api/entities/" + pathID(r.SourceID)}, true
				}
			}
		case "sources":
			for _, u := range c.Records.Sources {
				if u.ID == id {
					return Citation{Kind: "source", ID: id, RecordID: u.TextUnitID, Title: "", URL: "/api/text-units/" + pathID(u.TextUnitID)}, true
				}
			}
		case "reports":
			for _, r := range c.Records.Reports {
				if r.ID == id {
					return Citation{Kind: "report", ID: id, RecordID: r.CommunityID, Title: r.Title, URL: "/api/communities/" + pathID(r.ID)}, true
				}
			}
		}
		return Citation{}, false
	}
	if kind == "reports" && res.Global != nil {
		for _, b := range res.Global.Batches {
			for _, rid := range b.ReportIDs {
				if rid != id {
					continue
				}
				r, _ := g.report(id)
				return Citation{Kind: "report", ID: id, RecordID: r.CommunityID, Title: r.Title, URL: "/api/communities/" + pathID(id)}, true
			}
		}
	}
	return Citation{}, false
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// askError answers a question that failed before anything was sent.
func (s *Server) askError(w http.ResponseWriter, r *http.Request, err error) {
	note(r).err = err.Error()
	switch {
	case errors.Is(err, errBusy):
		writeBusy(w, s.cfg.MaxModelCalls)
		return
	case errors.Is(err, errBadQuestion), errors.Is(err, errNoIndex):
		badRequest(w, "", err.Error())
		return
	}
	status, e := failure(err)
	if status >= 500 {
		s.log.Warn("question failed", "path", r.URL.Path, "err", err)
	}
	writeJSON(w, status, errorBody{e})
}
