package sparqlq

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"net/http"
	"strings"
	"sync"

	"github.com/kgrag/kgrag/internal/redact"
)

// Auth adds credentials to requests. The implementations are BasicAuth,
// DigestAuth and BearerAuth; all are safe for concurrent use. Their String
// methods never show the secret.
type Auth interface {
	// authorize sets the credentials on req before it is sent.
	authorize(req *http.Request) error
	// challenge reads a 401 answer to req and reports whether sending the
	// request again may now succeed.
	challenge(req *http.Request, resp *http.Response) bool
	// mask adds the credentials, in the forms they travel in, to what
	// error messages must not show.
	mask(s redact.Secrets) redact.Secrets
	String() string
}

// BasicAuth returns HTTP basic authentication (RFC 7617).
func BasicAuth(user, password string) Auth { return &basicAuth{user: user, password: password} }

type basicAuth struct{ user, password string }

func (a *basicAuth) authorize(req *http.Request) error {
	req.SetBasicAuth(a.user, a.password)
	return nil
}
func (a *basicAuth) challenge(*http.Request, *http.Response) bool { return false }
func (a *basicAuth) String() string                               { return "basic(" + a.user + ")" }
func (a *basicAuth) mask(s redact.Secrets) redact.Secrets         { return s.Basic(a.user, a.password) }

// BearerAuth returns bearer token authentication (RFC 6750).
func BearerAuth(token string) Auth { return &bearerAuth{token: token} }

type bearerAuth struct{ token string }

func (a *bearerAuth) authorize(req *http.Request) error {
	req.Header.Set("Authorization", "Bearer "+a.token)
	return nil
}
func (a *bearerAuth) challenge(*http.Request, *http.Response) bool { return false }
func (a *bearerAuth) String() string                               { return "bearer" }
func (a *bearerAuth) mask(s redact.Secrets) redact.Secrets         { return s.Token(a.token) }

// DigestAuth returns HTTP digest authentication (RFC 7616) with the MD5,
// MD5-sess, SHA-256 and SHA-256-sess algorithms and qop "auth" (or none, for
// RFC 2069 servers). The first request goes without credentials; the
// server's challenge is then remembered and answered up front, with a fresh
// nonce count, until the server asks again (for example with stale=true).
func DigestAuth(user, password string) Auth {
	return &digestAuth{user: user, password: password}
}

type digestAuth struct {
	user, password string

	mu sync.Mutex
	ch *digestChallenge
	nc uint32
}

type digestChallenge struct {
	realm, nonce, opaque, algorithm, qop string
	userhash                             bool
}

func (a *digestAuth) String() string                       { return "digest(" + a.user + ")" }
func (a *digestAuth) mask(s redact.Secrets) redact.Secrets { return s.Add(a.password) }

func (a *digestAuth) challenge(req *http.Request, resp *http.Response) bool {
	for _, v := range resp.Header.Values("WWW-Authenticate") {
		ch, ok := parseDigestChallenge(v)
		if !ok {
			continue
		}
		if _, ok := digestHash(ch.algorithm); !ok {
			continue
		}
		a.mu.Lock()
		prev := a.ch
		a.ch = ch
		a.nc = 0
		a.mu.Unlock()
		// Retry when this is news: a first challenge, a new nonce (stale) or a
		// request that went without credentials.
		return prev == nil || prev.nonce != ch.nonce || req.Header.Get("Authorization") == ""
	}
	return false
}

func (a *digestAuth) authorize(req *http.Request) error {
	a.mu.Lock()
	ch := a.ch
	a.nc++
	nc := a.nc
	a.mu.Unlock()
	if ch == nil {
		return nil // wait for the challenge
	}
	newHash, _ := digestHash(ch.algorithm)
	h := func(s string) string {
		x := newHash()
		x.Write([]byte(s))
		return hex.EncodeToString(x.Sum(nil))
	}
	var cb [16]byte
	if _, err := rand.Read(cb[:]); err != nil {
		return err
	}
	cnonce := hex.EncodeToString(cb[:])
	uri := req.URL.RequestURI()
	ha1 := h(a.user + ":" + ch.realm + ":" + a.password)
	if strings.HasSuffix(strings.ToLower(ch.algorithm), "-sess") {
		ha1 = h(ha1 + ":" + ch.nonce + ":" + cnonce)
	}
	ha2 := h(req.Method + ":" + uri)
	ncs := fmt.Sprintf("%08x", nc)
	var response string
	if ch.qop == "" {
		response = h(ha1 + ":" + ch.nonce + ":" + ha2)
	} else {
		response = h(ha1 + ":" + ch.nonce + ":" + ncs + ":" + cnonce + ":" + ch.qop + ":" + ha2)
	}
	user := a.user
	if ch.userhash {
		user = h(a.user + ":" + ch.realm)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `Digest username=%s, realm=%s, nonce=%s, uri=%s`,
		quote(user), quote(ch.realm), quote(ch.nonce), quote(uri))
	if ch.algorithm != "" {
		fmt.Fprintf(&b, ", algorithm=%s", ch.algorithm)
	}
	fmt.Fprintf(&b, ", response=%s", quote(response))
	if ch.qop != "" {
		fmt.Fprintf(&b, ", qop=%s, nc=%s, cnonce=%s", ch.qop, ncs, quote(cnonce))
	}
	if ch.opaque != "" {
		fmt.Fprintf(&b, ", opaque=%s", quote(ch.opaque))
	}
	if ch.userhash {
		b.WriteString(", userhash=true")
	}
	req.Header.Set("Authorization", b.String())
	return nil
}

func digestHash(algorithm string) (func() hash.Hash, bool) {
	switch strings.ToUpper(algorithm) {
	case "", "MD5", "MD5-SESS":
		return md5.New, true
	case "SHA-256", "SHA-256-SESS":
		return sha256.New, true
	}
	return nil, false
}

// parseDigestChallenge reads one WWW-Authenticate value of scheme Digest.
func parseDigestChallenge(v string) (*digestChallenge, bool) {
	v = strings.TrimSpace(v)
	if len(v) < 7 || !strings.EqualFold(v[:7], "digest ") {
		return nil, false
	}
	params := parseAuthParams(v[7:])
	ch := &digestChallenge{
		realm:     params["realm"],
		nonce:     params["nonce"],
		opaque:    params["opaque"],
		algorithm: params["algorithm"],
		userhash:  strings.EqualFold(params["userhash"], "true"),
	}
	if ch.nonce == "" {
		return nil, false
	}
	if q, ok := params["qop"]; ok {
		for _, o := range strings.Split(q, ",") {
			if strings.EqualFold(strings.TrimSpace(o), "auth") {
				ch.qop = "auth"
			}
		}
		if ch.qop == "" {
			return nil, false // only auth-int offered: unsupported
		}
	}
	return ch, true
}

// parseAuthParams parses comma-separated name=value pairs where values may be
// quoted strings with backslash escapes.
func parseAuthParams(s string) map[string]string {
	m := map[string]string{}
	for {
		s = strings.TrimLeft(s, " \t,")
		if s == "" {
			return m
		}
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return m
		}
		name := strings.ToLower(strings.TrimSpace(s[:eq]))
		s = strings.TrimLeft(s[eq+1:], " \t")
		var val string
		if strings.HasPrefix(s, `"`) {
			var b strings.Builder
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
			}
			val = b.String()
			if i < len(s) {
				i++
			}
			s = s[i:]
		} else {
			end := strings.IndexByte(s, ',')
			if end < 0 {
				end = len(s)
			}
			val = strings.TrimSpace(s[:end])
			s = s[end:]
		}
		m[name] = val
	}
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
