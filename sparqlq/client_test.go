package sparqlq_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgrag/kgrag/sparqlq"
)

const jsonSelect = `{"head":{"vars":["s","n","l"]},"results":{"bindings":[
 {"s":{"type":"uri","value":"http://ex/a"},
  "n":{"type":"typed-literal","datatype":"http://www.w3.org/2001/XMLSchema#integer","value":"42"},
  "l":{"type":"literal","xml:lang":"ja","value":"日本 \"q\"\n😀"}},
 {"s":{"type":"bnode","value":"b0"}}]}}`

const xmlSelect = `<?xml version="1.0"?>
<sparql xmlns="http://www.w3.org/2005/sparql-results#">
 <head><variable name="s"/><variable name="n"/><variable name="l"/></head>
 <results>
  <result>
   <binding name="s"><uri>http://ex/a</uri></binding>
   <binding name="n"><literal datatype="http://www.w3.org/2001/XMLSchema#integer">42</literal></binding>
   <binding name="l"><literal xml:lang="ja">日本 "q"
😀</literal></binding>
  </result>
  <result><binding name="s"><bnode>b0</bnode></binding></result>
 </results>
</sparql>`

func TestSelectFormats(t *testing.T) {
	tests := []struct {
		name, ctype, body string
	}{
		{"json", "application/sparql-results+json", jsonSelect},
		{"json-charset", "application/sparql-results+json; charset=utf-8", jsonSelect},
		{"xml", "application/sparql-results+xml", xmlSelect},
		{"sniff-json", "text/plain", jsonSelect},
		{"sniff-xml", "", xmlSelect},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.ctype != "" {
					w.Header().Set("Content-Type", tt.ctype)
				}
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			c := newClient(t, sparqlq.Config{QueryURL: srv.URL + "/sparql", HTTPClient: srv.Client()})
			res, err := c.Select(context.Background(), "SELECT * {}")
			if err != nil {
				t.Fatalf("Select: %v", err)
			}
			if got := strings.Join(res.Vars, ","); got != "s,n,l" {
				t.Errorf("Vars = %q; want %q", got, "s,n,l")
			}
			if len(res.Bindings) != 2 {
				t.Fatalf("len(Bindings) = %d; want 2", len(res.Bindings))
			}
			row := res.Bindings[0]
			want := map[string]sparqlq.Term{
				"s": {Type: "uri", Value: "http://ex/a"},
				"n": {Type: "literal", Value: "42", Datatype: "http://www.w3.org/2001/XMLSchema#integer"},
				"l": {Type: "literal", Value: "日本 \"q\"\n😀", Lang: "ja"},
			}
			for k, w := range want {
				if row[k] != w {
					t.Errorf("row[%q] = %+v; want %+v", k, row[k], w)
				}
			}
			if n, err := row["n"].Int(); err != nil || n != 42 {
				t.Errorf("Int() = %d, %v; want 42", n, err)
			}
			if got := res.Bindings[1]["s"]; got.Type != "bnode" || got.Value != "b0" {
				t.Errorf("bnode = %+v", got)
			}
			if _, ok := res.Bindings[1]["n"]; ok {
				t.Errorf("unbound n present in row 2")
			}
		})
	}
}

func TestAsk(t *testing.T) {
	tests := []struct {
		ctype, body string
		want        bool
	}{
		{"application/sparql-results+json", `{"head":{},"boolean":true}`, true},
		{"application/sparql-results+json", `{"head":{},"boolean":false}`, false},
		{"application/sparql-results+xml", `<sparql xmlns="http://www.w3.org/2005/sparql-results#"><head/><boolean>true</boolean></sparql>`, true},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", tt.ctype)
			io.WriteString(w, tt.body)
		}))
		c := newClient(t, sparqlq.Config{QueryURL: srv.URL, HTTPClient: srv.Client()})
		got, err := c.Ask(context.Background(), "ASK {}")
		srv.Close()
		if err != nil || got != tt.want {
			t.Errorf("Ask(%s) = %v, %v; want %v", tt.body, got, err, tt.want)
		}
	}
}

// recorder remembers how the last request arrived.
type recorder struct {
	method, ctype, query, update, body, auth string
}

