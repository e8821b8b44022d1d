package ontology

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/rdf"
)

// Mapper maps a GraphRAG dataset to gr: triples. The zero value is not
// usable: Base must be set. A Mapper is safe for concurrent use.
type Mapper struct {
	// Base is the IRI every instance IRI starts with; it must end in '/' or
	// '#' (see ValidateBase). Entities become Base+"entity/"+id, and so on.
	Base string
	// OmitDocumentText leaves out gr:text of documents, which repeats the
	// text of all their chunks.
	OmitDocumentText bool
	// Run and Release are what the provenance says of the index run:
	// kgrag index's record (graphrag.Dataset.Run; nil for Microsoft
	// GraphRAG output) and the release read. Map takes both from the
	// dataset when they are unset; a Stream's caller sets them.
	Run     *graphrag.Run
	Release graphrag.Release
	// Keys, when set, names entities by their titles and relationships by
	// their end titles (entity/SCROOGE, relationship/SCROOGE/MARLEY)
	// instead of by GraphRAG's ids, which Microsoft GraphRAG makes anew
	// (UUIDs) each run: IRIs that last across runs. gr:id still holds the
	// run's id. Two entities of one title, as a merged update table can
	// hold, become one node.
	Keys *graphrag.Keys
}

// Stats counts what Map or a Stream wrote.
type Stats struct {
	Triples       int64
	Documents     int
	Chunks        int
	Entities      int // including Unresolved
	Unresolved    int // entities named by a relationship or claim but absent from the entities table
	Relationships int
	Communities   int
	Findings      int
	Covariates    int
	// RepeatedLinks counts ids repeated within one link list (a text
	// unit's entities, an entity's communities), written once.
	RepeatedLinks int
}

// checkEvery is how many rows a Stream writes between checks of ctx.
const checkEvery = 4096

// Map writes the triples of ds to w, subject by subject, in a fixed order
// (documents, chunks, entities, relationships, communities with their
// findings, covariates; rows in table order), so the same input always gives
// the same output. It stops at the first error w returns, or when ctx is
// done. Entities state their communities from Entity.Communities, which
// graphrag.Open fills (a Dataset built by hand must fill it too). Map is
// Stream fed from memory: graphrag.Walk with Mapper.Stream writes the same
// bytes without holding the dataset.
func (m Mapper) Map(ctx context.Context, ds *graphrag.Dataset, w rdf.Writer) (Stats, error) {
	if m.Run == nil {
		m.Run = ds.Run
	}
	if m.Release == "" {
		m.Release = ds.Release
	}
	s, err := m.Stream(w)
	if err != nil {
		return Stats{}, err
	}
	steps := []func() error{
		func() error { return s.Documents(ctx, ds.Documents) },
		func() error { return s.TextUnits(ctx, ds.TextUnits) },
		func() error { return s.Entities(ctx, ds.Entities) },
		func() error { return s.Relationships(ctx, ds.Relationships) },
		func() error { return s.Communities(ctx, ds.Communities) },
		func() error { return s.Covariates(ctx, ds.Covariates) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return s.Stats(), err
		}
	}
	return s.Stats(), ctx.Err()
}

// Stream maps a dataset to triples one table at a time, so that a table can
// be mapped and freed before the next is read (see graphrag.Walk). Its
// methods must be called in Map's order (Documents, TextUnits, Entities,
// Relationships, Communities, Covariates), each table's rows once and in
// order (in one call, or in windows of several: graphrag.Visitor.Windows),
// for the output to be Map's; each stops at the first error of the writer, or when
// ctx is done. The rows must be complete as graphrag.Walk and Open hand
// them over: entities state their communities from Entity.Communities.
// A Stream is not safe for concurrent use and keeps no reference to the
// rows it was given.
type Stream struct {
	e        emitter
	omitText bool
	rows     int // rows written, for the ctx check every checkEvery rows
}

// Stream returns a Stream that writes to w. It fails only when m.Base is
// not a valid base IRI.
func (m Mapper) Stream(w rdf.Writer) (*Stream, error) {
	if err := ValidateBase(m.Base); err != nil {
		return nil, err
	}
	e := emitter{w: w, base: m.Base, keys: m.Keys, prov: provenance{
		run: m.Run, release: m.Release, runIRI: rdf.IRI(m.Base + segRun), docs: newDocTable()}}
	return &Stream{e: e, omitText: m.OmitDocumentText}, nil
}

