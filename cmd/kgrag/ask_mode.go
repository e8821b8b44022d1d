package main

import (
	"context"

	"github.com/kgrag/kgrag/internal/retrieval"
)

// mode is one way of building the context from the entities nearest the
// question.
type mode interface {
	// neighbours is how many kNN hits to ask the index for.
	neighbours() int
	// build builds the context of the entity ids, nearest first.
	build(ctx context.Context, ids []string) (*contextJSON, error)
}

// newMode returns the builder of opts.mode over src, with the back end that
// fits src (memory or SPARQL).
func newMode(opts askOptions, src source) (mode, error) {
	if opts.mode == modeSeed {
		var b retrieval.SeedBackend
		if src.ds != nil {
			b = retrieval.NewSeedMemoryBackend(src.ds)
		} else {
			b = retrieval.NewSeedSPARQLBackend(src.c, src.graph)
		}
		sb, err := retrieval.NewSeedBuilder(b, opts.seed, nil)
		if err != nil {
			return nil, err
		}
		return seedMode{sb, opts.params.TopKEntities}, nil
	}
	var b retrieval.Backend
	if src.ds != nil {
		b = retrieval.NewMemoryBackend(src.ds)
	} else {
		b = retrieval.NewSPARQLBackend(src.c, src.graph)
	}
	lb, err := retrieval.NewBuilder(b, opts.params)
	if err != nil {
		return nil, err
	}
	return localMode{lb, opts.params}, nil
}

// seedParams are seed mode's parameters from the flags local search shares
// with it. The community level is the seed's own default (0, the root
// level, where every entity has a community) unless the flag was given.
func seedParams(p retrieval.Params, levelSet bool) retrieval.SeedParams {
	s := retrieval.DefaultSeedParams()
	if levelSet {
		s.CommunityLevel = p.CommunityLevel
	}
	s.MaxContextTokens = p.MaxContextTokens
	s.TopInside, s.TopOutside = p.TopKRelationships, p.TopKRelationships
	return s
}

type localMode struct {
	b *retrieval.Builder
	p retrieval.Params
}

// neighbours: as GraphRAG's map_query_to_entities, ask for more than are
// kept, since some may be unknown to the graph.
func (m localMode) neighbours() int { return m.p.TopKEntities * m.p.OversampleScaler }

func (m localMode) build(ctx context.Context, ids []string) (*contextJSON, error) {
	c, err := m.b.LocalContext(ctx, ids)
	if err != nil {
		return nil, err
	}
	return contextRecords(c), nil
}

type seedMode struct {
	b *retrieval.SeedBuilder
	k int
}

// neighbours: the seed takes the k nearest entities as they come.
func (m seedMode) neighbours() int { return m.k }

func (m seedMode) build(ctx context.Context, ids []string) (*contextJSON, error) {
	r, err := m.b.SeedContext(ctx, ids)
	if err != nil {
		return nil, err
	}
	return seedRecords(r), nil
}