func recordingServer(t *testing.T, rec *recorder) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		*rec = recorder{method: r.Method, ctype: r.Header.Get("Content-Type"), body: string(b),
			auth: r.Header.Get("Authorization")}
		if r.Method == http.MethodGet {
			rec.query = r.URL.Query().Get("query")
		} else if strings.HasPrefix(rec.ctype, "application/x-www-form-urlencoded") {
			r.Body = io.NopCloser(strings.NewReader(string(b)))
			_ = r.ParseForm()
			rec.query, rec.update = r.PostForm.Get("query"), r.PostForm.Get("update")
		}
		w.Header().Set("Content-Type", "application/sparql-results+json")
		io.WriteString(w, `{"head":{},"boolean":true}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestQueryMethods(t *testing.T) {
	long := "ASK { ?s ?p \"" + strings.Repeat("x", 3000) + "\" }"
	tests := []struct {
		name       string
		method     sparqlq.Method
		query      string
		wantMethod string
		wantCType  string
	}{
		{"auto-short", sparqlq.MethodAuto, "ASK {}", "GET", ""},
		{"auto-long", sparqlq.MethodAuto, long, "POST", "application/x-www-form-urlencoded"},
		{"get", sparqlq.MethodGET, "ASK {}", "GET", ""},
		{"form", sparqlq.MethodPOSTForm, "ASK {}", "POST", "application/x-www-form-urlencoded"},
		{"direct", sparqlq.MethodPOSTDirect, "ASK {}", "POST", "application/sparql-query"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorder
			srv := recordingServer(t, &rec)
			c := newClient(t, sparqlq.Config{QueryURL: srv.URL, QueryMethod: tt.method, HTTPClient: srv.Client()})
			if _, err := c.Ask(context.Background(), tt.query); err != nil {
				t.Fatal(err)
			}
			if rec.method != tt.wantMethod || rec.ctype != tt.wantCType {
				t.Errorf("sent %s %q; want %s %q", rec.method, rec.ctype, tt.wantMethod, tt.wantCType)
			}
			got := rec.query
			if tt.method == sparqlq.MethodPOSTDirect {
				got = rec.body
			}
			if got != tt.query {
				t.Errorf("server got query %.40q; want %.40q", got, tt.query)
			}
		})
	}
}

func TestUpdateMethods(t *testing.T) {
	const u = "INSERT DATA { <urn:a> <urn:b> \"c & d = e\" }"
	tests := []struct {
		method    sparqlq.Method
		wantCType string
	}{
		{sparqlq.MethodAuto, "application/sparql-update"},
		{sparqlq.MethodPOSTDirect, "application/sparql-update"},
		{sparqlq.MethodPOSTForm, "application/x-www-form-urlencoded"},
	}
	for _, tt := range tests {
		var rec recorder
		srv := recordingServer(t, &rec)
		c := newClient(t, sparqlq.Config{UpdateURL: srv.URL, UpdateMethod: tt.method, HTTPClient: srv.Client()})
		if err := c.Update(context.Background(), u); err != nil {
			t.Fatal(err)
		}
		got := rec.body
		if tt.method == sparqlq.MethodPOSTForm {
			got = rec.update
		}
		if rec.ctype != tt.wantCType || got != u {
			t.Errorf("%v: sent %q %q; want %q %q", tt.method, rec.ctype, got, tt.wantCType, u)
		}
	}
	if _, err := sparqlq.New(sparqlq.Config{UpdateURL: "http://x", UpdateMethod: sparqlq.MethodGET}); err == nil {
		t.Errorf("New with GET updates: no error")
	}
}

func TestStatusError(t *testing.T) {
	body := strings.Repeat("E", 5000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3")
		http.Error(w, body, http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	c := newClient(t, sparqlq.Config{QueryURL: srv.URL + "/q?secret=tok", HTTPClient: srv.Client(),
		Auth: sparqlq.BearerAuth("s3cr3t-token")})
	_, err := c.Select(context.Background(), "SELECT * { ?s ?p ?o }")
	var se *sparqlq.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v; want *StatusError", err)
	}
	if se.StatusCode != 503 || se.Method != "GET" || se.URL != srv.URL+"/q" || se.RetryAfter != "3" {
		t.Errorf("StatusError = %+v", se)
	}
	if !se.Temporary() {
		t.Errorf("503 not Temporary")
	}
	if len(se.Body) > sparqlq.DefaultMaxErrorBody+20 || !strings.HasSuffix(se.Body, "[truncated]") {
		t.Errorf("Body not truncated: %d bytes", len(se.Body))
	}
	for _, secret := range []string{"s3cr3t-token", "secret=tok", "SELECT"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error %q shows %q", err, secret)
		}
	}
}

func TestTemporary(t *testing.T) {
	tests := []struct {
		code int
		want bool
	}{{400, false}, {401, false}, {404, false}, {408, true}, {429, true}, {500, true}, {501, false}, {502, true}, {503, true}, {504, true}}
	for _, tt := range tests {
		if got := (&sparqlq.StatusError{StatusCode: tt.code}).Temporary(); got != tt.want {
			t.Errorf("Temporary(%d) = %v; want %v", tt.code, got, tt.want)
		}
	}
}

func TestTransportErrorHidesSecrets(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close() // nothing listens any more
	c := newClient(t, sparqlq.Config{QueryURL: strings.Replace(u, "http://", "http://user:pa55word@", 1),
		Auth: sparqlq.BasicAuth("user", "pa55word")})
	_, err := c.Ask(context.Background(), "ASK { <urn:x> ?p ?o }")
	if err == nil {
		t.Fatal("no error from a closed server")
	}
	if s := err.Error(); strings.Contains(s, "pa55word") || strings.Contains(s, "urn:x") {
		t.Errorf("error %q shows a secret or the query", s)
	}
	if !strings.Contains(err.Error(), strings.TrimPrefix(u, "http://")) {
		t.Errorf("error %q does not name the endpoint", err)
	}
}

func TestTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer srv.Close()
	c := newClient(t, sparqlq.Config{QueryURL: srv.URL, HTTPClient: srv.Client(), Timeout: 50 * time.Millisecond})
	start := time.Now()
	_, err := c.Ask(context.Background(), "ASK {}")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v; want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestBasicAndBearer(t *testing.T) {
	tests := []struct {
		name string
		auth sparqlq.Auth
		ok   func(r *http.Request) bool
	}{
		{"basic", sparqlq.BasicAuth("alice", "pw:1"), func(r *http.Request) bool {
			u, p, ok := r.BasicAuth()
			return ok && u == "alice" && p == "pw:1"
		}},
		{"bearer", sparqlq.BearerAuth("tok-123"), func(r *http.Request) bool {
			return r.Header.Get("Authorization") == "Bearer tok-123"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !tt.ok(r) {
					http.Error(w, "no", http.StatusUnauthorized)
					return
				}
				w.Header().Set("Content-Type", "application/sparql-results+json")
				io.WriteString(w, `{"boolean":true}`)
			}))
			defer srv.Close()
			c := newClient(t, sparqlq.Config{QueryURL: srv.URL, HTTPClient: srv.Client(), Auth: tt.auth})
			if ok, err := c.Ask(context.Background(), "ASK {}"); err != nil || !ok {
				t.Errorf("Ask = %v, %v", ok, err)
			}
			wrong := newClient(t, sparqlq.Config{QueryURL: srv.URL, HTTPClient: srv.Client()})
			_, err := wrong.Ask(context.Background(), "ASK {}")
			var se *sparqlq.StatusError
			if !errors.As(err, &se) || se.StatusCode != 401 {
				t.Errorf("without auth: err = %v; want 401", err)
			}
			if s := fmt.Sprint(tt.auth); strings.Contains(s, "pw:1") || strings.Contains(s, "tok-123") {
				t.Errorf("String() = %q shows the secret", s)
			}
		})
	}
}

// digestServer checks RFC 7616 digest responses itself (MD5, qop=auth),
// counting challenges issued.
type digestServer struct {
	user, pass, realm string
	nonce             atomic.Value
	challenges        atomic.Int32
	staleEvery        int32 // rotate the nonce after this many good requests
	good              atomic.Int32
	requests          atomic.Int32 // every request, challenged ones included
}

func (d *digestServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.requests.Add(1)
	nonce := d.nonce.Load().(string)
	h := r.Header.Get("Authorization")
	if !strings.HasPrefix(h, "Digest ") {
		d.challenge(w, nonce, false)
		return
	}
	p := map[string]string{}
	for _, part := range strings.Split(h[len("Digest "):], ", ") {
		k, v, _ := strings.Cut(part, "=")
		p[k] = strings.Trim(v, `"`)
	}
	md := func(s string) string { x := md5.Sum([]byte(s)); return hex.EncodeToString(x[:]) }
	ha1 := md(d.user + ":" + d.realm + ":" + d.pass)
	ha2 := md(r.Method + ":" + r.URL.RequestURI())
	want := md(ha1 + ":" + p["nonce"] + ":" + p["nc"] + ":" + p["cnonce"] + ":auth:" + ha2)
	if p["username"] != d.user || p["uri"] != r.URL.RequestURI() || p["response"] != want || p["opaque"] != "op" {
		http.Error(w, "bad digest", http.StatusUnauthorized)
		return
	}
	if p["nonce"] != nonce {
		d.challenge(w, nonce, true)
		return
	}
	if n := d.good.Add(1); d.staleEvery > 0 && n%d.staleEvery == 0 {
		d.nonce.Store(fmt.Sprintf("nonce-%d", n))
	}
	w.Header().Set("Content-Type", "application/sparql-results+json")
	io.WriteString(w, `{"boolean":true}`)
}

