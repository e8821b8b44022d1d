package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// storeLoad is one load of the synthetic set into a store.
type storeLoad struct {
	Store     string   `json:"store"`
	Loader    string   `json:"loader"`
	Wall      num      `json:"wall_s"`
	TriplesPS num      `json:"triples_per_s"`
	Reported  num      `json:"triples_reported"` // what the loader printed
	InStore   num      `json:"triples_in_store"` // SPARQL COUNT afterwards
	RSSMB     num      `json:"peak_rss_mb"`      // the loading process's
	RSSNote   string   `json:"rss_note,omitempty"`
	StoreMem  storeMem `json:"store_peak_rss"` // the server's, where it runs during the load
	Note      string   `json:"note,omitempty"` // why it did not run
}

// ran reports whether the load ran and succeeded.
func (l storeLoad) ran() bool { return l.Note == "" }

// cells are the row's cells after store and loader.
func (l storeLoad) cells() string {
	if l.Note != "" {
		return l.Note
	}
	store := "(server stopped)"
	if !math.IsNaN(float64(l.StoreMem.Anon)) {
		store = l.StoreMem.String()
	}
	return fmt.Sprintf("%s s | %s | %s | %s | %s%s | %s", f(float64(l.Wall), 2), f(float64(l.TriplesPS), 0),
		fmtInt(float64(l.Reported)), fmtInt(float64(l.InStore)), f(float64(l.RSSMB), 0), l.RSSNote, store)
}

type storesResult struct {
	Loads   []storeLoad `json:"loads"`
	Targets []target    `json:"targets"`
}

// storeKgrag loads the synthetic set with kgrag load --store into a fresh
// instance of store (mode "atomic" or "in-place"; --upload upload when
// given) and counts it.
func (b *bench) storeKgrag(ctx context.Context, store, mode, upload, loader string) (storeLoad, error) {
	l := storeLoad{Store: store, Loader: loader, Wall: num(math.NaN()), StoreMem: noMem()}
	synth, err := b.synthSet(ctx)
	if err != nil {
		return l, err
	}
	tag := "store-" + store + "-kgrag-" + mode
	if upload != "" {
		tag += "-" + upload
	}
	port, done, err := b.freshStore(ctx, store, store+"-kgrag")
	defer done()
	if err != nil {
		if ctx.Err() != nil {
			return l, ctx.Err()
		}
		l.Note = "not run: " + err.Error()
		return l, nil
	}
	args := []string{"load", "--input", synth, "--store", storeURL(store, port), "--store-type", store, "--graph", graphIRI}
	if b.cfg.BatchSize != "" {
		args = append(args, "--batch-size", b.cfg.BatchSize)
	}
	if mode == "in-place" {
		args = append(args, "--in-place")
	}
	if upload != "" {
		args = append(args, "--upload", upload)
	}
	w := watchStore(b.storeDir(store + "-kgrag"))
	u, err := b.measure(ctx, tag, nil, b.kgrag, args...)
	l.StoreMem = w.mem()
	if err != nil {
		return l, err
	}
	if u.RC != 0 {
		l.Note = "failed: " + b.why(tag, u.RC)
		return l, nil
	}
	n, _ := b.sparqlCount(ctx, queryURL(store, port), graphIRI)
	wrote := kgragWrote(b.runFile(tag + ".err"))
	l.Wall, l.TriplesPS, l.Reported, l.InStore, l.RSSMB = num(u.Wall), num(ratio(wrote, u.Wall)), num(wrote), num(n), num(u.RSSMB)
	l.RSSNote = " (client)"
	return l, nil
}

// storeDir is the directory of the store instance NAME.
func (b *bench) storeDir(name string) string { return filepath.Join(b.out, "stores", name) }

// freshStore starts store on a free port over an empty OUT/stores/NAME;
// done stops it and removes the directory, and is to be called whether
// or not the store started.
func (b *bench) freshStore(ctx context.Context, store, name string) (port int, done func(), err error) {
	port = b.storePort(store)
	dir := b.storeDir(name)
	os.RemoveAll(dir)
	done = func() {
		b.serverStop(store, port, dir)
		os.RemoveAll(dir)
	}
	return port, done, b.serverStart(ctx, store, port, dir)
}

