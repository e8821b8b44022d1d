// Package pyrand reproduces the parts of CPython's random module that
// kgrag's global search needs: MT19937 seeded as random.seed(int) seeds
// it, getrandbits, random(), _randbelow and shuffle, each returning the
// very numbers CPython returns for the same seed.
//
// It exists for one reason: GraphRAG's global search shuffles the
// community reports with random.seed(86); random.shuffle(reports)
// (graphrag/query/context_builder/community_context.py,
// build_community_context) before packing them into map batches, and
// kgrag wants the same order, so that its batches are GraphRAG's report
// for report. math/rand cannot do that: its generators and its shuffle
// are different algorithms.
//
//	r := pyrand.New(86)
//	pyrand.Shuffle(r, reports) // same order as random.seed(86); random.shuffle(reports)
//
// A Rand is not safe for concurrent use; it is cheap (2.5 KB), so make one
// per shuffle. It is not for anything that needs unpredictable numbers.
package pyrand