func (d *digestServer) challenge(w http.ResponseWriter, nonce string, stale bool) {
	d.challenges.Add(1)
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(
		`Digest realm=%q, domain="/sparql-auth", nonce=%q, opaque="op", stale="%v", qop="auth", algorithm="MD5"`,
		d.realm, nonce, stale))
	http.Error(w, "auth", http.StatusUnauthorized)
}

func TestDigest(t *testing.T) {
	ds := &digestServer{user: "kgrag", pass: "pw", realm: "SPARQL", staleEvery: 3}
	ds.nonce.Store("n0")
	srv := httptest.NewServer(ds)
	defer srv.Close()
	c := newClient(t, sparqlq.Config{QueryURL: srv.URL + "/sparql-auth", UpdateURL: srv.URL + "/sparql-auth",
		UpdateMethod: sparqlq.MethodPOSTForm, HTTPClient: srv.Client(), Auth: sparqlq.DigestAuth("kgrag", "pw")})
	for i := range 7 {
		if ok, err := c.Ask(context.Background(), "ASK { ?s ?p ?o }"); err != nil || !ok {
			t.Fatalf("Ask #%d = %v, %v", i, ok, err)
		}
	}
	// A POST body must be replayed after the challenge.
	if err := c.Update(context.Background(), "INSERT DATA { <urn:a> <urn:b> <urn:c> }"); err != nil {
		t.Fatalf("Update: %v", err)
	}
	// One initial challenge, then one per nonce rotation (after 3 and 6 good requests).
	if n := ds.challenges.Load(); n != 3 {
		t.Errorf("challenges = %d; want 3 (the client should answer up front)", n)
	}
	// 8 requests, each challenged one sent twice.
	if n := ds.requests.Load(); n != 8+3 {
		t.Errorf("the server got %d requests; want 11 (8 requests, 3 answered challenges)", n)
	}
	bad := newClient(t, sparqlq.Config{QueryURL: srv.URL, HTTPClient: srv.Client(), Auth: sparqlq.DigestAuth("kgrag", "wrong")})
	_, err := bad.Ask(context.Background(), "ASK {}")
	var se *sparqlq.StatusError
	if !errors.As(err, &se) || se.StatusCode != 401 || strings.Contains(err.Error(), "wrong") {
		t.Errorf("wrong password: err = %v; want 401 without the password", err)
	}
}