// bulkFile runs the bulk loader of Oxigraph (oxigraph load) or Fuseki
// (tdb2.tdbloader) on ttl into graph of the stopped store in dir/data,
// measured as tag. cmd says what ran; whyNot, when the loader is not
// there.
func (b *bench) bulkFile(ctx context.Context, store string, port int, dir, graph, ttl, tag string) (u usage, cmd, whyNot string, err error) {
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return u, "", "", err
	}
	switch store {
	case "oxigraph":
		ox, err := exec.LookPath("oxigraph")
		if err != nil {
			_, _ = b.exec(ctx, cmdSpec{stdout: b.runFile("oxigraph-start.log"), stderr: b.runFile("oxigraph-start.log"), appendOut: true},
				filepath.Join(b.repo, "scripts", "oxigraph.sh"), "install")
			if ox, err = exec.LookPath("oxigraph"); err != nil {
				return u, "", "oxigraph CLI not found (pip install oxigraph)", nil
			}
		}
		u, err = b.measure(ctx, tag, nil, ox, "load", "--location", filepath.Join(dir, "data"), "--file", ttl, "--graph", graph)
		return u, "oxigraph load --location DIR --file graph.ttl --graph " + graph, "", err
	case "fuseki":
		u, err = b.measure(ctx, tag, []string{"KGRAG_FUSEKI_HEAP=" + b.cfg.JavaHeap}, filepath.Join(b.repo, "scripts", "fuseki.sh"),
			"tdbloader", "--port", strconv.Itoa(port), "--dir", dir, "--graph", graph, ttl)
		return u, fmt.Sprintf("java -Xmx%s -cp jena-fuseki-server.jar tdb2.tdbloader --loc DIR --graph %s graph.ttl (scripts/fuseki.sh tdbloader)", b.cfg.JavaHeap, graph), "", err
	}
	return u, "", "", fmt.Errorf("bulkFile: no file bulk loader for %s", store)
}

// lastMatch is the first group of re's last match in files, "" when none.
func lastMatch(re *regexp.Regexp, files ...string) string {
	last := ""
	for _, file := range files {
		data, _ := os.ReadFile(file)
		for _, m := range re.FindAllSubmatch(data, -1) {
			last = string(m[1])
		}
	}
	return last
}

// storeBulk is the store's own bulk loader on kgrag's Turtle into a fresh
// store, then a server on it to count; cmd says what ran.
func (b *bench) storeBulk(ctx context.Context, store string) (l storeLoad, cmd string, err error) {
	l = storeLoad{Store: store, Loader: "bulk loader", Wall: num(math.NaN()), StoreMem: noMem()}
	ttl, err := b.synthTTL(ctx)
	if err != nil {
		return l, "", err
	}
	tag := "store-" + store + "-bulk"
	port := b.storePort(store)
	dir := filepath.Join(b.out, "stores", store+"-bulk")
	os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return l, "", err
	}
	var u usage
	reported := ""
	switch store {
	case "oxigraph", "fuseki":
		var whyNot string
		u, cmd, whyNot, err = b.bulkFile(ctx, store, port, dir, graphIRI, ttl, tag)
		if err != nil {
			return l, cmd, err
		}
		if whyNot != "" {
			l.Note = "not run: " + whyNot
			return l, cmd, nil
		}
		re := regexp.MustCompile(`([0-9]+) triples loaded`)
		if store == "fuseki" {
			re = regexp.MustCompile(`Finished: \S* ([0-9,]*) tuples`)
		}
		reported = strings.ReplaceAll(lastMatch(re, b.runFile(tag+".out"), b.runFile(tag+".err")), ",", "")
	case "virtuoso":
		u, cmd, l.StoreMem, err = b.virtuosoBulk(ctx, port, dir, ttl, tag)
		if err != nil || cmd == "" {
			if err == nil {
				l.Note = "not run: virtuoso did not start (" + lastLine(b.runFile("virtuoso-start.log"), 120) + ")"
			}
			return l, "", err
		}
	}
	if u.RC != 0 {
		l.Note = "failed: " + b.why(tag, u.RC)
		if store == "virtuoso" {
			b.serverStop(store, port, dir)
		}
		os.RemoveAll(dir)
		return l, cmd, nil
	}
	up := true
	if store != "virtuoso" {
		up = b.serverStart(ctx, store, port, dir) == nil
	}
	n := math.NaN()
	if up {
		n, _ = b.sparqlCount(ctx, queryURL(store, port), graphIRI)
	}
	b.serverStop(store, port, dir)
	rep, err := strconv.ParseFloat(reported, 64)
	if err != nil {
		rep = n
	}
	l.Wall, l.TriplesPS, l.Reported, l.InStore, l.RSSMB = num(u.Wall), num(ratio(rep, u.Wall)), num(rep), num(n), num(u.RSSMB)
	if store == "virtuoso" {
		l.RSSNote = " (isql client; the load runs in the server)"
	}
	// The retrieval step's bulk load of the same file into the same kind of
	// store takes as long again (40 min for Fuseki at 1M): keep this one
	// for it when it is to run.
	keptDir := filepath.Join(b.out, "stores", store+"-bulk-kept")
	os.RemoveAll(keptDir)
	if store != "virtuoso" && b.cfg.RetrievalBulk && slices.Contains(b.cfg.Steps, "retrieval") &&
		slices.Contains(b.cfg.RetStores, store) && up && !math.IsNaN(n) {
		if err := os.WriteFile(filepath.Join(dir, ".kept"), fmt.Appendf(nil, "%.2f\n%.0f\n", u.Wall, n), 0o644); err == nil {
			if os.Rename(dir, keptDir) == nil {
				return l, cmd, nil
			}
		}
	}
	os.RemoveAll(dir)
	return l, cmd, nil
}

