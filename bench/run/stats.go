package main

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// num is a float64 that marshals NaN as null.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(n))
}

// median of vs, NaN (a figure that could not be had: "?" in tables,
// null in JSON) when there are none; the mean of the two middle
// values of an even count.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// nearestRank is the p-th percentile (0 < p <= 100) of vs by the
// nearest-rank method, NaN when there are none.
func nearestRank(vs []float64, p float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// mean of vs, 0 when there are none.
func mean(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	var t float64
	for _, v := range vs {
		t += v
	}
	return t / float64(len(vs))
}

// ratio is a/b, NaN when b is zero or either is NaN.
func ratio(a, b float64) float64 {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return a / b
}

// f formats v with prec decimals, "?" when NaN.
func f(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "?"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// fmtInt formats the integer part of v with thousands separators:
// 1234567.8 is "1,234,567"; "?" when NaN.
func fmtInt(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "?"
	}
	s := strconv.FormatInt(int64(v), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// The comparisons of a target.
func ge(a, b float64) bool { return a >= b }
func le(a, b float64) bool { return a <= b }
func lt(a, b float64) bool { return a < b }

// verdict says whether v meets target under op: "met", "MISSED", or
// "n/a" when v is NaN.
func verdict(v float64, op func(a, b float64) bool, target float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case op(v, target):
		return "met"
	default:
		return "MISSED"
	}
}

// benchValues are the values before unit on the lines of benchmark name
// (name itself or name-GOMAXPROCS) in `go test -bench` output.
func benchValues(output, name, unit string) []float64 {
	re := regexp.MustCompile("^" + regexp.QuoteMeta(name) + "(-[0-9]+)?$")
	var vs []float64
	sc := bufio.NewScanner(strings.NewReader(output))
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 3 || !re.MatchString(fs[0]) {
			continue
		}
		for i := 2; i < len(fs); i++ {
			if fs[i] != unit {
				continue
			}
			if v, err := strconv.ParseFloat(fs[i-1], 64); err == nil {
				vs = append(vs, v)
			}
		}
	}
	return vs
}

// benchMedian is the median of benchValues in file; NaN when the file
// or the benchmark is missing.
func benchMedian(file, name, unit string) float64 {
	data, err := os.ReadFile(file)
	if err != nil {
		return math.NaN()
	}
	return median(benchValues(string(data), name, unit))
}

// mb is bytes in MB (10^6).
func mb(bytes int64) float64 { return float64(bytes) / 1e6 }

// fileSize is the size of file, 0 when it cannot be read.
func fileSize(file string) int64 {
	st, err := os.Stat(file)
	if err != nil {
		return 0
	}
	return st.Size()
}

// table writes a Markdown table: the header row, its rule, then rows.
func table(header []string, rows [][]string) string {
	var sb strings.Builder
	sb.WriteString("| " + strings.Join(header, " | ") + " |\n")
	sb.WriteString("|" + strings.Repeat("---|", len(header)) + "\n")
	for _, r := range rows {
		sb.WriteString(row(r...))
	}
	return sb.String()
}

// row is one Markdown table row.
func row(cells ...string) string {
	return "| " + strings.Join(cells, " | ") + " |\n"
}

// nan is the value of a figure that could not be had: "?" in the tables,
// null in JSON.
func nan() float64 { return math.NaN() }
