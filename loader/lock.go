package loader

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
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
// is in place. The requests are sparqlq's lock_* templates, which hold
// the vocabulary (urn:kgrag:graph, urn:kgrag:heartbeat,
// urn:kgrag:committed, urn:kgrag:temporaryGraphOf).
const (
	// LoadsGraph is the named graph holding kgrag's load locks.
	LoadsGraph = "urn:kgrag:loads"
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
	stop  context.CancelFunc
	wg    sync.WaitGroup
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
	now := time.Now().Unix()
	stale := now - int64(LockStale/time.Second)
	if s.breakLk {
		stale = now + 1 // every lock counts as abandoned
	}
	take, err := l.query("lock_take", sparqlq.Params{"stale": sparqlq.IntParam(stale), "now": sparqlq.IntParam(now)})
	if err != nil {
		return nil, err
	}
	if tmp != "" {
		name, err := l.query("lock_name_temp", nil)
		if err != nil {
			return nil, err
		}
		take += " ;\n" + name
	}
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
		others, ages, err = l.others(ctx, now, stale)
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
func (l *loadLock) others(ctx context.Context, now, stale int64) ([]string, []int64, error) {
	var others []string
	var ages []int64
	q, err := l.query("lock_live", sparqlq.Params{"stale": sparqlq.IntParam(stale)})
	if err != nil {
		return nil, nil, err
	}
	err = l.s.retry(ctx, "lock", func(ctx context.Context) error {
		res, err := l.s.c.Select(ctx, q)
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

// query binds the lock template name with the lock's own terms that it
// declares (loads: the locks' graph; graph; node: the lock; temp: its
// temporary graph) and extra.
func (l *loadLock) query(name string, extra sparqlq.Params) (string, error) {
	t, err := sparqlq.LoadTemplate(name)
	if err != nil {
		return "", err
	}
	own := map[string]sparqlq.Value{"loads": sparqlq.IRIParam(LoadsGraph), "graph": sparqlq.IRIParam(l.graph),
		"node": sparqlq.IRIParam(l.node), "temp": sparqlq.IRIParam(l.tmp)}
	p := sparqlq.Params{}
	for _, d := range t.Params() {
		if v, ok := own[d.Name]; ok {
			p[d.Name] = v
		}
	}
	maps.Copy(p, extra)
	text, err := t.Bind(p)
	return strings.TrimRight(text, "\n"), err
}

// clearLeftovers drops the temporary graphs of graph that earlier loads
// named and did not see gone (killed, or with a batch that landed after
// their clean-up), and their names. Only names are read: listing the
// store's graphs would scan every quad of a large store.
func (l *loadLock) clearLeftovers(ctx context.Context) error {
	var names []string
	q, err := l.query("lock_temps", nil)
	if err != nil {
		return err
	}
	err = l.s.retry(ctx, "leftovers", func(ctx context.Context) error {
		res, err := l.s.c.Select(ctx, q)
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
		u, err := l.query("lock_unname_temp", sparqlq.Params{"temp": sparqlq.IRIParam(tmp)})
		if err != nil {
			return err
		}
		if err := l.s.c.Update(ctx, u); err != nil {
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
	u, err := l.query("lock_unname_temp", nil)
	if err == nil {
		err = l.s.c.Update(cctx, u)
	}
	if err != nil {
		l.s.log.Warn("the temporary graph's name was not removed; the next load looks for it", "graph", l.graph, "err", err)
	}
}

// heartbeat refreshes the lock until stopped.
func (l *loadLock) heartbeat(ctx context.Context) {
	defer l.wg.Done()
	t := time.NewTicker(LockStale / 6)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		beat, err := l.query("lock_beat", sparqlq.Params{"now": sparqlq.IntParam(time.Now().Unix())})
		if err == nil {
			err = l.s.c.Update(ctx, beat)
		}
		if err != nil && ctx.Err() == nil {
			l.s.log.Warn("lock heartbeat failed", "graph", l.graph, "err", err)
		}
	}
}

// commitMark is the update that records, inside the commit's own update,
// that this load's graph was swapped in.
func (l *loadLock) commitMark() (string, error) { return l.query("lock_mark_committed", nil) }

// committed asks whether the commit mark is there.
func (l *loadLock) committed(ctx context.Context) (bool, error) {
	q, err := l.query("lock_committed", nil)
	if err != nil {
		return false, err
	}
	return l.s.c.Ask(ctx, q)
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
	u, err := l.query("lock_remove", nil)
	if err == nil {
		err = l.s.c.Update(cctx, u)
	}
	if err != nil {
		l.s.log.Warn("lock not removed; it counts as abandoned after LockStale", "graph", l.graph, "err", err)
	}
}
