package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kgrag/kgrag/embedindex"
	"github.com/kgrag/kgrag/embedindex/elastic"
	"github.com/kgrag/kgrag/embedindex/location"
	"github.com/kgrag/kgrag/internal/redact"
	"github.com/urfave/cli/v3"
)

// defaultESIndex is the Elasticsearch alias searched unless --index-name
// says otherwise.
const defaultESIndex = "kgrag-entities"

// indexOptions say which vector index to search: a flat file, or an
// Elasticsearch alias when url is set.
type indexOptions struct {
	path string // flat index file, or the folder kgrag embed wrote it to

	url      string
	name     string
	user     string
	password string // a secret: never printed
	apiKey   string // a secret: never printed
	caCert   string
	// shards and replicas of an index embed creates (embed's flags only).
	shards, replicas int
}

func indexFlags(o *indexOptions) []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "index", Destination: &o.path, Category: "vector index", Usage: "flat index `PATH`: the folder kgrag embed wrote (or its entities.vec); default: kgrag-index inside --input", Sources: cli.EnvVars("KGRAG_INDEX")},
	}, elasticFlags(o)...)
}

// elasticFlags are the flags that put the vector index in Elasticsearch,
// shared by ask (which searches it) and embed (which builds it).
func elasticFlags(o *indexOptions) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "index-url", Destination: &o.url, Category: "vector index", Usage: "Elasticsearch 8 node `URL`, to search an index there instead of --index; several nodes of a cluster: comma-separated (requests are spread over them, and retried on another when one is down)", Sources: cli.EnvVars("KGRAG_INDEX_URL")},
		&cli.StringFlag{Name: "index-name", Destination: &o.name, Category: "vector index", Value: defaultESIndex, Usage: "Elasticsearch index or alias `NAME`", Sources: cli.EnvVars("KGRAG_INDEX_NAME")},
		&cli.StringFlag{Name: "index-user", Destination: &o.user, Category: "vector index", Usage: "Elasticsearch user `NAME` (basic auth)", Sources: cli.EnvVars("KGRAG_INDEX_USER")},
		&cli.StringFlag{Name: "index-password", Destination: &o.password, Category: "vector index", Usage: "Elasticsearch password (better: env KGRAG_INDEX_PASSWORD or KGRAG_INDEX_PASSWORD_FILE)", Sources: secretSource("KGRAG_INDEX_PASSWORD")},
		&cli.StringFlag{Name: "index-api-key", Destination: &o.apiKey, Category: "vector index", Usage: "Elasticsearch API key (better: env KGRAG_INDEX_API_KEY or KGRAG_INDEX_API_KEY_FILE)", Sources: secretSource("KGRAG_INDEX_API_KEY")},
		&cli.StringFlag{Name: "index-ca-cert", Destination: &o.caCert, Category: "vector index", Usage: "PEM `FILE` of CA certificates to trust for an https --index-url", Sources: cli.EnvVars("KGRAG_INDEX_CA_CERT")},
	}
}

// elasticConfig is the Elasticsearch configuration of the options.
func (o indexOptions) elasticConfig() elastic.Config {
	return elastic.Config{URL: o.url, Index: o.name, APIKey: o.apiKey,
		Username: o.user, Password: o.password, CAFile: o.caCert,
		Shards: o.shards, Replicas: o.replicas}
}

// resolve checks the options and fills in the default flat index under
// input.
func (o *indexOptions) resolve(input string) error {
	if o.url != "" {
		switch {
		case o.path != "":
			return usagef("", "give either --index (a file) or --index-url (Elasticsearch), not both")
		case o.name == "":
			return usagef("--index-name "+defaultESIndex, "--index-url needs --index-name")
		case o.apiKey != "" && o.user != "":
			return usagef("", "give either --index-api-key or --index-user/--index-password, not both")
		}
		return nil
	}
	if o.path == "" {
		if input == "" {
			return usagef("--index ./output/kgrag-index", "--store needs a vector index: --index PATH (as kgrag embed wrote it) or --index-url URL")
		}
		o.path = filepath.Join(input, defaultIndexDir)
	}
	// A folder, or a path without an extension that does not exist yet,
	// is taken as the folder kgrag embed writes, so a missing index is
	// named by the file kgrag embed would write there.
	st, err := os.Stat(o.path)
	if (err == nil && st.IsDir()) || (err != nil && filepath.Ext(o.path) == "") {
		o.path = filepath.Join(o.path, entityIndexFile)
	}
	return nil
}

