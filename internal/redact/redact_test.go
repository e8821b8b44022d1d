package redact_test

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/redact"
)

func TestURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://localhost:3030/ds", "http://localhost:3030/ds"},
		{"http://admin:s3cret@localhost:3030/ds", "http://localhost:3030/ds"},
		{"https://host/v1?api_key=sk-123&x=1", "https://host/v1"},
		{"http://host/sparql#frag", "http://host/sparql"},
		{"http://user@host/", "http://host/"},
		{"http://[::1", "(unparsable URL)"},
	}
	for _, tt := range tests {
		if got := redact.URL(tt.in); got != tt.want {
			t.Errorf("URL(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestURLs(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://a:9200", "http://a:9200"},
		{"http://u:pw@a:9200, http://b:9200?k=1", "http://a:9200,http://b:9200"},
		{"http://a:9200,http://[::1", "http://a:9200,(unparsable URL)"},
	}
	for _, tt := range tests {
		if got := redact.URLs(tt.in); got != tt.want {
			t.Errorf("URLs(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestText(t *testing.T) {
	s := redact.New().Basic("kgrag", "pw-Sweep-42").Token("sk-ABCDEF123456").URL("http://u:url-pass-9@h/ds?key=qkey-777")
	tests := []struct {
		name, in string
		gone     []string // must not be in the result
		kept     []string // must be
	}{
		{"values", "password pw-Sweep-42 and key sk-ABCDEF123456", []string{"pw-Sweep-42", "sk-ABCDEF123456"}, []string{"password", redact.Mask}},
		{"basic header echo", `{"headers": {"Authorization": "Basic a2dyYWc6cHctU3dlZXAtNDI="}}`, []string{"a2dyYWc6cHctU3dlZXAtNDI="}, []string{"headers"}},
		{"unknown basic header", "Authorization: Basic Zm9vOmJhcg==\nHost: x", []string{"Zm9vOmJhcg=="}, []string{"Host: x"}},
		{"unknown bearer", "sent Bearer eyJhbGciOiJIUzI1NiJ9.e30.x", []string{"eyJhbGciOiJIUzI1NiJ9"}, []string{"Bearer"}},
		{"url user info", "POST http://someone:other-pass@store:8890/sparql failed", []string{"other-pass", "someone"}, []string{"http://store:8890/sparql"}},
		{"url password of the config", "got url-pass-9 back", []string{"url-pass-9"}, nil},
		{"query value", "GET /v1/models?key=qkey-777: 500", []string{"qkey-777"}, nil},
		{"query key unknown", "GET https://h/v1?api_key=zzz-111&model=m", []string{"zzz-111"}, []string{"model=m"}},
		{"prose", "Basic authentication failed for user kgrag", nil, []string{"Basic authentication failed for user kgrag"}},
	}
	for _, tt := range tests {
		got := s.Text(tt.in)
		for _, g := range tt.gone {
			if strings.Contains(got, g) {
				t.Errorf("%s: Text(%q) = %q; still holds %q", tt.name, tt.in, got, g)
			}
		}
		for _, k := range tt.kept {
			if !strings.Contains(got, k) {
				t.Errorf("%s: Text(%q) = %q; want it to keep %q", tt.name, tt.in, got, k)
			}
		}
	}
}

func TestError(t *testing.T) {
	s := redact.New("secret-value")
	err := fmt.Errorf("open: %w: secret-value", fs.ErrNotExist)
	got := s.Error(err)
	if strings.Contains(got.Error(), "secret-value") || !errors.Is(got, fs.ErrNotExist) {
		t.Errorf("Error(%v) = %v; want it masked, still fs.ErrNotExist", err, got)
	}
	plain := errors.New("nothing to hide")
	if s.Error(plain) != plain || s.Error(nil) != nil {
		t.Error("Error changed an error with nothing to mask, or nil")
	}
}
