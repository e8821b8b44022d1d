package retrieval

import (
	"context"
	"fmt"
	"strconv"

	"github.com/kgrag/kgrag/sparqlq"
)

var _ SeedBackend = (*SeedSPARQLBackend)(nil)

// SeedSPARQLBackend answers SeedBackend lookups from a GraphRAG graph in
// the gr: ontology held by a SPARQL store (as `kgrag load` writes it),
// with sparqlq's retrieval templates: one query per lookup whatever the
// number of ids, four per question. It is safe for concurrent use.
// Errors are sparqlq's (*sparqlq.StatusError for a non-2xx answer),
// wrapped.
type SeedSPARQLBackend struct {
	c     *sparqlq.Client
	graph string
}

// NewSeedSPARQLBackend reads from graph (an IRI; "" reads the store's
// default graph) through c.
func NewSeedSPARQLBackend(c *sparqlq.Client, graph string) *SeedSPARQLBackend {
	return &SeedSPARQLBackend{c: c, graph: graph}
}

func seedErr(what string, err error) error {
	return fmt.Errorf("retrieval: seed %s: %w", what, err)
}

// convert maps rows to records.
func convert[R, T any](rows []R, f func(R) T) []T {
	var out []T
	for _, r := range rows {
		out = append(out, f(r))
	}
	return out
}

// SeedEntities implements SeedBackend (template entities).
func (b *SeedSPARQLBackend) SeedEntities(ctx context.Context, ids []string) ([]EntityRecord, error) {
	rows, err := sparqlq.Entities(ctx, b.c, b.graph, uniqueIDs(ids))
	if err != nil {
		return nil, seedErr("entities", err)
	}
	return convert(rows, func(r sparqlq.EntityRow) EntityRecord {
		return EntityRecord{ID: r.HumanReadableID, EntityID: r.ID, Title: r.Title, Description: r.Description, Rank: r.Degree}
	}), nil
}

// SeedRelationships implements SeedBackend (template relationships, which
// returns every relationship of the entities; the limit is applied here).
func (b *SeedSPARQLBackend) SeedRelationships(ctx context.Context, ids []string, limit int) (inside, outside []RelationshipRecord, err error) {
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

// SeedChunks implements SeedBackend (template text_units).
func (b *SeedSPARQLBackend) SeedChunks(ctx context.Context, ids []string, limit int) ([]SeedChunk, error) {
	rows, err := sparqlq.TextUnits(ctx, b.c, b.graph, uniqueIDs(ids), max(limit, 0))
	if err != nil {
		return nil, seedErr("chunks", err)
	}
	return convert(rows, func(r sparqlq.TextUnitRow) SeedChunk {
		return SeedChunk{TextUnitRecord{ID: r.HumanReadableID, TextUnitID: r.ID, Text: r.Text, NTokens: r.NTokens},
			r.SelectedEntities}
	}), nil
}

// SeedCommunities implements SeedBackend (template communities).
func (b *SeedSPARQLBackend) SeedCommunities(ctx context.Context, ids []string, level int64, limit int) ([]SeedCommunity, error) {
	if err := checkLevel(level); err != nil {
		return nil, err
	}
	rows, err := sparqlq.Communities(ctx, b.c, b.graph, uniqueIDs(ids), int(level), max(limit, 0))
	if err != nil {
		return nil, seedErr("communities", err)
	}
	return convert(rows, func(r sparqlq.CommunityRow) SeedCommunity {
		return SeedCommunity{
			ReportRecord: ReportRecord{ID: strconv.FormatInt(r.Community, 10), CommunityID: r.ID, Level: r.Level,
				Title: r.Title, Summary: r.Summary, FullContent: r.FullContent, Rank: r.Rank, Weight: r.Weight},
			HumanReadableID: r.HumanReadableID, SelectedEntities: r.SelectedEntities,
		}
	}), nil
}

// SubgraphRelationships implements SubgraphBackend (template
// subgraph_relationships).
func (b *SeedSPARQLBackend) SubgraphRelationships(ctx context.Context, ids []string) ([]SubgraphEdge, error) {
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
