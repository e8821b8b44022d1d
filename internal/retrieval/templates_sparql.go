package retrieval

import (
	"context"
	"fmt"
	"strconv"

	"github.com/kgrag/kgrag/sparqlq"
)

var _ TemplatesBackend = (*TemplatesSPARQLBackend)(nil)

// TemplatesSPARQLBackend answers TemplatesBackend lookups from a GraphRAG graph in
// the gr: ontology held by a SPARQL store (as `kgrag load` writes it),
// with sparqlq's retrieval templates: one query per lookup whatever the
// number of ids, four per question. It is safe for concurrent use.
// Errors are sparqlq's (*sparqlq.StatusError for a non-2xx answer),
// wrapped.
type TemplatesSPARQLBackend struct {
	c     *sparqlq.Client
	graph string
}

// NewTemplatesSPARQLBackend reads from graph (an IRI; "" reads the store's
// default graph) through c.
func NewTemplatesSPARQLBackend(c *sparqlq.Client, graph string) *TemplatesSPARQLBackend {
	return &TemplatesSPARQLBackend{c: c, graph: graph}
}

func seedErr(what string, err error) error {
	return fmt.Errorf("retrieval: sparql-templates %s: %w", what, err)
}

// convert maps rows to records.
func convert[R, T any](rows []R, f func(R) T) []T {
	var out []T
	for _, r := range rows {
		out = append(out, f(r))
	}
	return out
}

// TemplateEntities implements TemplatesBackend (template entities).
func (b *TemplatesSPARQLBackend) TemplateEntities(ctx context.Context, ids []string) ([]EntityRecord, error) {
	rows, err := sparqlq.Entities(ctx, b.c, b.graph, uniqueIDs(ids))
	if err != nil {
		return nil, seedErr("entities", err)
	}
	return convert(rows, func(r sparqlq.EntityRow) EntityRecord {
		return EntityRecord{ID: r.HumanReadableID, EntityID: r.ID, Title: r.Title, Description: r.Description, Rank: r.Degree}
	}), nil
}

// TemplateRelationships implements TemplatesBackend (template relationships, which
// returns every relationship of the entities; the limit is applied here).
func (b *TemplatesSPARQLBackend) TemplateRelationships(ctx context.Context, ids []string, limit int) (inside, outside []RelationshipRecord, err error) {
	in, out, err := sparqlq.Relationships(ctx, b.c, b.graph, uniqueIDs(ids))
	if err != nil {
		return nil, nil, seedErr("relationships", err)
	}
	rec := func(r sparqlq.RelationshipRow) RelationshipRecord {
		return RelationshipRecord{ID: r.HumanReadableID, RelationshipID: r.ID,
			Source: r.SourceTitle, Target: r.TargetTitle, SourceID: r.SourceID, TargetID: r.TargetID,
			Description: r.Description, Weight: r.Weight, Rank: r.Rank, Inside: r.Inside}
	}
	return convert(truncate(in, limit), rec), convert(truncate(out, limit), rec), nil
}

// TemplateChunks implements TemplatesBackend (template text_units).
func (b *TemplatesSPARQLBackend) TemplateChunks(ctx context.Context, ids []string, limit int) ([]TemplateChunk, error) {
	rows, err := sparqlq.TextUnits(ctx, b.c, b.graph, uniqueIDs(ids), max(limit, 0))
	if err != nil {
		return nil, seedErr("chunks", err)
	}
	return convert(rows, func(r sparqlq.TextUnitRow) TemplateChunk {
		return TemplateChunk{TextUnitRecord{ID: r.HumanReadableID, TextUnitID: r.ID, Text: r.Text, NTokens: r.NTokens},
			r.SelectedEntities}
	}), nil
}

// TemplateCommunities implements TemplatesBackend (template communities).
func (b *TemplatesSPARQLBackend) TemplateCommunities(ctx context.Context, ids []string, level int64, limit int) ([]TemplateCommunity, error) {
	if err := checkLevel(level); err != nil {
		return nil, err
	}
	rows, err := sparqlq.Communities(ctx, b.c, b.graph, uniqueIDs(ids), int(level), max(limit, 0))
	if err != nil {
		return nil, seedErr("communities", err)
	}
	return convert(rows, func(r sparqlq.CommunityRow) TemplateCommunity {
		return TemplateCommunity{
			ReportRecord: ReportRecord{ID: strconv.FormatInt(r.Community, 10), CommunityID: r.ID, Level: r.Level,
				Title: r.Title, Summary: r.Summary, FullContent: r.FullContent, Rank: r.Rank, Weight: r.Weight},
			HumanReadableID: r.HumanReadableID, SelectedEntities: r.SelectedEntities,
		}
	}), nil
}

// SubgraphRelationships implements SubgraphBackend (template
// subgraph_relationships).
func (b *TemplatesSPARQLBackend) SubgraphRelationships(ctx context.Context, ids []string) ([]SubgraphEdge, error) {
	ids = uniqueIDs(ids)
	if len(ids) == 0 {
		return nil, ctx.Err()
	}
	var out []SubgraphEdge
	err := sparqlq.SelectRows(ctx, b.c, "subgraph_relationships", b.graph, sparqlq.Params{"ids": sparqlq.StringsParam(ids)},
		func(r *sparqlq.Row) error {
			out = append(out, SubgraphEdge{
				RelationshipRecord: RelationshipRecord{
					ID: canonicalHRID(r.Str("human_readable_id")), RelationshipID: r.Str("id"),
					Source: r.Str("source_title"), Target: r.Str("target_title"),
					SourceID: r.Str("source_id"), TargetID: r.Str("target_id"),
					Description: r.Str("description"), Weight: r.Float("weight"), HasWeight: r.Has("weight"),
				},
				SourceHRID: canonicalHRID(r.Str("source_hrid")), TargetHRID: canonicalHRID(r.Str("target_hrid")),
			})
			return r.Err()
		})
	if err != nil {
		return nil, fmt.Errorf("retrieval: subgraph relationships: %w", err)
	}
	return out, nil
}