// virtuosoBulk starts Virtuoso on dir and runs ld_dir and rdf_loader_run
// through isql on ttl; cmd is "" when the server did not start (then it is
// stopped again).
func (b *bench) virtuosoBulk(ctx context.Context, port int, dir, ttl, tag string) (u usage, cmd string, peak storeMem, err error) {
	const store = "virtuoso"
	peak = noMem()
	if err := b.serverStart(ctx, store, port, dir); err != nil {
		b.serverStop(store, port, dir)
		return u, "", peak, ctx.Err()
	}
	// ld_dir reads only from DirsAllowed, which holds the instance dir.
	load := filepath.Join(dir, "load")
	if err := os.MkdirAll(load, 0o755); err != nil {
		return u, "", peak, err
	}
	if os.Link(ttl, filepath.Join(load, "graph.ttl")) != nil {
		if _, err := b.exec(ctx, cmdSpec{}, "cp", ttl, filepath.Join(load, "graph.ttl")); err != nil {
			return u, "", peak, err
		}
	}
	cmd = fmt.Sprintf("isql: ld_dir('DIR', 'graph.ttl', '%s'); rdf_loader_run(); checkpoint;", graphIRI)
	isql := filepath.Join(b.repo, "scripts", "virtuoso.sh")
	w := watchStore(dir)
	u, err = b.measure(ctx, tag, nil, isql, "isql", "--port", strconv.Itoa(port), "--dir", dir,
		fmt.Sprintf("exec=ld_dir('%s', 'graph.ttl', '%s'); rdf_loader_run(); checkpoint;", load, graphIRI))
	peak = w.mem()
	if err != nil || u.RC != 0 {
		return u, cmd, peak, err
	}
	out, _ := b.combined(ctx, isql, "isql", "--port", strconv.Itoa(port), "--dir", dir,
		"exec=SELECT 'LLERR', ll_file, ll_error FROM DB.DBA.LOAD_LIST WHERE ll_error IS NOT NULL;")
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "LLERR") || strings.Contains(line, "*** Error") {
			u.RC = 1
			appendFile(b.runFile(tag+".err"), "load list error: "+line+"\n")
			break
		}
	}
	return u, cmd, peak, nil
}

// appendFile appends s to file, best effort: it is a log.
func appendFile(file, s string) {
	fh, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer fh.Close()
	_, _ = fh.WriteString(s)
}

// storeTarget is the target row of kgrag's wall time against the bulk
// loader's.
func storeTarget(store, what string, k, bulk storeLoad) target {
	r := ratio(float64(k.Wall), float64(bulk.Wall))
	return target{store, what, f(r, 2) + "x", fmt.Sprintf("<= %gx", targetStore), verdict(r, le, targetStore)}
}

