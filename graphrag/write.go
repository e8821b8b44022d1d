package graphrag

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/parquet-go/parquet-go"
)

// Row types of the GraphRAG 3.x tables, in GraphRAG's column order. String
// columns are optional as pandas writes them ("" is written as null and
// reads back as ""); numbers that the model marks as possibly absent are
// pointers (nil is null).
type (
	docRow3x struct {
		ID              string   `parquet:"id,optional"`
		HumanReadableID *int64   `parquet:"human_readable_id,optional"`
		Title           string   `parquet:"title,optional"`
		Text            string   `parquet:"text,optional"`
		TextUnitIDs     []string `parquet:"text_unit_ids,optional,list" parquet-element:",optional"`
		CreationDate    string   `parquet:"creation_date,optional"`
		RawData         string   `parquet:"raw_data,optional"`
	}
	textUnitRow3x struct {
		ID              string   `parquet:"id,optional"`
		HumanReadableID *int64   `parquet:"human_readable_id,optional"`
		Text            string   `parquet:"text,optional"`
		NTokens         *int64   `parquet:"n_tokens,optional"`
		DocumentID      string   `parquet:"document_id,optional"`
		EntityIDs       []string `parquet:"entity_ids,optional,list" parquet-element:",optional"`
		RelationshipIDs []string `parquet:"relationship_ids,optional,list" parquet-element:",optional"`
		CovariateIDs    []string `parquet:"covariate_ids,optional,list" parquet-element:",optional"`
	}
	entityRow3x struct {
		ID              string   `parquet:"id,optional"`
		HumanReadableID *int64   `parquet:"human_readable_id,optional"`
		Title           string   `parquet:"title,optional"`
		Type            string   `parquet:"type,optional"`
		Description     string   `parquet:"description,optional"`
		TextUnitIDs     []string `parquet:"text_unit_ids,optional,list" parquet-element:",optional"`
		Frequency       *int64   `parquet:"frequency,optional"`
		Degree          *int64   `parquet:"degree,optional"`
	}
	relationshipRow3x struct {
		ID              string   `parquet:"id,optional"`
		HumanReadableID *int64   `parquet:"human_readable_id,optional"`
		Source          string   `parquet:"source,optional"`
		Target          string   `parquet:"target,optional"`
		Description     string   `parquet:"description,optional"`
		Weight          *float64 `parquet:"weight,optional"`
		CombinedDegree  *int64   `parquet:"combined_degree,optional"`
		TextUnitIDs     []string `parquet:"text_unit_ids,optional,list" parquet-element:",optional"`
	}
	communityRow3x struct {
		ID              string   `parquet:"id,optional"`
		HumanReadableID *int64   `parquet:"human_readable_id,optional"`
		Community       int64    `parquet:"community"`
		Level           int64    `parquet:"level"`
		Parent          int64    `parquet:"parent"`
		Children        []*int64 `parquet:"children,optional,list" parquet-element:",optional"`
		Title           string   `parquet:"title,optional"`
		EntityIDs       []string `parquet:"entity_ids,optional,list" parquet-element:",optional"`
		RelationshipIDs []string `parquet:"relationship_ids,optional,list" parquet-element:",optional"`
		TextUnitIDs     []string `parquet:"text_unit_ids,optional,list" parquet-element:",optional"`
		Period          string   `parquet:"period,optional"`
		Size            *int64   `parquet:"size,optional"`
	}
	findingRow3x struct {
		Explanation string `parquet:"explanation,optional"`
		Summary     string `parquet:"summary,optional"`
	}
	reportRow3x struct {
		ID                string          `parquet:"id,optional"`
		HumanReadableID   *int64          `parquet:"human_readable_id,optional"`
		Community         int64           `parquet:"community"`
		Level             int64           `parquet:"level"`
		Parent            int64           `parquet:"parent"`
		Children          []*int64        `parquet:"children,optional,list" parquet-element:",optional"`
		Title             string          `parquet:"title,optional"`
		Summary           string          `parquet:"summary,optional"`
		FullContent       string          `parquet:"full_content,optional"`
		Rank              *float64        `parquet:"rank,optional"`
		RatingExplanation string          `parquet:"rating_explanation,optional"`
		Findings          []*findingRow3x `parquet:"findings,optional,list" parquet-element:",optional"`
		FullContentJSON   string          `parquet:"full_content_json,optional"`
		Period            string          `parquet:"period,optional"`
		Size              *int64          `parquet:"size,optional"`
	}
	covariateRow3x struct {
		ID              string `parquet:"id,optional"`
		HumanReadableID *int64 `parquet:"human_readable_id,optional"`
		CovariateType   string `parquet:"covariate_type,optional"`
		Type            string `parquet:"type,optional"`
		Description     string `parquet:"description,optional"`
		SubjectID       string `parquet:"subject_id,optional"`
		ObjectID        string `parquet:"object_id,optional"`
		Status          string `parquet:"status,optional"`
		StartDate       string `parquet:"start_date,optional"`
		EndDate         string `parquet:"end_date,optional"`
		SourceText      string `parquet:"source_text,optional"`
		TextUnitID      string `parquet:"text_unit_id,optional"`
	}
)