func TestCAFile(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/sparql-results+json")
		io.WriteString(w, `{"boolean":true}`)
	}))
	defer srv.Close()
	// Without the CA the certificate is refused.
	plain := newClient(t, sparqlq.Config{QueryURL: srv.URL})
	if _, err := plain.Ask(context.Background(), "ASK {}"); err == nil {
		t.Errorf("self-signed server accepted without CA file")
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, sparqlq.Config{QueryURL: srv.URL, CAFile: ca})
	if ok, err := c.Ask(context.Background(), "ASK {}"); err != nil || !ok {
		t.Errorf("Ask with CA file = %v, %v", ok, err)
	}
	if _, err := sparqlq.New(sparqlq.Config{QueryURL: srv.URL, CAFile: filepath.Join(t.TempDir(), "none.pem")}); err == nil {
		t.Errorf("missing CA file: no error")
	}
}

func TestEscape(t *testing.T) {
	tests := []struct {
		in, want string
		bad      bool
	}{
		{"http://ex/a#b", "<http://ex/a#b>", false},
		{"http://ex/a b", "", true},
		{"http://ex/a>DROP ALL", "", true},
		{"", "", true},
	}
	for _, tt := range tests {
		got, err := sparqlq.IRIRef(tt.in)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("IRIRef(%q) = %q, %v; want %q (error %v)", tt.in, got, err, tt.want, tt.bad)
		}
	}
	if got, want := sparqlq.Literal("a\"b\\c\nd\té"), `"a\"b\\c\nd\té"`; got != want {
		t.Errorf("Literal = %s; want %s", got, want)
	}
}

func newClient(t *testing.T, cfg sparqlq.Config) *sparqlq.Client {
	t.Helper()
	c, err := sparqlq.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}