func (b *bench) stores(ctx context.Context) (string, any, error) {
	synth, err := b.synthSet(ctx)
	if err != nil {
		return "", nil, err
	}
	ttl, err := b.synthTTL(ctx)
	if err != nil {
		return "", nil, err
	}
	var res storesResult
	var rows, bulkCmds []string
	for _, s := range b.cfg.Stores {
		b.logf("store %s", s)
		// On Fuseki the streamed PUT (--upload stream; --in-place takes the
		// same path) is measured beside the batches, the default, for the
		// stores in BENCH_UPLOAD_BATCHES.
		streamed := s == "fuseki"
		skipKgrag := slices.Contains(b.cfg.SkipKgrag, s)
		atomicLoader := "kgrag load --store (atomic)"
		if streamed {
			atomicLoader = "kgrag load --store --upload stream (one PUT)"
		}
		const inPlaceLoader = "kgrag load --store --in-place"
		var inPlace, atomic storeLoad
		switch {
		case streamed:
			inPlace = storeLoad{Store: s, Loader: inPlaceLoader, Note: "same path as atomic (one streamed PUT)"}
		case skipKgrag:
			inPlace = storeLoad{Store: s, Loader: inPlaceLoader, Note: "not run: BENCH_SKIP_KGRAG"}
		default:
			if inPlace, err = b.storeKgrag(ctx, s, "in-place", "", inPlaceLoader); err != nil {
				return "", nil, err
			}
		}
		switch {
		case skipKgrag:
			atomic = storeLoad{Store: s, Loader: atomicLoader, Note: "not run: BENCH_SKIP_KGRAG"}
		case slices.Contains(b.cfg.SkipAtomic, s):
			atomic = storeLoad{Store: s, Loader: atomicLoader, Note: "not run: BENCH_SKIP_ATOMIC"}
		case streamed:
			atomic, err = b.storeKgrag(ctx, s, "atomic", "stream", atomicLoader)
		default:
			atomic, err = b.storeKgrag(ctx, s, "atomic", "", atomicLoader)
		}
		if err != nil {
			return "", nil, err
		}
		loads := []storeLoad{atomic, inPlace}
		var batches []storeLoad
		if streamed && !skipKgrag && slices.Contains(b.cfg.UploadBatches, s) {
			ba, err := b.storeKgrag(ctx, s, "atomic", "batches", "kgrag load --store (batches, atomic: the default)")
			if err != nil {
				return "", nil, err
			}
			bi, err := b.storeKgrag(ctx, s, "in-place", "batches", "kgrag load --store --in-place (batches)")
			if err != nil {
				return "", nil, err
			}
			batches = []storeLoad{ba, bi}
			loads = append(loads, batches...)
		}
		bulk, cmd, err := b.storeBulk(ctx, s)
		if err != nil {
			return "", nil, err
		}
		loads = append(loads, bulk)
		for _, l := range loads {
			rows = append(rows, row(s, l.Loader, l.cells()))
		}
		res.Loads = append(res.Loads, loads...)
		if cmd != "" {
			bulkCmds = append(bulkCmds, s+": "+cmd)
		}
		if inPlace.ran() && bulk.ran() && !streamed {
			res.Targets = append(res.Targets, storeTarget(s, "kgrag --in-place / bulk loader wall time", inPlace, bulk))
		}
		switch {
		case atomic.ran() && bulk.ran() && streamed:
			res.Targets = append(res.Targets, storeTarget(s, "kgrag --upload stream / bulk loader wall time", atomic, bulk))
		case atomic.ran() && bulk.ran():
			res.Targets = append(res.Targets, storeTarget(s, "kgrag (atomic) / bulk loader wall time", atomic, bulk))
		default:
			res.Targets = append(res.Targets, target{s, "kgrag / bulk loader wall time", "n/a (one side did not run)", fmt.Sprintf("<= %gx", targetStore), "n/a"})
		}
		for i, l := range batches {
			if l.ran() && bulk.ran() {
				res.Targets = append(res.Targets, storeTarget(s, fmt.Sprintf("batches (%s) / bulk loader", []string{"atomic", "in-place"}[i]), l, bulk))
			}
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `## 3. Store upload of the synthetic dataset

kgrag reads the parquet files, maps and uploads to a running server (fresh store; the time includes conversion;
RSS is kgrag's own). The bulk loader reads kgrag's Turtle file (%s MB) into a fresh store with the server
stopped (Virtuoso: server running, loader driven by isql). "store's peak RSS" = the server's own (anonymous) resident memory,
its children included, sampled every 200 ms during the load, and in brackets with the pages of the files it maps (TDB2's), which the kernel reclaims. "triples reported" = what the loader prints
(the SPARQL count where it prints none); "in store" = SPARQL COUNT of the graph afterwards.

| store | loader | wall | triples/s | triples reported | in store | peak RSS MB | store's peak RSS MB |
|---|---|---|---|---|---|---|---|
`, f(mb(fileSize(ttl)), 1))
	sb.WriteString(strings.Join(rows, "") + "\n" + targetTable("store", res.Targets) + "\nCommands:\n\n```\n")
	batch := ""
	if b.cfg.BatchSize != "" {
		batch = " --batch-size " + b.cfg.BatchSize
	}
	fmt.Fprintf(&sb, "bin/kgrag load --input %s --store URL --store-type STORE --graph %s%s [--in-place] [--upload batches]\n", synth, graphIRI, batch)
	for _, c := range bulkCmds {
		sb.WriteString(c + "\n")
	}
	sb.WriteString("```\n\n")
	return sb.String(), res, nil
}