// Write3x writes ds as GraphRAG 3.x parquet files (documents, text_units,
// entities, relationships, communities, community_reports and, when ds has
// any, covariates; else an old covariates.parquet is removed) into dir,
// creating it if needed.
//
// What 3.x cannot hold is dropped: placeholder entities (Open recreates them
// from the relationships), description embeddings, and all but the first
// document of a text unit. Ids that 3.x types as int64 (human_readable_id,
// community, parent, children) must be decimal or empty; anything else fails
// with an *Error wrapping ErrValue.
//
// Every file is written to a temporary file in dir and renamed into place
// only after all of them were written, so an error leaves no partial table
// behind (a failure during the final renames can leave a mix of old and new
// complete files).
func Write3x(ctx context.Context, dir string, ds *Dataset) (err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &Error{Op: "write", Path: dir, Row: -1, Err: err}
	}
	w := &writer3x{dir: dir, ds: ds}
	defer func() {
		if err != nil {
			for _, tmp := range w.temps {
				os.Remove(tmp.tmp)
			}
		}
	}()
	steps := []func(context.Context) error{
		w.documents, w.textUnits, w.entities, w.relationships, w.communities, w.reports,
	}
	if len(ds.Covariates) > 0 {
		steps = append(steps, w.covariates)
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	for _, tmp := range w.temps {
		if err := os.Rename(tmp.tmp, tmp.final); err != nil {
			return &Error{Op: "write", Path: tmp.final, Row: -1, Err: err}
		}
	}
	w.temps = nil
	if len(ds.Covariates) == 0 {
		// A covariates table left by an earlier write would be read back.
		stale := filepath.Join(dir, fileName(TableCovariates, false))
		if err := os.Remove(stale); err != nil && !errors.Is(err, os.ErrNotExist) {
			return &Error{Op: "write", Path: stale, Row: -1, Err: err}
		}
	}
	return nil
}

type tempFile struct{ tmp, final string }

type writer3x struct {
	dir   string
	ds    *Dataset
	temps []tempFile
}

// batchRows is how many rows are converted before each parquet write:
// enough to amortise the call, small enough to keep memory flat.
const batchRows = 4096

// batchBytes bounds a batch of wide rows. parquet-go starts a new page only
// between its writes of 64 rows, so 64 communities of thousands of ids each
// made one page of megabytes, which a reader reading in windows must hold
// whole; batches of about a page buffer (parquet-go's default, 256 KB) keep
// pages near that size, as pyarrow keeps its own near 1 MB.
const batchBytes = 256 << 10

