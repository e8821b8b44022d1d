// Command kgrag turns Microsoft GraphRAG output into linked data and answers
// questions over it with a local LLM. Run `kgrag --help` for the commands.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kgrag/kgrag/graphrag"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/kgrag/kgrag/internal/llmcall"
	"github.com/kgrag/kgrag/internal/redact"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newApp(os.Stdin, os.Stdout, os.Stderr).Run(ctx, os.Args)
	code := exitCode(ctx, err) // before stop, which cancels ctx
	stop()
	if err != nil {
		// The clients mask the secrets they were given; this catches the
		// rest, whatever path an error took.
		err = secretsOf(os.Args[1:], os.Environ()).Error(err)
		if wantsJSON(os.Args[1:]) {
			printJSONError(os.Stderr, err, code)
		} else {
			printError(os.Stderr, err)
		}
	}
	os.Exit(code)
}

// secretsOf collects the secrets a command line and environment give: the
// values of secret flags and KGRAG_ variables (and the files their _FILE
// variables name), and what URLs among the arguments carry.
func secretsOf(args, env []string) redact.Secrets {
	var s redact.Secrets
	for i, a := range args {
		if strings.Contains(a, "://") {
			u := a
			if _, after, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
				u = after // --store=URL
			}
			s = s.URL(u)
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || !isSecretName(name) {
			continue
		}
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
		}
		s = s.Add(value)
	}
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "KGRAG_") {
			continue
		}
		switch {
		case strings.HasSuffix(name, "_FILE"):
			if v, err := readSecret(value); err == nil {
				s = s.Add(v)
			}
		case isSecretName(name):
			s = s.Add(value)
		case strings.Contains(value, "://"):
			s = s.URL(value)
		}
	}
	return s
}

// wantsJSON reports whether the command line asks for JSON output (--json
// before any "--"), so that its final error is JSON too.
func wantsJSON(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "-json", "--json=true", "-json=true":
			return true
		}
	}
	return false
}

// printJSONError prints err as one JSON object, for scripts that read
// --json output: {"error": "...", "exit_code": n, "try": "..."}.
func printJSONError(w io.Writer, err error, code int) {
	out := struct {
		Error    string `json:"error"`
		ExitCode int    `json:"exit_code"`
		Try      string `json:"try,omitempty"`
	}{Error: err.Error(), ExitCode: code}
	var ue *usageError
	if errors.As(err, &ue) {
		out.Try = ue.try
	}
	b, _ := json.Marshal(out)
	fmt.Fprintf(w, "%s\n", b)
}

// Exit codes. Scripts may rely on them; they are listed in --help.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitMalformed   = 3
	exitStoreDown   = 10
	exitModelDown   = 11
	exitInterrupted = 130
)

// usageError is a mistake in the command line: exit 2 and a hint.
type usageError struct {
	msg string
	try string // a command line that would work, "" for none
}

func (e *usageError) Error() string { return e.msg }

func usagef(try, format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), try: try}
}

// storeDownError marks a store that could not be reached at all.
type storeDownError struct{ err error }

func (e *storeDownError) Error() string { return e.err.Error() }
func (e *storeDownError) Unwrap() error { return e.err }

func exitCode(ctx context.Context, err error) int {
	var ue *usageError
	var sd *storeDownError
	var le *llm.Error // only errors of the model client: other network errors are not exit 11
	switch {
	case err == nil:
		return exitOK
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, &ue):
		return exitUsage
	case errors.Is(err, graphrag.ErrEmptyKey), errors.Is(err, graphrag.ErrKeyValue),
		errors.Is(err, graphrag.ErrNotInteger), errors.Is(err, graphrag.ErrTooMalformed):
		return exitMalformed
	case errors.As(err, &sd):
		return exitStoreDown
	case errors.As(err, &le) && (llm.Unreachable(err) || errors.Is(err, llm.ErrResponse) || errors.Is(err, llm.ErrServer)),
		errors.Is(err, llmcall.ErrUnusable):
		return exitModelDown
	}
	return exitFailure
}

func printError(w io.Writer, err error) {
	fmt.Fprintf(w, "kgrag: %v\n", err)
	var ue *usageError
	if errors.As(err, &ue) && ue.try != "" {
		fmt.Fprintf(w, "Try: %s\n", ue.try)
	}
}
