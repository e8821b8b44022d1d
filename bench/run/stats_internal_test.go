package main

import (
	"encoding/json"
	"math"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{1.5, 1.5}, 1.5},
	} {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v; want %v", tt.in, got, tt.want)
		}
	}
	if got := median(nil); !math.IsNaN(got) {
		t.Errorf("median(nil) = %v; want NaN", got)
	}
	in := []float64{3, 1, 2}
	median(in)
	if in[0] != 3 {
		t.Errorf("median sorted its argument: %v", in)
	}
}

func TestNearestRank(t *testing.T) {
	vs := []float64{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	for _, tt := range []struct {
		p    float64
		want float64
	}{{50, 5}, {95, 10}, {10, 1}, {100, 10}, {1, 1}} {
		if got := nearestRank(vs, tt.p); got != tt.want {
			t.Errorf("nearestRank(1..10, %v) = %v; want %v", tt.p, got, tt.want)
		}
	}
	if got := nearestRank([]float64{1, 2, 3, 4}, 50); got != 2 {
		t.Errorf("nearestRank(1..4, 50) = %v; want the lower middle 2", got)
	}
	if got := nearestRank(nil, 50); !math.IsNaN(got) {
		t.Errorf("nearestRank(nil, 50) = %v; want NaN", got)
	}
}

func TestFmtInt(t *testing.T) {
	for _, tt := range []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{999, "999"},
		{1000, "1,000"},
		{1234567.89, "1,234,567"},
		{-1234567, "-1,234,567"},
		{100000, "100,000"},
		{math.NaN(), "?"},
	} {
		if got := fmtInt(tt.in); got != tt.want {
			t.Errorf("fmtInt(%v) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestFormatAndRatio(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		prec int
		want string
	}{
		{1.25, 1, "1.2"},
		{0.456, 2, "0.46"},
		{3, 0, "3"},
		{math.NaN(), 2, "?"},
		{math.Inf(1), 2, "?"},
	} {
		if got := f(tt.v, tt.prec); got != tt.want {
			t.Errorf("f(%v, %d) = %q; want %q", tt.v, tt.prec, got, tt.want)
		}
	}
	for _, tt := range []struct {
		a, b float64
		want string
	}{{3, 2, "1.50"}, {1, 0, "?"}, {math.NaN(), 2, "?"}, {2, math.NaN(), "?"}} {
		if got := f(ratio(tt.a, tt.b), 2); got != tt.want {
			t.Errorf("ratio(%v, %v) = %q; want %q", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestVerdict(t *testing.T) {
	for _, tt := range []struct {
		name   string
		v      float64
		op     func(a, b float64) bool
		target float64
		want   string
	}{
		{"ge met", 31, ge, 30, "met"},
		{"ge equal", 30, ge, 30, "met"},
		{"ge missed", 29.9, ge, 30, "MISSED"},
		{"lt met", 499, lt, 500, "met"},
		{"lt equal", 500, lt, 500, "MISSED"},
		{"le equal", 1.5, le, 1.5, "met"},
		{"unknown", math.NaN(), lt, 5, "n/a"},
	} {
		if got := verdict(tt.v, tt.op, tt.target); got != tt.want {
			t.Errorf("%s: verdict(%v, %v) = %q; want %q", tt.name, tt.v, tt.target, got, tt.want)
		}
	}
}

const benchOutput = `goos: linux
BenchmarkTurtleEncoder   	 5000000	       220.8 ns/op	   4530196 triples/s	       0 B/op
BenchmarkTurtleEncoder   	 5000000	       230.1 ns/op	   4400000 triples/s	       0 B/op
BenchmarkTurtleEncoder   	 5000000	       210.0 ns/op	   4700000 triples/s	       0 B/op
BenchmarkNTriplesEncoder-2	 5000000	       250.3 ns/op	   3996805 triples/s
BenchmarkTurtleEncoderX	 1	 1 ns/op	 1 triples/s
BenchmarkIndexInstant/words=8000/cache=on-2	3	 12.5 ms/unit	 7 units
BenchmarkIndexInstant/words=8000/cache=on-2	3	 13.5 ms/unit	 7 units
PASS
`

func TestBenchValues(t *testing.T) {
	for _, tt := range []struct {
		name, unit string
		want       float64
		n          int
	}{
		{"BenchmarkTurtleEncoder", "triples/s", 4530196, 3},
		{"BenchmarkNTriplesEncoder", "triples/s", 3996805, 1},
		{"BenchmarkTurtleEncoder", "ns/op", 220.8, 3},
		{"BenchmarkIndexInstant/words=8000/cache=on", "ms/unit", 13, 2},
		{"BenchmarkIndexInstant/words=8000/cache=on", "units", 7, 2},
	} {
		vs := benchValues(benchOutput, tt.name, tt.unit)
		if len(vs) != tt.n || median(vs) != tt.want {
			t.Errorf("benchValues(%q, %q) = %v; want %d values of median %v", tt.name, tt.unit, vs, tt.n, tt.want)
		}
	}
	if vs := benchValues(benchOutput, "BenchmarkMissing", "ns/op"); len(vs) != 0 {
		t.Errorf("benchValues(missing) = %v; want none", vs)
	}
}

func TestBenchFigure(t *testing.T) {
	for _, tt := range []struct {
		in   []float64
		want string
	}{
		{[]float64{0.5123, 0.6, 0.4}, "0.5123"},
		{[]float64{1234567}, "1234567"},
		{[]float64{1, 2.34567}, "1.673"},
		{nil, "?"},
	} {
		if _, got := benchFigure(tt.in); got != tt.want {
			t.Errorf("benchFigure(%v) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestNumJSON(t *testing.T) {
	data, err := json.Marshal(struct {
		A, B num
	}{num(1.5), num(math.NaN())})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(data), `{"A":1.5,"B":null}`; got != want {
		t.Errorf("json.Marshal = %s; want %s", got, want)
	}
}
