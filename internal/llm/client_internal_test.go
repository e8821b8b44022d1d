package llm

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"2", 2 * time.Second, true},
		{"0.5", 500 * time.Millisecond, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"Sun, 29 Nov 2026 12:00:30 GMT", 30 * time.Second, true},
		{"Sun, 29 Nov 2026 11:00:00 GMT", 0, true},
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestBackoff(t *testing.T) {
	c, err := New(Config{Backoff: 100 * time.Millisecond, MaxBackoff: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond,
		3: 400 * time.Millisecond, 5: time.Second, 60: time.Second} {
		for range 20 {
			if got := c.backoff(n); got < want/2 || got > want {
				t.Errorf("backoff(%d) = %v; want within [%v, %v]", n, got, want/2, want)
			}
		}
	}
}

// TestPatchBody: the fields are written into the object, whatever its
// spacing or size, and the result decodes to the original fields plus
// them.
func TestPatchBody(t *testing.T) {
	patch := map[string]json.RawMessage{"temperature": json.RawMessage("0"),
		"response_format": json.RawMessage(`{"type":"json_object","schema":{"type":"object"}}`)}
	tests := []string{`{}`, ` { } `, `{"model":"m","messages":[{"role":"user","content":"{\"a\": 1}"}]}`,
		"\n{\n  \"max_tokens\": 5\n}\n"}
	for _, body := range tests {
		req, err := http.NewRequest(http.MethodPost, "http://x/v1/chat/completions", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if err := patchBody(req, patch); err != nil {
			t.Fatalf("patchBody(%q): %v", body, err)
		}
		got, _ := io.ReadAll(req.Body)
		var have, orig map[string]any
		if err := json.Unmarshal(got, &have); err != nil {
			t.Fatalf("patchBody(%q) = %q: %v", body, got, err)
		}
		if err := json.Unmarshal([]byte(body), &orig); err != nil {
			t.Fatal(err)
		}
		for k, v := range patch {
			var want any
			json.Unmarshal(v, &want)
			orig[k] = want
		}
		if !reflect.DeepEqual(have, orig) || req.ContentLength != int64(len(got)) {
			t.Errorf("patchBody(%q) = %s; want %v", body, got, orig)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, "http://x", strings.NewReader(`[1]`))
	if err := patchBody(req, patch); err == nil {
		t.Errorf("patchBody of an array: no error")
	}
}