// wideRow is a row type whose rows can be large (long id lists, long
// texts): writeTable cuts its batches by bytes too.
type wideRow interface{ approxBytes() int }

func (r *communityRow3x) approxBytes() int {
	return len(r.ID) + len(r.Title) + idsBytes(r.EntityIDs) + idsBytes(r.RelationshipIDs) + idsBytes(r.TextUnitIDs) + 8*len(r.Children)
}

func (r *reportRow3x) approxBytes() int {
	n := len(r.ID) + len(r.Title) + len(r.Summary) + len(r.FullContent) + len(r.RatingExplanation) + len(r.FullContentJSON)
	for _, f := range r.Findings {
		if f != nil {
			n += len(f.Explanation) + len(f.Summary)
		}
	}
	return n
}

func (r *textUnitRow3x) approxBytes() int {
	return len(r.ID) + len(r.Text) + idsBytes(r.EntityIDs) + idsBytes(r.RelationshipIDs) + idsBytes(r.CovariateIDs)
}

// idsBytes is about what a list of ids takes in a plain-encoded page: each
// value's bytes and its 4-byte length.
func idsBytes(ids []string) int {
	n := 4 * len(ids)
	for _, id := range ids {
		n += len(id)
	}
	return n
}

// writeTable writes n rows, converting row i with conv into a batch buffer.
func writeTable[T any](ctx context.Context, w *writer3x, name string, n int, conv func(i int, row *T) error) error {
	final := filepath.Join(w.dir, fileName(name, false))
	f, err := os.CreateTemp(w.dir, "."+name+".parquet.tmp-*")
	if err != nil {
		return &Error{Op: "write", Path: final, Row: -1, Err: err}
	}
	w.temps = append(w.temps, tempFile{tmp: f.Name(), final: final})
	fail := func(field string, row int64, err error) error {
		f.Close()
		return &Error{Op: "write", Path: final, Field: field, Row: row, Err: err}
	}
	pw := parquet.NewGenericWriter[T](f, parquet.Compression(&parquet.Snappy), parquet.CreatedBy("kgrag", "", ""))
	buf := make([]T, 0, min(n, batchRows))
	size := 0 // bytes of the wide rows in buf
	for i := 0; i < n; i++ {
		if len(buf) == cap(buf) || size >= batchBytes {
			if err := ctx.Err(); err != nil {
				return fail("", -1, err)
			}
			if _, err := pw.Write(buf); err != nil {
				return fail("", -1, err)
			}
			clear(buf)
			buf = buf[:0]
			size = 0
		}
		buf = buf[:len(buf)+1]
		row := &buf[len(buf)-1]
		if err := conv(i, row); err != nil {
			var e *Error
			if errors.As(err, &e) {
				e.Path, e.Row = final, int64(i)
				f.Close()
				return e
			}
			return fail("", int64(i), err)
		}
		if w, ok := any(row).(wideRow); ok {
			size += w.approxBytes()
		}
	}
	if len(buf) > 0 {
		if _, err := pw.Write(buf); err != nil {
			return fail("", -1, err)
		}
	}
	if err := pw.Close(); err != nil {
		return fail("", -1, err)
	}
	// CreateTemp makes the file private; a table is as readable as any file.
	if err := f.Chmod(0o644); err != nil {
		return fail("", -1, err)
	}
	if err := f.Sync(); err != nil {
		return fail("", -1, err)
	}
	if err := f.Close(); err != nil {
		return &Error{Op: "write", Path: final, Row: -1, Err: err}
	}
	return nil
}

// intField parses a decimal id for an int64 column; "" means null.
func intField(field, s string, scratch *int64) (*int64, error) {
	if s == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, &Error{Op: "write", Field: field, Err: fmt.Errorf("%w: %q is not an integer", ErrValue, s)}
	}
	*scratch = n
	return scratch, nil
}

