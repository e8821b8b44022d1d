package graphrag

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// settingsFiles are the names GraphRAG's project settings go by, in the
// order GraphRAG looks for them.
var settingsFiles = []string{"settings.yaml", "settings.yml", "settings.json"}

// settingsOutput reads the output folder a GraphRAG project's settings
// file in dir names: output.base_dir (1.x on) or storage.base_dir (before
// 1.0), relative to dir. A ${timestamp} in it stands for one run folder
// per indexing run (0.x), so the folder above it is returned, where the
// newest run is chosen. It returns "" when dir has no settings file or it
// names no base_dir; file is the settings file read.
func settingsOutput(dir string) (out, file string, err error) {
	for _, name := range settingsFiles {
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var s struct {
			Output struct {
				BaseDir string `yaml:"base_dir" json:"base_dir"`
			} `yaml:"output" json:"output"`
			Storage struct {
				BaseDir string `yaml:"base_dir" json:"base_dir"`
			} `yaml:"storage" json:"storage"`
		}
		if strings.HasSuffix(name, ".json") {
			err = json.Unmarshal(b, &s)
		} else {
			err = yaml.Unmarshal(b, &s)
		}
		if err != nil {
			return "", p, &Error{Op: "open", Path: p, Row: -1, Err: fmt.Errorf("GraphRAG settings: %w", err)}
		}
		base := s.Output.BaseDir
		if base == "" {
			base = s.Storage.BaseDir
		}
		if base == "" {
			return "", p, nil
		}
		if i := strings.Index(base, "${timestamp}"); i >= 0 {
			base = base[:i]
		}
		if !filepath.IsAbs(base) {
			base = filepath.Join(dir, base)
		}
		return filepath.Clean(base), p, nil
	}
	return "", "", nil
}

// fromSettings resolves the output folder the settings file in dir names,
// if there is one and it holds tables.
func fromSettings(dir string) (layout, bool, error) {
	out, file, err := settingsOutput(dir)
	if err != nil {
		return layout{}, false, err
	}
	if out == "" || out == filepath.Clean(dir) || !isDir(out) {
		return layout{}, false, nil
	}
	l, err := resolveIn(out, false)
	if err != nil {
		return layout{}, false, nil // the other places are looked at next
	}
	l.notes = append([]string{fmt.Sprintf("read the output folder %s names (%s)", filepath.Base(file), out)}, l.notes...)
	return l, true, nil
}
