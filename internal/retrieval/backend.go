package retrieval

import "context"

// Backend is the store local search reads from: a few batched lookups, each
// taking every id at once so that a remote store answers in one round trip
// per lookup. Implementations return records in a stable order (documented
// per method); an id that matches nothing is no error, it is left out.
// Lookups are read-only and idempotent, and a Builder runs several at once:
// implementations must be safe for concurrent use.
type Backend interface {
	// Entities returns the entities with the given ids, in the order of
	// ids, skipping unknown ids and duplicates.
	Entities(ctx context.Context, ids []string) ([]EntityRecord, error)
	// Relationships returns every relationship with at least one end among
	// entityIDs, ordered by human_readable_id (GraphRAG's row order).
	Relationships(ctx context.Context, entityIDs []string) ([]RelationshipRecord, error)
	// TextUnits returns the text units with the given ids, in the order of
	// ids, skipping unknown ids and duplicates.
	TextUnits(ctx context.Context, ids []string) ([]TextUnitRecord, error)
	// Reports returns the community reports of every community at a level
	// up to maxLevel that has at least one member among entityIDs, with
	// Members and Deepest filled, ordered by community number.
	Reports(ctx context.Context, entityIDs []string, maxLevel int64) ([]ReportRecord, error)
}
