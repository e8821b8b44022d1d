package graphrag_test

import (
	"errors"
	"testing"

	"github.com/kgrag/kgrag/graphrag"
)

func TestParseLimitAllows(t *testing.T) {
	tests := []struct {
		in   string
		rows int64
		want int64
	}{
		{"1%", 42, 1},     // rounded up: one stray row in a small table
		{"1%", 100, 1},    // exactly 1%
		{"1%", 101, 2},    // 1.01 rows rounds up
		{"7%", 100, 7},    // 0.07*100 is not 8
		{"0.5%", 1000, 5}, //
		{"1%", 1, 0},      // a share never allows the whole table
		{"50%", 2, 1},     //
		{"100%", 5, 5},    // no limit
		{"0", 1000, 0},    // rows, not a share
		{"20", 5, 20},     // a count is taken as given
		{" 3 % ", 100, 3}, // white space around the parts
		{"0%", 1_000_000, 0},
	}
	for _, tt := range tests {
		l, err := graphrag.ParseLimit(tt.in)
		if err != nil {
			t.Errorf("ParseLimit(%q): %v", tt.in, err)
			continue
		}
		if got := l.Allows(tt.rows); got != tt.want {
			t.Errorf("ParseLimit(%q).Allows(%d) = %d; want %d", tt.in, tt.rows, got, tt.want)
		}
	}
	for _, bad := range []string{"", "%", "-1", "-1%", "101%", "NaN%", "1.5", "ten"} {
		if _, err := graphrag.ParseLimit(bad); err == nil {
			t.Errorf("ParseLimit(%q) = nil error; want one", bad)
		}
	}
}

func TestPolicyCheck(t *testing.T) {
	row := func(n int64) []graphrag.BadRow { return []graphrag.BadRow{{Row: n}} }
	blank := graphrag.LeftOut{Table: graphrag.TableEntities, Path: "e.parquet", Column: "title", Cause: graphrag.CauseBlank, Rows: 1, Examples: row(9)}
	blankID := graphrag.LeftOut{Table: graphrag.TableEntities, Path: "e.parquet", Column: "id", Cause: graphrag.CauseBlank, Rows: 1, Examples: row(4)}
	comm := graphrag.LeftOut{Table: graphrag.TableCommunities, Path: "c.parquet", Column: "community", Cause: graphrag.CauseNotInteger, Rows: 1, Examples: row(2)}
	depends := graphrag.LeftOut{Table: graphrag.TableRelationships, Path: "r.parquet", Column: "source", Cause: graphrag.CauseLeftOutEntity, Rows: 50, Examples: row(0)}
	values := graphrag.LeftOut{Table: graphrag.TableTextUnits, Path: "t.parquet", Column: "n_tokens", Cause: graphrag.CauseNotInteger, Values: 40, Examples: row(1)}
	rows := map[string]int64{graphrag.TableEntities: 100, graphrag.TableCommunities: 10, graphrag.TableRelationships: 60, graphrag.TableTextUnits: 42}
	tests := []struct {
		name    string
		p       graphrag.Policy
		left    []graphrag.LeftOut
		want    error // nil: no error
		wantCol string
		wantRow int64
	}{
		{"default allows 1 of 100", graphrag.DefaultPolicy(), []graphrag.LeftOut{blank}, nil, "", 0},
		{"default refuses 2 of 100", graphrag.DefaultPolicy(), []graphrag.LeftOut{blank, blankID}, graphrag.ErrTooMalformed, "", -1},
		{"dependent rows do not count", graphrag.DefaultPolicy(), []graphrag.LeftOut{depends}, nil, "", 0},
		{"values do not count", graphrag.DefaultPolicy(), []graphrag.LeftOut{values}, nil, "", 0},
		{"strict names the first row", graphrag.Policy{Strict: true}, []graphrag.LeftOut{blank, blankID}, graphrag.ErrEmptyKey, "id", 4},
		{"strict community number", graphrag.Policy{Strict: true}, []graphrag.LeftOut{comm}, graphrag.ErrKeyValue, "community", 2},
		{"strict value", graphrag.Policy{Strict: true}, []graphrag.LeftOut{values}, graphrag.ErrNotInteger, "n_tokens", 1},
		{"strict ignores dependants", graphrag.Policy{Strict: true}, []graphrag.LeftOut{depends}, nil, "", 0},
		{"count limit", graphrag.Policy{MaxBad: graphrag.Limit{Rows: 1, Count: true}}, []graphrag.LeftOut{blank, blankID}, graphrag.ErrTooMalformed, "", -1},
		{"100% allows all but", graphrag.Policy{MaxBad: graphrag.Limit{Percent: 100}}, []graphrag.LeftOut{blank, blankID, comm}, nil, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Check(tt.left, rows)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Check: %v; want nil", err)
				}
				return
			}
			var ge *graphrag.Error
			if !errors.Is(err, tt.want) || !errors.As(err, &ge) {
				t.Fatalf("Check: %v; want an *Error wrapping %q", err, tt.want)
			}
			if ge.Field != tt.wantCol || ge.Row != tt.wantRow {
				t.Errorf("Check: column %q row %d; want %q row %d (%v)", ge.Field, ge.Row, tt.wantCol, tt.wantRow, err)
			}
		})
	}
}