// communityNumber parses a Leiden number; "" (a root's parent) is -1.
func communityNumber(field, s string) (int64, error) {
	if s == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, &Error{Op: "write", Field: field, Err: fmt.Errorf("%w: community %q is not an integer", ErrValue, s)}
	}
	return n, nil
}

func communityNumbers(field string, ss []string) ([]*int64, error) {
	if len(ss) == 0 {
		// An empty list, not null: GraphRAG's readers (to_list) refuse a
		// null children column.
		return []*int64{}, nil
	}
	nums := make([]int64, len(ss))
	out := make([]*int64, len(ss))
	for i, s := range ss {
		n, err := communityNumber(field, s)
		if err != nil {
			return nil, err
		}
		nums[i] = n
		out[i] = &nums[i]
	}
	return out, nil
}

func ptrIf[T any](ok bool, v *T) *T {
	if ok {
		return v
	}
	return nil
}

func (w *writer3x) documents(ctx context.Context) error {
	docs := w.ds.Documents
	hr := make([]int64, len(docs))
	return writeTable(ctx, w, TableDocuments, len(docs), func(i int, row *docRow3x) error {
		d := &docs[i]
		h, err := intField("human_readable_id", d.HumanReadableID, &hr[i])
		*row = docRow3x{ID: d.ID, HumanReadableID: h, Title: d.Title, Text: d.Text,
			TextUnitIDs: d.TextUnitIDs, CreationDate: d.CreationDate, RawData: d.Metadata}
		return err
	})
}

func (w *writer3x) textUnits(ctx context.Context) error {
	tus := w.ds.TextUnits
	hr := make([]int64, len(tus))
	return writeTable(ctx, w, TableTextUnits, len(tus), func(i int, row *textUnitRow3x) error {
		tu := &tus[i]
		h, err := intField("human_readable_id", tu.HumanReadableID, &hr[i])
		*row = textUnitRow3x{ID: tu.ID, HumanReadableID: h, Text: tu.Text,
			NTokens:   ptrIf(tu.HasNTokens, &tu.NTokens),
			EntityIDs: tu.EntityIDs, RelationshipIDs: tu.RelationshipIDs, CovariateIDs: tu.CovariateIDs}
		if len(tu.DocumentIDs) > 0 {
			row.DocumentID = tu.DocumentIDs[0]
		}
		return err
	})
}

func (w *writer3x) entities(ctx context.Context) error {
	var es []*Entity
	for i := range w.ds.Entities {
		if !w.ds.Entities[i].Placeholder {
			es = append(es, &w.ds.Entities[i])
		}
	}
	hr := make([]int64, len(es))
	return writeTable(ctx, w, TableEntities, len(es), func(i int, row *entityRow3x) error {
		e := es[i]
		h, err := intField("human_readable_id", e.HumanReadableID, &hr[i])
		*row = entityRow3x{ID: e.ID, HumanReadableID: h, Title: e.Title, Type: e.Type,
			Description: e.Description, TextUnitIDs: e.TextUnitIDs,
			Frequency: ptrIf(e.HasFrequency, &e.Frequency), Degree: ptrIf(e.HasDegree, &e.Degree)}
		return err
	})
}

func (w *writer3x) relationships(ctx context.Context) error {
	rs := w.ds.Relationships
	hr := make([]int64, len(rs))
	return writeTable(ctx, w, TableRelationships, len(rs), func(i int, row *relationshipRow3x) error {
		r := &rs[i]
		h, err := intField("human_readable_id", r.HumanReadableID, &hr[i])
		*row = relationshipRow3x{ID: r.ID, HumanReadableID: h, Source: r.Source, Target: r.Target,
			Description: r.Description, Weight: ptrIf(r.HasWeight, &r.Weight),
			CombinedDegree: ptrIf(r.HasRank, &r.Rank), TextUnitIDs: r.TextUnitIDs}
		return err
	})
}