// forTable are the options of table's index: the flat file beside the
// entities' (o resolved), or the Elasticsearch alias named after
// --index-name (see location.Alias).
func (o indexOptions) forTable(table string) indexOptions {
	l := o.location().Table(table)
	o.name, o.path = l.Elastic.Index, l.Path
	return o
}

// open opens the entities' index and refuses an empty one.
func (o indexOptions) open(ctx context.Context) (embedindex.Index, error) {
	return o.openTable(ctx, tableEntities)
}

// openTable opens table's index (o resolved) and refuses an empty one;
// a missing one is named with the kgrag embed that builds it. The caller
// closes the index.
func (o indexOptions) openTable(ctx context.Context, table string) (embedindex.Index, error) {
	idx, err := o.forTable(table).location().Open(ctx)
	if err != nil {
		return nil, o.openError(table, err)
	}
	return idx, nil
}

// openOptional opens table's index if kgrag embed built it; if not,
// missing says so and what builds it. err is any other failure.
func (o indexOptions) openOptional(ctx context.Context, table string) (idx embedindex.Index, missing, err error) {
	idx, err = o.forTable(table).location().Open(ctx)
	switch {
	case errors.Is(err, location.ErrNoIndex):
		return nil, o.openError(table, err), nil
	case err != nil:
		return nil, nil, o.openError(table, err)
	}
	return idx, nil, nil
}

// openError is the error of opening table's index, with the command
// that builds a missing or empty one.
func (o indexOptions) openError(table string, err error) error {
	t := o.forTable(table)
	build := "kgrag embed --input DIR"
	if table != tableEntities {
		build += " " + tableFlag(table)
	}
	var empty *location.EmptyError
	switch {
	case errors.As(err, &empty):
		return fmt.Errorf("ask: %v: rebuild it with %s", err, build)
	case errors.Is(err, location.ErrNoIndex) && t.url != "" && table != tableEntities:
		return fmt.Errorf("ask: no embeddings of the %s in Elasticsearch alias %s: build them with %s --index-url %s",
			tableNoun(table), t.name, build, redact.URLs(t.url))
	case errors.Is(err, location.ErrNoIndex) && t.url == "" && table != tableEntities:
		return fmt.Errorf("ask: no embeddings of the %s at %s: build them with %s (it writes %s beside %s), or point --index at the folder that holds them",
			tableNoun(table), t.path, build, location.File(table), entityIndexFile)
	case errors.Is(err, location.ErrNoIndex) && t.url == "":
		return fmt.Errorf("ask: no vector index at %s: build it with %s (it writes DIR/%s/%s), or point --index at it",
			t.path, build, defaultIndexDir, entityIndexFile)
	}
	return indexError(t, fmt.Errorf("ask: open vector index: %w", err))
}

// location is where the options put the indexes.
func (o indexOptions) location() location.Location {
	if o.url != "" {
		return location.Location{Elastic: o.elasticConfig()}
	}
	return location.Location{Path: o.path}
}

// indexError says which flag to fix when Elasticsearch is down or its
// cluster cannot serve the index (exit 10, like a store), or the index is
// missing.
func indexError(o indexOptions, err error) error {
	switch {
	case o.url == "":
		return err
	case errors.Is(err, elastic.ErrUnavailable):
		return &storeDownError{err: err}
	case elastic.Unreachable(err):
		return &storeDownError{err: fmt.Errorf("%w; check --index-url (KGRAG_INDEX_URL)", err)}
	case errors.Is(err, elastic.ErrNotFound):
		return fmt.Errorf("%w; check --index-name (KGRAG_INDEX_NAME)", err)
	}
	return err
}
