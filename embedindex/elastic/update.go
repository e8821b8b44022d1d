package elastic

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"

	"github.com/elastic/go-elasticsearch/v8/esapi"
)

// UpdateStats says what Update did.
type UpdateStats struct {
	// Upserted counts the documents written (new ids and changed
	// vectors), Deleted those removed, Unchanged those left as they were.
	Upserted, Deleted, Unchanged int
	// Rebuilt says the alias was rebuilt with Build instead, and Reason
	// why.
	Rebuilt bool
	Reason  string
}

// Update makes the alias hold exactly ids and their vectors. When it
// points at one index Build made (of the same model and dimension, with
// its documents keyed by id) and the change, documents to write plus
// documents to delete, is at most maxShare of that index, it changes the
// index in place: one bulk request stream of upserts and deletes, then a
// refresh, so searches may see the change half done for that moment.
// Otherwise it rebuilds with Build, which swaps the alias atomically.
// Unchanged vectors are told by a hash kept beside each vector.
func Update(ctx context.Context, cfg Config, model string, dim int, ids []string, vecs [][]float32, maxShare float64) (UpdateStats, error) {
	es, err := newClient(cfg)
	if err != nil {
		return UpdateStats{}, err
	}
	c := &conn{cfg: cfg, es: es}
	if dim, err = c.check("update", dim, ids, vecs); err != nil {
		return UpdateStats{}, err
	}
	rebuild := func(reason string) (UpdateStats, error) {
		if err := c.build(ctx, model, dim, ids, vecs); err != nil {
			return UpdateStats{}, err
		}
		return UpdateStats{Upserted: len(ids), Rebuilt: true, Reason: reason}, nil
	}
	targets, err := c.aliasTargets(ctx)
	if err != nil {
		return UpdateStats{}, err
	}
	if len(targets) != 1 {
		return rebuild(fmt.Sprintf("the alias points at %d indices", len(targets)))
	}
	index := targets[0]
	if err := checkServing(ctx, c); err != nil {
		return UpdateStats{}, err
	}
	var mapping map[string]struct {
		Mappings struct {
			Meta meta `json:"_meta"`
		} `json:"mappings"`
	}
	if err := c.do(ctx, "read mapping of", esapi.IndicesGetMappingRequest{Index: []string{index}}, &mapping); err != nil {
		return UpdateStats{}, err
	}
	m := mapping[index].Mappings.Meta
	switch {
	case m.Builder != builderName || m.Layout < layout:
		return rebuild("the index was built by an older kgrag, without document ids")
	case m.Model != model || m.Dim != dim:
		return rebuild(fmt.Sprintf("the index holds %s vectors of dimension %d, not %s of %d", m.Model, m.Dim, model, dim))
	}
	have, err := c.hashes(ctx, index)
	if err != nil {
		return UpdateStats{}, err
	}
	var st UpdateStats
	var upIDs []string
	var upVecs [][]float32
	want := make(map[string]bool, len(ids))
	for i, id := range ids {
		want[id] = true
		if h, ok := have[id]; ok && h == vectorHash(vecs[i]) {
			st.Unchanged++
			continue
		}
		upIDs, upVecs = append(upIDs, id), append(upVecs, vecs[i])
	}
	var del []string
	for id := range have {
		if !want[id] {
			del = append(del, id)
		}
	}
	if change := len(upIDs) + len(del); float64(change) > maxShare*float64(max(len(have), 1)) {
		return rebuild(fmt.Sprintf("%d of %d documents change, more than %.0f%%", change, len(have), maxShare*100))
	}
	if err := c.bulk(ctx, index, upIDs, upVecs, del); err != nil {
		return UpdateStats{}, err
	}
	if err := c.do(ctx, "refresh index "+index+" of", esapi.IndicesRefreshRequest{Index: []string{index}}, nil); err != nil {
		return UpdateStats{}, err
	}
	var count struct {
		Count int `json:"count"`
	}
	if err := c.do(ctx, "count index "+index+" of", esapi.CountRequest{Index: []string{index}}, &count); err != nil {
		return UpdateStats{}, err
	}
	if count.Count != len(ids) {
		return UpdateStats{}, c.errorf("update", "index %s holds %d documents after the update; want %d", index, count.Count, len(ids))
	}
	st.Upserted, st.Deleted = len(upIDs), len(del)
	return st, nil
}

// hashes reads every document's id and vector hash, in pages ordered by
// id (search_after), without the vectors.
func (c *conn) hashes(ctx context.Context, index string) (map[string]string, error) {
	out := map[string]string{}
	var after []any
	for {
		q := map[string]any{"size": 5000, "_source": []string{"id", "vhash"}, "sort": []any{map[string]any{"id": "asc"}},
			"query": map[string]any{"match_all": map[string]any{}}}
		if after != nil {
			q["search_after"] = after
		}
		body, _ := json.Marshal(q)
		var res struct {
			Hits struct {
				Hits []struct {
					Source struct {
						ID   string `json:"id"`
						Hash string `json:"vhash"`
					} `json:"_source"`
					Sort []any `json:"sort"`
				} `json:"hits"`
			} `json:"hits"`
		}
		if err := c.do(ctx, "read the documents of", esapi.SearchRequest{Index: []string{index}, Body: bytes.NewReader(body)}, &res); err != nil {
			return nil, err
		}
		hits := res.Hits.Hits
		for _, h := range hits {
			out[h.Source.ID] = h.Source.Hash
		}
		if len(hits) < 5000 {
			return out, nil
		}
		after = hits[len(hits)-1].Sort
	}
}

// vectorHash identifies a vector: the first 16 bytes of the SHA-256 of its
// float32s, little-endian.
func vectorHash(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}
