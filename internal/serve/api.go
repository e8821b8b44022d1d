package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/kgrag/kgrag/internal/engine"
	"github.com/kgrag/kgrag/internal/localsearch"
	"github.com/kgrag/kgrag/internal/retrieval"
)

// askRequest is POST /api/ask's body.
type askRequest struct {
	Question    string `json:"question"`
	Mode        string `json:"mode"`
	ContextOnly bool   `json:"context_only"`
	// Plan asks what the question would cost, without the chat model
	// (global and DRIFT search).
	Plan bool `json:"plan"`
	// History are the earlier turns, oldest first.
	History []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"history"`
}

// handleAsk answers POST /api/ask with the record kgrag ask --json
// prints, plus the citations.
func (s *Server) handleAsk(w http.ResponseWriter, r *http.Request) {
	var req askRequest
	if !s.decode(w, r, &req) {
		return
	}
	mode := req.Mode
	if mode == "" {
		mode = engine.Modes()[0].Name
	}
	if _, ok := modeOf(mode); !ok {
		badRequest(w, "mode", fmt.Sprintf("mode %q: want %s", req.Mode, modeNames()))
		return
	}
	mode, _ = modeOf(mode)
	msgs := make([]chatMessage, 0, len(req.History)+1)
	for _, h := range req.History {
		msgs = append(msgs, chatMessage{Role: h.Role, Content: jsonString(h.Content)})
	}
	msgs = append(msgs, chatMessage{Role: "user", Content: jsonString(req.Question)})
	text, history, err := s.conversation(msgs)
	if err != nil {
		s.askError(w, r, err)
		return
	}
	note(r).question = text
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	rep, err := s.ask(ctx, question{mode: mode, text: text, history: history, contextOnly: req.ContextOnly, plan: req.Plan}, nil)
	if err != nil {
		s.askError(w, r, err)
		return
	}
	w.Header().Set("X-Kgrag-Graph-Version", fmt.Sprint(rep.GraphVersion))
	w.Header().Set("Server-Timing", serverTiming(rep))
	writeJSON(w, http.StatusOK, rep)
}

// entityJSON is an entity with what links to it.
type entityJSON struct {
	ID              string `json:"id"`
	HumanReadableID string `json:"human_readable_id"`
	Title           string `json:"title"`
	Description     string `json:"description"`
	Degree          int64  `json:"degree"`
	// IRI is the entity's IRI in the store, as kgrag load mints it.
	IRI           string             `json:"iri,omitempty"`
	Relationships []relationshipJSON `json:"relationships"`
	TextUnits     []textUnitJSON     `json:"text_units"`
	Communities   []communityJSON    `json:"communities"`
}

type relationshipJSON struct {
	ID              string  `json:"id"`
	HumanReadableID string  `json:"human_readable_id"`
	Source          string  `json:"source"`
	Target          string  `json:"target"`
	SourceID        string  `json:"source_id"`
	TargetID        string  `json:"target_id"`
	Description     string  `json:"description"`
	Weight          float64 `json:"weight"`
	CombinedDegree  int64   `json:"combined_degree"`
}

type textUnitJSON struct {
	ID              string `json:"id"`
	HumanReadableID string `json:"human_readable_id"`
	Text            string `json:"text"`
	NTokens         int64  `json:"n_tokens"`
}

type communityJSON struct {
	Community string   `json:"community"`
	ID        string   `json:"id"`
	Level     int64    `json:"level"`
	Title     string   `json:"title"`
	Rank      float64  `json:"rank"`
	Summary   string   `json:"summary"`
	Content   string   `json:"full_content,omitempty"`
	Parent    string   `json:"parent,omitempty"`
	Children  []string `json:"children"`
}

func communityOf(r retrieval.ReportRecord, full bool) communityJSON {
	c := communityJSON{Community: r.ID, ID: r.CommunityID, Level: r.Level, Title: r.Title, Rank: r.Rank,
		Summary: r.Summary, Parent: r.Parent, Children: r.Children}
	if c.Children == nil {
		c.Children = []string{}
	}
	if full {
		c.Content = r.FullContent
	}
	return c
}

// entity reads the entity with id, with its relationships, text units
// and communities, from g's source.
func entity(ctx context.Context, g *Graph, id string) (*entityJSON, error) {
	ents, err := g.Source.Entities(ctx, []string{id})
	if err != nil || len(ents) == 0 {
		return nil, err
	}
	e := ents[0]
	out := &entityJSON{ID: e.EntityID, HumanReadableID: e.ID, Title: e.Title, Description: e.Description, Degree: e.Rank,
		Relationships: []relationshipJSON{}, TextUnits: []textUnitJSON{}, Communities: []communityJSON{}}
	refs, err := g.Source.EntityRefs(ctx, []string{e.EntityID}, nil)
	if err != nil {
		return nil, err
	}
	if len(refs) > 0 {
		out.IRI = g.entityIRI(refs[0])
	}
	rels, err := g.Source.Relationships(ctx, []string{e.EntityID})
	if err != nil {
		return nil, err
	}
	for _, r := range rels {
		out.Relationships = append(out.Relationships, relationshipJSON{r.RelationshipID, r.ID, r.Source, r.Target, r.SourceID, r.TargetID, r.Description, r.Weight, r.Rank})
	}
	units, err := g.Source.TextUnits(ctx, e.TextUnitIDs)
	if err != nil {
		return nil, err
	}
	for _, u := range units {
		out.TextUnits = append(out.TextUnits, textUnitJSON{u.TextUnitID, u.ID, u.Text, u.NTokens})
	}
	reports, err := g.Source.Reports(ctx, []string{e.EntityID}, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	for _, r := range reports {
		out.Communities = append(out.Communities, communityOf(r, false))
	}
	return out, nil
}

// entityByIDOrNumber reads the entity with GraphRAG id id or, failing
// that, the one an answer cites by the number id ("Entities (3)"); nil
// for neither.
func entityByIDOrNumber(ctx context.Context, g *Graph, id string) (*entityJSON, error) {
	e, err := entity(ctx, g, id)
	if e != nil || err != nil {
		return e, err
	}
	n, perr := strconv.ParseInt(id, 10, 64)
	if perr != nil || n < 0 {
		return nil, nil
	}
	ref, ok, err := g.Source.EntityByNumber(ctx, n)
	if !ok || err != nil {
		return nil, err
	}
	return entity(ctx, g, ref.ID)
}

// handleEntity answers GET /api/entities/{id}: by GraphRAG id or the
// number an answer cites, or by title with ?by=title.
func (s *Server) handleEntity(w http.ResponseWriter, r *http.Request) {
	g, done := s.pin()
	defer done()
	id := r.PathValue("id")
	if r.URL.Query().Get("by") == "title" {
		found, err := g.entityID(r.Context(), id)
		if err != nil {
			s.askError(w, r, &localsearch.SourceError{Err: err})
			return
		}
		if found == "" {
			writeError(w, http.StatusNotFound, "not_found_error", "entity_not_found", fmt.Sprintf("no entity titled %q", id))
			return
		}
		id = found
	}
	e, err := entityByIDOrNumber(r.Context(), g, id)
	switch {
	case err != nil:
		s.askError(w, r, &localsearch.SourceError{Err: err})
	case e == nil:
		writeError(w, http.StatusNotFound, "not_found_error", "entity_not_found", fmt.Sprintf("no entity with id or number %q (try ?by=title)", id))
	default:
		writeJSON(w, http.StatusOK, e)
	}
}

// handleEntitySearch answers GET /api/entities?q=TEXT&k=N: the entities
// nearest the text in the vector index.
func (s *Server) handleEntitySearch(w http.ResponseWriter, r *http.Request) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		badRequest(w, "q", "search needs ?q=TEXT")
		return
	}
	k, err := intParam(r, "k", 10, 1, 100)
	if err != nil {
		badRequest(w, "k", err.Error())
		return
	}
	g, done := s.pin()
	defer done()
	hits, err := s.search(r.Context(), g, q, k)
	if err != nil {
		s.askError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"query": q, "entities": hits})
}

// hitJSON is one entity found by a search.
type hitJSON struct {
	ID              string  `json:"id"`
	HumanReadableID string  `json:"human_readable_id"`
	Title           string  `json:"title"`
	Description     string  `json:"description"`
	Score           float32 `json:"score"`
}

func (s *Server) search(ctx context.Context, g *Graph, q string, k int) ([]hitJSON, error) {
	if len([]rune(q)) > s.cfg.MaxQuestionChars {
		return nil, fmt.Errorf("%w: the search text is over %d characters", errBadQuestion, s.cfg.MaxQuestionChars)
	}
	if g.Nearest == nil {
		return nil, errNoIndex
	}
	release, err := s.limit.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	hits, err := g.Nearest(ctx, q, k)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(hits))
	score := map[string]float32{}
	for i, h := range hits {
		ids[i], score[h.ID] = h.ID, h.Score
	}
	ents, err := g.Source.Entities(ctx, ids)
	if err != nil {
		return nil, &localsearch.SourceError{Err: err}
	}
	out := []hitJSON{}
	for _, e := range ents {
		out = append(out, hitJSON{e.EntityID, e.ID, e.Title, e.Description, score[e.EntityID]})
	}
	return out, nil
}

// handleCommunity answers GET /api/communities/{id}: a community by its
// number, with its report.
func (s *Server) handleCommunity(w http.ResponseWriter, r *http.Request) {
	g, done := s.pin()
	defer done()
	rep, ok := g.report(r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusNotFound, "not_found_error", "community_not_found", fmt.Sprintf("no community report numbered %q", r.PathValue("id")))
		return
	}
	writeJSON(w, http.StatusOK, communityOf(rep, true))
}

// handleTextUnit answers GET /api/text-units/{id}.
func (s *Server) handleTextUnit(w http.ResponseWriter, r *http.Request) {
	g, done := s.pin()
	defer done()
	units, err := g.Source.TextUnits(r.Context(), []string{r.PathValue("id")})
	switch {
	case err != nil:
		s.askError(w, r, &localsearch.SourceError{Err: err})
	case len(units) == 0:
		writeError(w, http.StatusNotFound, "not_found_error", "text_unit_not_found", fmt.Sprintf("no text unit with id %q", r.PathValue("id")))
	default:
		u := units[0]
		writeJSON(w, http.StatusOK, textUnitJSON{u.TextUnitID, u.ID, u.Text, u.NTokens})
	}
}

func intParam(r *http.Request, name string, def, lo, hi int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s=%q: want a whole number from %d to %d", name, v, lo, hi)
	}
	return n, nil
}

func jsonString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