func (w *writer3x) communities(ctx context.Context) error {
	cs := w.ds.Communities
	hr := make([]int64, len(cs))
	return writeTable(ctx, w, TableCommunities, len(cs), func(i int, row *communityRow3x) error {
		c := &cs[i]
		h, err := intField("human_readable_id", c.HumanReadableID, &hr[i])
		if err != nil {
			return err
		}
		*row = communityRow3x{ID: c.ID, HumanReadableID: h, Level: c.Level, Title: c.Title,
			EntityIDs: c.EntityIDs, RelationshipIDs: c.RelationshipIDs, TextUnitIDs: c.TextUnitIDs,
			Period: c.Period, Size: ptrIf(c.HasSize, &c.Size)}
		if row.Community, err = communityNumber("community", c.Community); err != nil {
			return err
		}
		if row.Parent, err = communityNumber("parent", c.Parent); err != nil {
			return err
		}
		row.Children, err = communityNumbers("children", c.Children)
		return err
	})
}

func (w *writer3x) reports(ctx context.Context) error {
	var cs []*Community
	for i := range w.ds.Communities {
		if w.ds.Communities[i].Report != nil {
			cs = append(cs, &w.ds.Communities[i])
		}
	}
	// GraphRAG writes the reports it summarised deepest level first, each
	// level by community number; its global search shuffles them from
	// that order.
	slices.SortStableFunc(cs, func(a, b *Community) int {
		if c := cmp.Compare(b.Level, a.Level); c != 0 {
			return c
		}
		return compareNumbers(a.Community, b.Community)
	})
	hr := make([]int64, len(cs))
	return writeTable(ctx, w, TableCommunityReports, len(cs), func(i int, row *reportRow3x) error {
		c := cs[i]
		r := c.Report
		h, err := intField("human_readable_id", r.HumanReadableID, &hr[i])
		if err != nil {
			return err
		}
		*row = reportRow3x{ID: r.ID, HumanReadableID: h, Level: r.Level, Title: r.Title,
			Summary: r.Summary, FullContent: r.FullContent, Rank: ptrIf(r.HasRank, &r.Rank),
			RatingExplanation: r.RankExplanation, FullContentJSON: r.FullContentJSON,
			Period: r.Period, Size: ptrIf(r.HasSize, &r.Size)}
		if len(r.Findings) > 0 {
			row.Findings = make([]*findingRow3x, len(r.Findings))
			for j, f := range r.Findings {
				row.Findings[j] = &findingRow3x{Explanation: f.Explanation, Summary: f.Summary}
			}
		}
		if row.Community, err = communityNumber("community", r.Community); err != nil {
			return err
		}
		if row.Parent, err = communityNumber("parent", c.Parent); err != nil {
			return err
		}
		row.Children, err = communityNumbers("children", c.Children)
		return err
	})
}

func (w *writer3x) covariates(ctx context.Context) error {
	cs := w.ds.Covariates
	hr := make([]int64, len(cs))
	return writeTable(ctx, w, TableCovariates, len(cs), func(i int, row *covariateRow3x) error {
		c := &cs[i]
		h, err := intField("human_readable_id", c.HumanReadableID, &hr[i])
		*row = covariateRow3x{ID: c.ID, HumanReadableID: h, CovariateType: c.CovariateType,
			Type: c.Type, Description: c.Description, SubjectID: c.SubjectID, ObjectID: c.ObjectID,
			Status: c.Status, StartDate: c.StartDate, EndDate: c.EndDate, SourceText: c.SourceText,
			TextUnitID: c.TextUnitID}
		return err
	})
}

// compareNumbers orders community numbers numerically where both are
// integers, else as text.
func compareNumbers(a, b string) int {
	x, errX := strconv.ParseInt(a, 10, 64)
	y, errY := strconv.ParseInt(b, 10, 64)
	if errX == nil && errY == nil {
		return cmp.Compare(x, y)
	}
	return cmp.Compare(a, b)
}