// Stats returns what the Stream has written so far.
func (s *Stream) Stats() Stats { return s.e.stats }

// Visitor returns a graphrag.Visitor that maps every table Walk hands over:
//
//	s, err := m.Stream(enc)
//	...
//	ds, err := graphrag.Walk(ctx, dir, s.Visitor())
//	stats := s.Stats()
func (s *Stream) Visitor() graphrag.Visitor {
	return graphrag.Visitor{
		Documents:     s.Documents,
		TextUnits:     s.TextUnits,
		Entities:      s.Entities,
		Relationships: s.Relationships,
		Communities:   s.Communities,
		Covariates:    s.Covariates,
		// The mapping writes full_content, not its JSON.
		OmitReportJSON: true,
		// Rows are mapped and let go of as they come: no table need be
		// held whole.
		Windows: true,
	}
}

// tick counts a written row and checks ctx every checkEvery rows, counted
// across tables as Map always did.
func (s *Stream) tick(ctx context.Context) error {
	s.rows++
	if s.rows%checkEvery == 0 {
		return ctx.Err()
	}
	return nil
}

// mapRows writes every row of one table with write.
func mapRows[T any](ctx context.Context, s *Stream, rows []T, write func(*T) error) error {
	for i := range rows {
		if err := write(&rows[i]); err != nil {
			return err
		}
		if err := s.tick(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Documents writes documents as gr:Document.
func (s *Stream) Documents(ctx context.Context, rows []graphrag.Document) error {
	if err := s.e.runNode(); err != nil {
		return err
	}
	return mapRows(ctx, s, rows, func(d *graphrag.Document) error { return s.e.document(d, s.omitText) })
}

// TextUnits writes text units as gr:Chunk.
func (s *Stream) TextUnits(ctx context.Context, rows []graphrag.TextUnit) error {
	s.e.recordDocuments(rows)
	return mapRows(ctx, s, rows, s.e.chunk)
}

// Entities writes entities as gr:Entity, placeholders as unresolved ones.
func (s *Stream) Entities(ctx context.Context, rows []graphrag.Entity) error {
	return mapRows(ctx, s, rows, s.e.entity)
}

// Relationships writes relationships as gr:Relationship and direct edges.
func (s *Stream) Relationships(ctx context.Context, rows []graphrag.Relationship) error {
	return mapRows(ctx, s, rows, s.e.relationship)
}

// Communities writes communities with their reports and findings.
func (s *Stream) Communities(ctx context.Context, rows []graphrag.Community) error {
	return mapRows(ctx, s, rows, s.e.community)
}

// Covariates writes claims as gr:Covariate.
func (s *Stream) Covariates(ctx context.Context, rows []graphrag.Covariate) error {
	return mapRows(ctx, s, rows, s.e.covariate)
}

// emitter writes the triples of one subject at a time.
type emitter struct {
	w     rdf.Writer
	base  string
	buf   []byte
	stats Stats
	s     rdf.Term // current subject
	prov  provenance
	keys  *graphrag.Keys
}

// iri returns base+seg+escaped id; with keys, entities and relationships
// are named by their keys instead (see Mapper.Keys).
func (e *emitter) iri(seg, id string) rdf.Term {
	b := append(e.buf[:0], e.base...)
	b = append(b, seg...)
	switch {
	case e.keys != nil && seg == segEntity:
		if title, ok := e.keys.EntityTitle[id]; ok {
			id = title
		}
		b = AppendSegment(b, id)
	case e.keys != nil && seg == segRelationship:
		if ends, ok := e.keys.RelationshipEnds[id]; ok {
			b = AppendSegment(b, ends[0])
			b = append(b, '/')
			b = AppendSegment(b, ends[1])
			break
		}
		b = AppendSegment(b, id)
	default:
		b = AppendSegment(b, id)
	}
	e.buf = b
	return rdf.IRI(string(b))
}

func (e *emitter) add(p string, o rdf.Term) error {
	e.stats.Triples++
	if err := e.w.WriteTriple(rdf.Triple{S: e.s, P: rdf.IRI(p), O: o}); err != nil {
		return fmt.Errorf("ontology: write %s %s: %w", e.s.Value, p, err)
	}
	return nil
}

// str adds a string literal unless v is empty: GraphRAG writes "" and NULL
// for "not known", and an empty literal says nothing more.
func (e *emitter) str(p, v string) error {
	if v == "" {
		return nil
	}
	return e.add(p, rdf.String(v))
}

func (e *emitter) int(p string, v int64) error { return e.add(p, rdf.Integer(v)) }

// hrid adds gr:human_readable_id as an xsd:integer, or as the string
// GraphRAG wrote where that is not a number.
func (e *emitter) hrid(v string) error {
	if v == "" {
		return nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return e.int(HumanReadableID, n)
	}
	return e.add(HumanReadableID, rdf.String(v))
}

// date adds an xsd:dateTime when v is one of the date forms GraphRAG
// writes, the text as written when it is not, and nothing for GraphRAG's
// "NONE" placeholders.
func (e *emitter) date(p, v string) error {
	if graphrag.IsNone(v) {
		return nil
	}
	if lex, ok := dateTime(v); ok {
		return e.add(p, rdf.Typed(lex, rdf.XSDDateTime))
	}
	return e.add(p, rdf.String(v))
}

func (e *emitter) typ(class string) error { return e.add(rdf.RDFType, rdf.IRI(class)) }

func (e *emitter) document(d *graphrag.Document, omitText bool) error {
	e.s = e.iri(segDocument, d.ID)
	e.stats.Documents++
	if err := e.typ(Document); err != nil {
		return err
	}
	if err := e.add(ID, rdf.String(d.ID)); err != nil {
		return err
	}
	if err := e.hrid(d.HumanReadableID); err != nil {
		return err
	}
	if err := e.str(Title, d.Title); err != nil {
		return err
	}
	if err := e.str(RDFSLabel, d.Title); err != nil {
		return err
	}
	if !omitText {
		if err := e.str(Text, d.Text); err != nil {
			return err
		}
	}
	if err := e.date(CreationDate, d.CreationDate); err != nil {
		return err
	}
	if err := e.str(Metadata, d.Metadata); err != nil {
		return err
	}
	return e.documentProvenance(d)
}

func (e *emitter) chunk(t *graphrag.TextUnit) error {
	e.s = e.iri(segChunk, t.ID)
	e.stats.Chunks++
	if err := e.typ(Chunk); err != nil {
		return err
	}
	if err := e.add(ID, rdf.String(t.ID)); err != nil {
		return err
	}
	if err := e.hrid(t.HumanReadableID); err != nil {
		return err
	}
	if err := e.add(Text, rdf.String(t.Text)); err != nil {
		return err
	}
	if t.HasNTokens {
		if err := e.int(NTokens, t.NTokens); err != nil {
			return err
		}
	}
	if err := e.links(PartOf, segDocument, t.DocumentIDs); err != nil {
		return err
	}
	if err := e.links(HasEntity, segEntity, t.EntityIDs); err != nil {
		return err
	}
	if err := e.links(HasRelationship, segRelationship, t.RelationshipIDs); err != nil {
		return err
	}
	return e.derivedFrom(t.DocumentIDs)
}

// recordDocuments records the documents of each text unit, which the
// records of later tables are derived from. It runs over the whole table
// before its chunks are written, so that chunks (derived from their own
// documents) can be written by several goroutines reading the map.
func (e *emitter) recordDocuments(rows []graphrag.TextUnit) {
	t := e.prov.docs
	// The IRIs are built in a buffer of their own: e's is read by the
	// goroutines mapping the documents meanwhile (Table.Map forks e).
	var buf []byte
	for i := range rows {
		docs := make([]int32, len(rows[i].DocumentIDs))
		for j, d := range rows[i].DocumentIDs {
			n, ok := t.index[d]
			if !ok {
				n = int32(len(t.iris))
				t.index[d] = n
				buf = AppendSegment(append(append(buf[:0], e.base...), segDocument...), d)
				t.iris = append(t.iris, rdf.IRI(string(buf)))
			}
			docs[j] = n
		}
		t.tus[rows[i].ID] = docs
	}
}

// links adds one p triple to the IRI of each id, each id once: GraphRAG's
// link lists repeat ids (a text unit that names an entity twice, merged
// update tables), and a repeated triple would be counted as written
// although a store keeps it once. Stats.RepeatedLinks counts those left
// out.
func (e *emitter) links(p, seg string, ids []string) error {
	var seen map[string]bool // for long lists; short ones are scanned
	if len(ids) > 32 {
		seen = make(map[string]bool, len(ids))
	}
	for i, id := range ids {
		repeated := false
		if seen != nil {
			repeated = seen[id]
			seen[id] = true
		} else {
			repeated = slices.Contains(ids[:i], id)
		}
		if repeated {
			e.stats.RepeatedLinks++
			continue
		}
		if err := e.add(p, e.iri(seg, id)); err != nil {
			return err
		}
	}
	return nil
}

func (e *emitter) entity(en *graphrag.Entity) error {
	e.s = e.iri(segEntity, en.ID)
	e.stats.Entities++
	if err := e.typ(Entity); err != nil {
		return err
	}
	if err := e.add(ID, rdf.String(en.ID)); err != nil {
		return err
	}
	if err := e.hrid(en.HumanReadableID); err != nil {
		return err
	}
	for _, p := range [...]string{Title, Name, RDFSLabel} {
		if err := e.add(p, rdf.String(en.Title)); err != nil {
			return err
		}
	}
	if en.Placeholder {
		e.stats.Unresolved++
		if err := e.add(Unresolved, rdf.Typed("true", rdf.XSDBoolean)); err != nil {
			return err
		}
		return e.derived(nil)
	}
	if err := e.str(Type, en.Type); err != nil {
		return err
	}
	if err := e.str(Description, en.Description); err != nil {
		return err
	}
	if en.HasDegree {
		if err := e.int(Degree, en.Degree); err != nil {
			return err
		}
	}
	if en.HasFrequency {
		if err := e.int(Frequency, en.Frequency); err != nil {
			return err
		}
	}
	if err := e.links(InCommunity, segCommunity, en.Communities); err != nil {
		return err
	}
	return e.derived(en.TextUnitIDs)
}

func (e *emitter) relationship(r *graphrag.Relationship) error {
	rel := e.iri(segRelationship, r.ID)
	src := e.iri(segEntity, r.SourceID)
	dst := e.iri(segEntity, r.TargetID)
	e.stats.Relationships++

	// The RDF article's direct edge: the relationship is the predicate.
	e.s = src
	if err := e.add(rel.Value, dst); err != nil {
		return err
	}

	e.s = rel
	if err := e.typ(Relationship); err != nil {
		return err
	}
	if err := e.add(ID, rdf.String(r.ID)); err != nil {
		return err
	}
	if err := e.hrid(r.HumanReadableID); err != nil {
		return err
	}
	if err := e.str(RDFSLabel, r.Source+" -> "+r.Target); err != nil {
		return err
	}
	if err := e.add(Source, src); err != nil {
		return err
	}
	if err := e.add(Target, dst); err != nil {
		return err
	}
	if err := e.str(Description, r.Description); err != nil {
		return err
	}
	if r.HasWeight {
		if err := e.add(Weight, rdf.Double(r.Weight)); err != nil {
			return err
		}
	}
	if r.HasRank {
		if err := e.int(Rank, r.Rank); err != nil {
			return err
		}
	}
	return e.derived(r.TextUnitIDs)
}

func (e *emitter) community(c *graphrag.Community) error {
	self := e.iri(segCommunity, c.Community)
	e.s = self
	e.stats.Communities++
	if err := e.typ(Community); err != nil {
		return err
	}
	if err := e.derived(c.TextUnitIDs); err != nil {
		return err
	}
	if err := e.add(ID, rdf.String(c.ID)); err != nil {
		return err
	}
	if err := e.hrid(c.HumanReadableID); err != nil {
		return err
	}
	if n, err := strconv.ParseInt(c.Community, 10, 64); err == nil {
		if err := e.int(CommunityNumber, n); err != nil {
			return err
		}
	} else {
		return fmt.Errorf("ontology: community %q: community number is not an integer", c.Community)
	}
	if err := e.int(Level, c.Level); err != nil {
		return err
	}
	title := c.Title
	if c.Report != nil && c.Report.Title != "" {
		title = c.Report.Title
	}
	if err := e.str(Title, title); err != nil {
		return err
	}
	if err := e.str(RDFSLabel, title); err != nil {
		return err
	}
	if c.Parent != "" {
		if err := e.add(Parent, e.iri(segCommunity, c.Parent)); err != nil {
			return err
		}
	}
	if c.HasSize {
		if err := e.int(Size, c.Size); err != nil {
			return err
		}
	}
	if err := e.str(Period, c.Period); err != nil {
		return err
	}
	if err := e.add(Weight, rdf.Double(c.Weight)); err != nil {
		return err
	}
	r := c.Report
	if r == nil {
		return nil
	}
	if err := e.str(ReportID, r.ID); err != nil {
		return err
	}
	if err := e.str(Summary, r.Summary); err != nil {
		return err
	}
	if err := e.str(FullContent, r.FullContent); err != nil {
		return err
	}
	if r.HasRank {
		if err := e.add(Rank, rdf.Double(r.Rank)); err != nil {
			return err
		}
	}
	if err := e.str(RankExplanation, r.RankExplanation); err != nil {
		return err
	}
	// Findings are named after their report and position: they have no id.
	prefix := self.Value + "/finding/"
	for i := range r.Findings {
		e.s = self
		f := rdf.IRI(prefix + strconv.Itoa(i))
		if err := e.add(HasFinding, f); err != nil {
			return err
		}
		e.s = f
		e.stats.Findings++
		if err := e.typ(Finding); err != nil {
			return err
		}
		if err := e.int(Index, int64(i)); err != nil {
			return err
		}
		if err := e.str(Summary, r.Findings[i].Summary); err != nil {
			return err
		}
		if err := e.str(Explanation, r.Findings[i].Explanation); err != nil {
			return err
		}
	}
	return nil
}

func (e *emitter) covariate(c *graphrag.Covariate) error {
	e.s = e.iri(segCovariate, c.ID)
	e.stats.Covariates++
	if err := e.typ(Covariate); err != nil {
		return err
	}
	if err := e.derived([]string{c.TextUnitID}); err != nil { // "" names no text unit: no document
		return err
	}
	if err := e.add(ID, rdf.String(c.ID)); err != nil {
		return err
	}
	if err := e.hrid(c.HumanReadableID); err != nil {
		return err
	}
	if err := e.str(CovariateType, c.CovariateType); err != nil {
		return err
	}
	if err := e.str(Type, c.Type); err != nil {
		return err
	}
	if err := e.str(Description, c.Description); err != nil {
		return err
	}
	if err := e.str(Status, c.Status); err != nil {
		return err
	}
	for _, end := range [...]struct{ p, id string }{{Subject, c.SubjectEntityID}, {Object, c.ObjectEntityID}} {
		if end.id == "" {
			continue
		}
		if err := e.add(end.p, e.iri(segEntity, end.id)); err != nil {
			return err
		}
	}
	if err := e.date(StartDate, c.StartDate); err != nil {
		return err
	}
	if err := e.date(EndDate, c.EndDate); err != nil {
		return err
	}
	if err := e.str(SourceText, c.SourceText); err != nil {
		return err
	}
	if c.TextUnitID != "" {
		if err := e.add(TextUnit, e.iri(segChunk, c.TextUnitID)); err != nil {
			return err
		}
	}
	return nil
}

// dateLayouts are the forms GraphRAG writes dates in: pandas timestamps,
// ISO 8601 with and without zone, and Python's str(datetime).
var dateLayouts = [...]string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05 -0700",
	"2006-01-02 15:04:05.999999999",
}

// dateTime converts v to an xsd:dateTime lexical form, keeping the zone when
// v has one and leaving the value local (no zone) when it has none.
func dateTime(v string) (string, bool) {
	v = strings.TrimSpace(v)
	for i, layout := range dateLayouts {
		t, err := time.Parse(layout, v)
		if err != nil {
			continue
		}
		hasZone := i == 0 || i == 2 || i == 3
		if hasZone {
			return t.Format("2006-01-02T15:04:05.999999999Z07:00"), true
		}
		return t.Format("2006-01-02T15:04:05.999999999"), true
	}
	return "", false
}
