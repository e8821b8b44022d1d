// Package elastic keeps kgrag's entity vectors in Elasticsearch 8 (a
// dense_vector field searched with the top-level knn query) for users who
// run a cluster already or whose graphs outgrow a local file. It speaks
// to the node through the low-level go-elasticsearch client and its
// esutil.BulkIndexer.
//
//	cfg := elastic.Config{URL: "http://127.0.0.1:9200", Index: "kgrag-entities"}
//	err := elastic.Build(ctx, cfg, "nomic-embed-text", 0, ids, vecs)
//
//	idx, err := elastic.Open(ctx, cfg)
//	if err := embedindex.Check(idx.Info(), model, 0); err != nil { ... }
//	hits, err := idx.Search(ctx, queryVec, 10)
//
// Config.Index is an alias. Build loads a new concrete index named
// <alias>-<UTC time>-<random> (one shard, no replicas, full-float HNSW
// with cosine similarity, model and dimension in the mapping's _meta),
// refreshes it and checks its count, then moves the alias to it in one
// _aliases request and deletes the old index. Searches therefore see the
// old vectors or the new ones, never a mix or a half-loaded index, and a
// failed Build deletes what it made and leaves the old index serving.
//
// Search is approximate (HNSW): num_candidates defaults to
// max(100, 10*k), and on 2,000 random 48-dimensional vectors recall@10
// against exact cosine was 1.0. Scores are cosines in [-1, 1], as from
// embedindex/flat (Elasticsearch's (1+cos)/2 is mapped back).
//
// On a cluster, Config.URL lists several nodes and Config.Replicas gives
// each shard copies on other nodes. Stat (and so Open), Build over an
// existing alias and Update first read the index's health from the
// answering node's own view (Health, which never waits for a master):
// yellow serves, but red, or no elected master, fails with ErrUnavailable
// before anything is read or written, because the nodes left may still
// answer searches from a stale or partial view. A search that some shards
// failed is an ErrUnavailable error too, never fewer hits.
//
// Errors are *Error values naming the operation, the URL (without user
// info) and the alias, never an API key or password. Unreachable tells a
// node that did not answer (ErrUnreachable) or a cluster that cannot
// serve (ErrUnavailable), for the CLI's "store down" exit status;
// ErrNotFound matches a missing alias.
package elastic
