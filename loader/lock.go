package loader

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kgrag/kgrag/sparqlq"
)

// Loads of one graph are serialised by a lock recorded in the store itself,
// so that it holds across processes and machines: two loads into one graph
// at once would otherwise both succeed and leave a mix (each swap drops and
// moves, and batches of one land in the other's temporary graph).
//
// Each load writes into LoadsGraph a node of its own, naming the graph it
// loads and when it last showed it is alive:
//
//	<urn:kgrag:load:ID> <urn:kgrag:graph> <G> ; <urn:kgrag:heartbeat> 1733050000 .
//
// and names the temporary graph it will fill (<tmp> <urn:kgrag:temporaryGraphOf> <G>),
// then reads back every live lock of G. It goes on only when its own is the
// only one, and otherwise takes its own away and fails. Whatever order two
// loads' writes and reads come in, at most one sees itself alone: a load's
// read comes after its write, so the second writer's read sees the first's
// lock. Both may fail, never both go on. A lock whose heartbeat is older
// than LockStale (a killed load) is removed by the next load, which then
// also drops the temporary graphs named for G but its own, and their
// names: only a lock holder makes them, and a load removes its own name
// only once its temporary graph is gone.
//
// The commit writes a mark beside the lock in the same update, so that an
// interrupted swap can be told apart: the mark there means the new graph
// is in place.
const (
	// LoadsGraph is the named graph holding kgrag's load locks.
	LoadsGraph = "urn:kgrag:loads"
	loadsRef   = "<" + LoadsGraph + ">"
	lockGraph  = "urn:kgrag:graph"
	lockBeat   = "urn:kgrag:heartbeat"
	lockDone   = "urn:kgrag:committed"
	lockTmpOf  = "urn:kgrag:temporaryGraphOf" // <tmp> lockTmpOf <G>: a temporary graph a load made
	lockPrefix = "urn:kgrag:load:"
)

// LockStale is how old a lock's heartbeat may get before another load takes
// the lock as abandoned; a running load refreshes it every LockStale/6.
const LockStale = 2 * time.Minute

// ErrLocked is the cause when another load of the same graph is running.
var ErrLocked = errors.New("another load of this graph is running")

// loadLock is a lock held on one graph.
type loadLock struct {
	s     *SPARQLStore
	graph string
	tmp   string // the temporary graph the load fills; "" in place
	node  string // urn:kgrag:load:ID
	// graphRef and nodeRef are graph and node as SPARQL IRI terms.
	graphRef, nodeRef string
	stop              context.CancelFunc
	wg                sync.WaitGroup
	// Leftovers lists the temporary graphs of earlier loads that were
	// dropped when the lock was taken.
	leftovers []string
}

// lockIfAble takes the load lock of graph when the store can hold one (it
// has SPARQL Update and a query endpoint); it returns nil otherwise, and
// release and commitMark accept nil.
func (s *SPARQLStore) lockIfAble(ctx context.Context, graph, tmp string) (*loadLock, error) {
	if !s.p.Caps.Update || s.p.QueryURL == "" {
		return nil, nil
	}
	return s.lock(ctx, graph, tmp)
}

