package cliconfig

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

func testApp(c *Config) (*cli.Command, *string) {
	var got string
	app := &cli.Command{Name: "app", Flags: c.Flags(), Commands: []*cli.Command{{
		Name: "run",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "store", Sources: cli.EnvVars("APP_STORE")},
			&cli.StringFlag{Name: "password", Sources: SecretSource("APP_PASSWORD")},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			got = cmd.String("store") + "|" + cmd.String("password")
			return nil
		},
	}}}
	c.Attach(app)
	return app, &got
}

// TestPrecedence: flag > environment > file > default, and a secret read
// from the file its -file key names.
func TestPrecedence(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "pw")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "app.yaml")
	if err := os.WriteFile(cfg, []byte("store: from-file\nrun:\n  password-file: "+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		env  string
		args []string
		want string
	}{
		{"", nil, "from-file|s3cret"},
		{"from-env", nil, "from-env|s3cret"},
		{"from-env", []string{"--store", "from-flag"}, "from-flag|s3cret"},
	}
	for _, tt := range tests {
		t.Setenv("APP_STORE", tt.env)
		if tt.env == "" {
			os.Unsetenv("APP_STORE") // restored by Setenv's clean-up
		}
		c := New(Options{App: "app", Env: "APP_CONFIG", Local: "app.yaml", UserRel: "app/config.yaml", EnvPrefix: "APP_"})
		app, got := testApp(c)
		if err := app.Run(t.Context(), append([]string{"app", "--config", cfg, "run"}, tt.args...)); err != nil {
			t.Fatal(err)
		}
		if *got != tt.want {
			t.Errorf("env %q args %q: got %q; want %q", tt.env, tt.args, *got, tt.want)
		}
	}
}

// TestUnknownKey names the file, line and key, suggests the close one,
// and goes through Wrap.
func TestUnknownKey(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "app.yaml")
	if err := os.WriteFile(cfg, []byte("store: x\nstor: y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wrapped := errors.New("usage")
	c := New(Options{App: "app", Env: "APP_CONFIG", Local: "app.yaml", Wrap: func(err error) error { return errors.Join(wrapped, err) }})
	app, _ := testApp(c)
	err := app.Run(t.Context(), []string{"app", "--config", cfg, "run"})
	if !errors.Is(err, wrapped) || !strings.Contains(err.Error(), "app.yaml:2") || !strings.Contains(err.Error(), `did you mean "store"?`) {
		t.Errorf("error %v; want the wrapped error naming app.yaml:2 and suggesting store", err)
	}
}

// FuzzParseConfig: no input makes the parser panic.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"store: http://x\n", "run:\n  store: y\n", "a: [b\n", "- x\n", "&a x: *a\n",
		"password-file: /x\n", "store: ${HOME}\n", "? [a]\n: b\n", "run: &s\n  store: 3\nother: *s\n", "",
	} {
		f.Add(s)
	}
	c := New(Options{App: "app"})
	testApp(c)
	f.Fuzz(func(t *testing.T, text string) {
		_, _ = parseConfig("fuzz.yaml", []byte(text), c.schema, true, c.o)
	})
}
