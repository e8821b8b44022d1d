package elastic_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/kgrag/kgrag/embedindex/elastic"
)

// countIndices counts the concrete indices named cfg.Index-*.
func countIndices(t *testing.T, cfg elastic.Config) int {
	t.Helper()
	res, err := http.Get(cfg.URL + "/_cat/indices/" + cfg.Index + "-*?format=json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var rows []map[string]any
	if err := json.NewDecoder(res.Body).Decode(&rows); err != nil {
		t.Fatal(err)
	}
	return len(rows)
}

// deleteAll removes the test's indices (and so its alias).
func deleteAll(t *testing.T, cfg elastic.Config) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, cfg.URL+"/"+cfg.Index+"-*", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Log(err)
		return
	}
	res.Body.Close()
}
