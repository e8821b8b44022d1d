// Package redact keeps secrets out of what kgrag prints. It is the one
// place that decides what of a URL may be shown and which secrets a message
// from a server may carry: a store, a model server or Elasticsearch that
// fails can echo the request, headers included, in its error body.
//
//	s := redact.New().Basic(user, password).Token(apiKey).URL(storeURL)
//	fmt.Println(redact.URL(storeURL)) // http://host:3030/ds, no user info or query
//	return s.Error(err)                // err's text without any of them
package redact

import (
	"encoding/base64"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Mask stands for what was taken out.
const Mask = "[redacted]"

// URL returns raw for messages: without user information (a password may
// be in it), query (keys may be: ?api_key=...) and fragment. A URL that
// does not parse is not shown at all.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	u.RawQuery, u.ForceQuery = "", false
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// URLs is URL of each of a comma-separated list of URLs (the nodes of an
// Elasticsearch cluster), joined again by commas.
func URLs(raw string) string {
	parts := strings.Split(raw, ",")
	for i, p := range parts {
		parts[i] = URL(strings.TrimSpace(p))
	}
	return strings.Join(parts, ",")
}

// Secrets are the secret values a process was given, in every form a
// server may echo them. The zero value holds none and still masks
// authorization headers and user information in URLs. Methods return a new
// value; a Secrets is safe for concurrent use.
type Secrets struct{ values []string }

// New returns Secrets holding values (empty ones are ignored).
func New(values ...string) Secrets { return Secrets{}.Add(values...) }

// minSecret is the shortest value masked as written: a shorter "secret"
// (a one-letter password) would mask letters all over a message, and is
// caught by the header and URL patterns instead.
const minSecret = 4

// Add returns s with values added.
func (s Secrets) Add(values ...string) Secrets {
	out := slices.Clone(s.values)
	for _, v := range values {
		if len(v) >= minSecret && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	// Longest first, so that a secret containing another is masked whole.
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return Secrets{out}
}

// Token adds an API key or bearer token.
func (s Secrets) Token(token string) Secrets { return s.Add(token) }

// Basic adds a password and the base64 of "user:password" that HTTP basic
// authentication sends.
func (s Secrets) Basic(user, password string) Secrets {
	if password == "" {
		return s
	}
	return s.Add(password, base64.StdEncoding.EncodeToString([]byte(user+":"+password)))
}

// URL adds what a URL carries that may be secret: the password of its user
// information (with its basic authentication form) and its query values.
func (s Secrets) URL(raw string) Secrets {
	u, err := url.Parse(raw)
	if err != nil {
		return s
	}
	if p, ok := u.User.Password(); ok {
		s = s.Basic(u.User.Username(), p)
	}
	for _, vs := range u.Query() {
		s = s.Add(vs...)
	}
	return s
}

var (
	// An authorization header as a server may echo it (its value, scheme
	// and credentials, up to the end of the line or a quote).
	authHeader = regexp.MustCompile(`(?i)((?:proxy-)?authorization["']?\s*[:=]\s*["']?)[^"'\r\n,}]+`)
	// Credentials after an authentication scheme.
	schemeCred = regexp.MustCompile(`(?i)\b(basic|bearer|apikey|token)(\s+)[A-Za-z0-9+/=._~-]{8,}`)
	// User information in a URL: scheme://user:password@
	urlUser = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s@"']+@`)
	// A query parameter whose name says it is secret.
	queryKey = regexp.MustCompile(`(?i)([?&](?:api[_-]?key|key|token|access_token|password|secret)=)[^&\s"']+`)
)

// Text returns msg with every secret of s, every authorization header,
// the credentials after an authentication scheme, URL user information and
// secret-looking query values masked.
func (s Secrets) Text(msg string) string {
	for _, v := range s.values {
		msg = strings.ReplaceAll(msg, v, Mask)
	}
	msg = authHeader.ReplaceAllString(msg, "${1}"+Mask)
	msg = schemeCred.ReplaceAllStringFunc(msg, func(m string) string {
		// "Basic authentication" is prose; credentials hold a digit
		// or a character of base64 or a token beyond letters.
		sub := schemeCred.FindStringSubmatch(m)
		cred := m[len(sub[1])+len(sub[2]):]
		if !strings.ContainsAny(cred, "0123456789+/=._~-") {
			return m
		}
		return sub[1] + sub[2] + Mask
	})
	msg = urlUser.ReplaceAllString(msg, "${1}")
	msg = queryKey.ReplaceAllString(msg, "${1}"+Mask)
	return msg
}

// Error returns err with its text masked by Text; errors.Is and errors.As
// still see the causes. It returns err itself when nothing was masked, and
// nil for nil.
func (s Secrets) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if masked := s.Text(msg); masked != msg {
		return &maskedError{msg: masked, err: err}
	}
	return err
}

type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }
