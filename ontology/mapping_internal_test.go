package ontology

import "testing"

func TestDateTime(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"1843-12-01T00:00:00", "1843-12-01T00:00:00", true},
		{"2025-09-16 16:20:36 -0700", "2025-09-16T16:20:36-07:00", true},
		{"2024-11-05T10:00:00Z", "2024-11-05T10:00:00Z", true},
		{"2024-11-05T10:00:00.250+01:00", "2024-11-05T10:00:00.25+01:00", true},
		{"2024-11-05 10:00:00", "2024-11-05T10:00:00", true},
		{"Christmas Eve", "", false},
		{"1843", "", false},
	}
	for _, tt := range tests {
		got, ok := dateTime(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("dateTime(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