// lock takes the load lock of graph, or fails with ErrLocked naming the
// other load. It drops stale locks and, once it holds the lock, the
// temporary graphs earlier loads left behind.
func (s *SPARQLStore) lock(ctx context.Context, graph, tmp string) (*loadLock, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	l := &loadLock{s: s, graph: graph, tmp: tmp, node: lockPrefix + hex.EncodeToString(b[:])}
	g, err := sparqlq.IRIRef(graph)
	if err != nil {
		return nil, err
	}
	l.graphRef, l.nodeRef = g, "<"+l.node+">" // the node is lockPrefix and hex digits
	node, lg := l.nodeRef, loadsRef
	now := time.Now().Unix()
	stale := now - int64(LockStale/time.Second)
	if s.breakLk {
		stale = now + 1 // every lock counts as abandoned
	}
	take := "DELETE { GRAPH " + lg + " { ?l ?p ?o } } WHERE { GRAPH " + lg + " { ?l <" + lockGraph + "> " + g +
		" ; <" + lockBeat + "> ?t ; ?p ?o FILTER (?t < " + strconv.FormatInt(stale, 10) + ") } } ;\n" +
		"INSERT DATA { GRAPH " + lg + " { " + node + " <" + lockGraph + "> " + g + " ; <" + lockBeat + "> " +
		strconv.FormatInt(now, 10) + " . " + l.tmpRecord() + " } }"
	if err := s.retry(ctx, "lock", func(ctx context.Context) error { return s.c.Update(ctx, take) }); err != nil {
		return nil, s.opError("lock graph", s.p.UpdateURL, graph, err, "")
	}
	// Two loads that start together see each other's locks. The one with
	// the larger id gives way at once; the other waits a moment for it to
	// go, and goes on only once it is alone: a load never goes on while it
	// sees another lock, so at most one goes on whatever the timing.
	var others []string
	var ages []int64
	deadline := time.Now().Add(lockGrace)
	for {
		others, ages, err = l.others(ctx, g, lg, now, stale)
		if err != nil {
			l.giveUp(ctx)
			return nil, s.opError("lock graph", s.p.QueryURL, graph, err, "")
		}
		if len(others) == 0 {
			break
		}
		smallest := !slices.ContainsFunc(others, func(o string) bool { return lockPrefix+o < l.node })
		if !smallest || time.Now().After(deadline) {
			l.giveUp(ctx)
			return nil, &Error{Op: "lock graph", URL: s.p.UpdateURL, Graph: graph,
				Err: fmt.Errorf("%w (load %s, seen %ds ago)", ErrLocked, others[0], ages[0]),
				Hint: fmt.Sprintf("wait for it to finish and load again; a load that was killed leaves its lock in graph <%s>, which counts as abandoned %s after it was last refreshed",
					LoadsGraph, LockStale)}
		}
		select {
		case <-ctx.Done():
			l.giveUp(ctx)
			return nil, s.opError("lock graph", s.p.QueryURL, graph, ctx.Err(), "")
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err := l.clearLeftovers(ctx); err != nil {
		l.giveUp(ctx)
		return nil, err
	}
	hctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	l.stop = stop
	l.wg.Add(1)
	go l.heartbeat(hctx)
	return l, nil
}

// lockGrace is how long a load whose lock has the smallest id waits for
// the others it sees to give way.
const lockGrace = 2 * time.Second

// others lists the live locks of the graph other than l's, with their ages
// in seconds.
func (l *loadLock) others(ctx context.Context, g, lg string, now, stale int64) ([]string, []int64, error) {
	var others []string
	var ages []int64
	err := l.s.retry(ctx, "lock", func(ctx context.Context) error {
		res, err := l.s.c.Select(ctx, "SELECT ?l ?t WHERE { GRAPH "+lg+" { ?l <"+lockGraph+"> "+g+" ; <"+lockBeat+"> ?t "+
			"FILTER (?t >= "+strconv.FormatInt(stale, 10)+") } }")
		if err != nil {
			return err
		}
		others, ages = others[:0], ages[:0]
		for _, row := range res.Bindings {
			if row["l"].Value == l.node {
				continue
			}
			others = append(others, strings.TrimPrefix(row["l"].Value, lockPrefix))
			t, _ := strconv.ParseInt(row["t"].Value, 10, 64)
			ages = append(ages, max(0, now-t))
		}
		return nil
	})
	return others, ages, err
}

// tmpRecord is the triple naming l's temporary graph, or "".
func (l *loadLock) tmpRecord() string {
	if l.tmp == "" {
		return ""
	}
	t, _ := sparqlq.IRIRef(l.tmp)
	g := l.graphRef
	return t + " <" + lockTmpOf + "> " + g + " ."
}

// clearLeftovers drops the temporary graphs of graph that earlier loads
// named and did not see gone (killed, or with a batch that landed after
// their clean-up), and their names. Only names are read: listing the
// store's graphs would scan every quad of a large store.
func (l *loadLock) clearLeftovers(ctx context.Context) error {
	g := l.graphRef
	lg := loadsRef
	var names []string
	err := l.s.retry(ctx, "leftovers", func(ctx context.Context) error {
		res, err := l.s.c.Select(ctx, "SELECT ?tmp WHERE { GRAPH "+lg+" { ?tmp <"+lockTmpOf+"> "+g+" } }")
		if err != nil {
			return err
		}
		names = names[:0]
		for _, row := range res.Bindings {
			if v := row["tmp"].Value; v != "" && v != l.tmp {
				names = append(names, v)
			}
		}
		return nil
	})
	if err != nil {
		return l.s.opError("find leftover temporary graphs", l.s.p.QueryURL, l.graph, err, "")
	}
	var dropped []string
	for _, tmp := range names {
		if err := l.s.Drop(ctx, tmp); err != nil {
			return err
		}
		t, _ := sparqlq.IRIRef(tmp)
		if err := l.s.c.Update(ctx, "DELETE DATA { GRAPH "+lg+" { "+t+" <"+lockTmpOf+"> "+g+" } }"); err != nil {
			return l.s.opError("find leftover temporary graphs", l.s.p.UpdateURL, l.graph, err, "")
		}
		dropped = append(dropped, tmp)
	}
	if len(dropped) > 0 {
		l.s.log.Info("dropped temporary graphs left by earlier loads", "graph", l.graph, "n", len(dropped))
		if l.s.onLeft != nil {
			l.s.onLeft(dropped)
		}
	}
	l.leftovers = dropped
	return nil
}

// tmpGone records that l's temporary graph is gone (moved in, or dropped
// and seen empty), so that no later load looks for it.
func (l *loadLock) tmpGone(ctx context.Context) {
	if l == nil || l.tmp == "" {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	lg := loadsRef
	if err := l.s.c.Update(cctx, "DELETE DATA { GRAPH "+lg+" { "+l.tmpRecord()+" } }"); err != nil {
		l.s.log.Warn("the temporary graph's name was not removed; the next load looks for it", "graph", l.graph, "err", err)
	}
}

// heartbeat refreshes the lock until stopped.
func (l *loadLock) heartbeat(ctx context.Context) {
	defer l.wg.Done()
	node := l.nodeRef
	lg := loadsRef
	t := time.NewTicker(LockStale / 6)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		beat := "DELETE { GRAPH " + lg + " { " + node + " <" + lockBeat + "> ?t } } WHERE { GRAPH " + lg + " { " + node + " <" + lockBeat + "> ?t } } ;\n" +
			"INSERT DATA { GRAPH " + lg + " { " + node + " <" + lockBeat + "> " + strconv.FormatInt(time.Now().Unix(), 10) + " } }"
		if err := l.s.c.Update(ctx, beat); err != nil && ctx.Err() == nil {
			l.s.log.Warn("lock heartbeat failed", "graph", l.graph, "err", err)
		}
	}
}

// commitMark is the update that records, inside the commit's own update,
// that this load's graph was swapped in.
func (l *loadLock) commitMark() string {
	node := l.nodeRef
	lg := loadsRef
	g := l.graphRef
	return "INSERT DATA { GRAPH " + lg + " { " + node + " <" + lockDone + "> " + g + " } }"
}

// committed asks whether the commit mark is there.
func (l *loadLock) committed(ctx context.Context) (bool, error) {
	node := l.nodeRef
	lg := loadsRef
	g := l.graphRef
	return l.s.c.Ask(ctx, "ASK { GRAPH "+lg+" { "+node+" <"+lockDone+"> "+g+" } }")
}

// release stops the heartbeat and removes the lock (with a clean-up
// deadline of its own, so that it runs after ctx ended).
func (l *loadLock) release(ctx context.Context) {
	if l == nil {
		return
	}
	if l.stop != nil {
		l.stop()
		l.wg.Wait()
	}
	l.remove(ctx)
}

// giveUp takes away a lock that was not won, and the name of the
// temporary graph it had not made yet.
func (l *loadLock) giveUp(ctx context.Context) {
	l.remove(ctx)
	l.tmpGone(ctx)
}

func (l *loadLock) remove(ctx context.Context) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	node := l.nodeRef
	lg := loadsRef
	if err := l.s.c.Update(cctx, "DELETE WHERE { GRAPH "+lg+" { "+node+" ?p ?o } }"); err != nil {
		l.s.log.Warn("lock not removed; it counts as abandoned after LockStale", "graph", l.graph, "err", err)
	}
}
