package graphrag

import (
	"fmt"
	"reflect"
	"strings"
)

// Duplicates counts the rows of one table that repeat the id of an earlier
// row, which Walk leaves out: the merged tables `graphrag update` writes
// hold a document or text unit twice, with the same id (a hash of the same
// text) and another title or human_readable_id. Mapping both would make
// one node with two titles, so the first row of each id is kept.
type Duplicates struct {
	Same      int    // left out, equal to the row kept
	Different int    // left out, differing from the row kept
	Example   string // the first id that differs, and in what
}

// Left reports how many rows were left out.
func (d Duplicates) Left() int { return d.Same + d.Different }

// dedupe keeps the first row of each id, in order, and counts those left
// out by whether they equal the row kept (all fields compared).
func dedupe[T any](rows []T, id func(*T) string) ([]T, Duplicates) {
	var d Duplicates
	first := make(map[string]int, len(rows))
	kept := rows[:0]
	for i := range rows {
		r := rows[i]
		k := id(&r)
		j, seen := first[k]
		if !seen {
			first[k] = len(kept)
			kept = append(kept, r)
			continue
		}
		if fields := differ(&kept[j], &r); len(fields) == 0 {
			d.Same++
		} else {
			d.Different++
			if d.Example == "" {
				d.Example = fmt.Sprintf("id %q: %s differ", k, strings.Join(fields, ", "))
			}
		}
	}
	clear(rows[len(kept):])
	return kept, d
}

// differ names the fields in which two rows of a model type differ.
func differ[T any](a, b *T) []string {
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	var out []string
	for i := range va.NumField() {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, va.Type().Field(i).Name)
		}
	}
	return out
}

// noteDuplicates records what dedupe left out of table.
func (w *walker) noteDuplicates(table string, d Duplicates) {
	if d.Left() == 0 {
		return
	}
	if w.ds.Duplicates == nil {
		w.ds.Duplicates = map[string]Duplicates{}
	}
	w.ds.Duplicates[table] = d
	msg := fmt.Sprintf("%s: %d rows repeat the id of an earlier row (%d identical to it, %d different", table, d.Left(), d.Same, d.Different)
	if d.Example != "" {
		msg += "; e.g. " + d.Example
	}
	w.ds.Notes = append(w.ds.Notes, msg+"): kept the first row of each id")
}
