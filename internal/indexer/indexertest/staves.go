package indexertest

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
)

// SplitStaves cuts A Christmas Carol at its "STAVE ..." headings, up to
// Project Gutenberg's end marker, into its five staves.
func SplitStaves(book string) ([]string, error) {
	book = strings.ReplaceAll(book, "\r\n", "\n")
	if i := strings.Index(book, "*** END OF THE PROJECT GUTENBERG"); i >= 0 {
		book = book[:i]
	}
	var starts []int
	for _, name := range []string{"ONE", "TWO", "THREE", "FOUR", "FIVE"} {
		i := strings.Index(book, "\nSTAVE "+name+"\n")
		if i < 0 {
			return nil, fmt.Errorf("no heading STAVE %s", name)
		}
		starts = append(starts, i+1)
	}
	out := make([]string, len(starts))
	for k, s := range starts {
		end := len(book)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		out[k] = book[s:end]
	}
	return out, nil
}

// Step is one state of a folder of documents: file name to text.
type Step struct {
	Name  string
	Files map[string]string
}

// UpdateSteps is the life of a folder that issue 13's tests and bench
// follow, on the five staves: staves 1-3 indexed; stave 4 added; a
// sentence of stave 2 edited; stave 1 deleted.
func UpdateSteps(staves []string) ([]Step, error) {
	if len(staves) < 4 {
		return nil, fmt.Errorf("%d staves; want at least 4", len(staves))
	}
	name := func(i int) string { return fmt.Sprintf("stave-%d.txt", i+1) }
	files := func(idx ...int) map[string]string {
		m := map[string]string{}
		for _, i := range idx {
			m[name(i)] = staves[i]
		}
		return m
	}
	edited := files(0, 1, 2, 3)
	edited[name(1)] = strings.Replace(staves[1], "The curtains of his bed were drawn aside", "The curtains of his bed were flung aside", 1)
	if edited[name(1)] == staves[1] {
		return nil, errors.New("the sentence edited in stave 2 is not there")
	}
	removed := maps.Clone(edited)
	delete(removed, name(0))
	return []Step{
		{"index staves 1-3", files(0, 1, 2)},
		{"add stave 4", files(0, 1, 2, 3)},
		{"edit a sentence of stave 2", edited},
		{"delete stave 1", removed},
	}, nil
}

// WriteFolder makes dir hold exactly files.
func WriteFolder(dir string, files map[string]string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}
