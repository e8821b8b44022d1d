package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgrag/kgrag/internal/cliconfig"
	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

// isolateConfig runs the test in an empty folder, with no KGRAG_* variable
// (other than the test harness's) and an empty XDG_CONFIG_HOME, so that no
// config file or setting of the machine leaks in. It returns the folder.
func isolateConfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "KGRAG_") && !strings.HasPrefix(k, "KGRAG_TEST") {
			t.Setenv(k, "") // restored after the test
			os.Unsetenv(k)
		}
	}
	return dir
}

func writeTestFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// runInProcess runs kgrag in process with args.
func runInProcess(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = newApp(strings.NewReader(""), &out, &errb).Run(t.Context(), append([]string{"kgrag"}, args...))
	return out.String(), errb.String(), err
}

// doctorJSON runs kgrag doctor --json --show-config with args and decodes
// the report.
func doctorJSON(t *testing.T, args ...string) (doctorReport, error) {
	t.Helper()
	pre, post := splitGlobal(args)
	out, stderr, err := runInProcess(t, append(append(pre, "doctor", "--json", "--show-config"), post...)...)
	var rep doctorReport
	if out != "" {
		if jerr := json.Unmarshal([]byte(out), &rep); jerr != nil {
			t.Fatalf("doctor --json: %v\n%s\nstderr: %s", jerr, out, stderr)
		}
	}
	return rep, err
}

// splitGlobal moves --config FILE (given as the first two args) before the
// command name.
func splitGlobal(args []string) (pre, post []string) {
	if len(args) >= 2 && args[0] == "--config" {
		return args[:2], args[2:]
	}
	return nil, args
}

func (r doctorReport) setting(name string) (setting, bool) {
	for _, s := range r.Settings {
		if s.Name == name {
			return s, true
		}
	}
	return setting{}, false
}

// TestConfigPrecedence checks flag > env > file > default, sections, and
// that a value from the file reaches the model server.
func TestConfigPrecedence(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Dim: 8})
	tests := []struct {
		name string
		file string // ./kgrag.yaml, "" for none
		env  map[string]string
		args []string
		key  string // the setting checked
		want string
		from string
	}{
		{"default", "", nil, nil, "embed-model", defaultEmbedModel, "default"},
		{"file beats default", "embed-model: file-model\n", nil, nil, "embed-model", "file-model", "kgrag.yaml:1 (embed-model)"},
		{"env beats file", "embed-model: file-model\n", map[string]string{"KGRAG_EMBED_MODEL": "env-model"}, nil, "embed-model", "env-model", "env KGRAG_EMBED_MODEL"},
		{"flag beats env and file", "embed-model: file-model\n", map[string]string{"KGRAG_EMBED_MODEL": "env-model"}, []string{"--embed-model", "flag-model"}, "embed-model", "flag-model", "flag"},
		{"flag beats file", "llm-timeout: 1m\n", nil, []string{"--llm-timeout", "30s"}, "llm-timeout", "30s", "flag"},
		{"file sets a flag without env", "llm-timeout: 1m\n", nil, nil, "llm-timeout", "1m0s", "kgrag.yaml:1 (llm-timeout)"},
		{"underscores", "embed_model: under\n", nil, nil, "embed-model", "under", "kgrag.yaml:1 (embed-model)"},
		{"empty value leaves the default", "embed-model:\n", nil, nil, "embed-model", defaultEmbedModel, "default"},
		{"env expansion", "embed-model: ${DOCTOR_TEST_MODEL}-v2\n", map[string]string{"DOCTOR_TEST_MODEL": "m"}, nil, "embed-model", "m-v2", "kgrag.yaml:1 (embed-model)"},
		{"command section beats top level", "chat-model: top\ndoctor:\n  chat-model: mine\n", nil, nil, "chat-model", "mine", "kgrag.yaml:3 (doctor.chat-model)"},
		{"doctor reads ask's section", "chat-model: top\nask:\n  chat-model: asked\n", nil, nil, "chat-model", "asked", "kgrag.yaml:3 (ask.chat-model)"},
		{"doctor's section beats ask's", "doctor:\n  chat-model: mine\nask:\n  chat-model: asked\n", nil, nil, "chat-model", "mine", "kgrag.yaml:2 (doctor.chat-model)"},
		{"other command's section is not read", "load:\n  timeout: 1s\n", nil, nil, "timeout", "5m0s", "default"},
		{"env beats a section", "doctor:\n  chat-model: mine\n", map[string]string{"KGRAG_CHAT_MODEL": "env-chat"}, nil, "chat-model", "env-chat", "env KGRAG_CHAT_MODEL"},
		{"global flag from the file", "quiet: true\n", nil, nil, "quiet", "true", "kgrag.yaml:1 (quiet)"},
		{"global flag: env beats file", "quiet: true\n", map[string]string{"KGRAG_QUIET": "false"}, nil, "quiet", "false", "env KGRAG_QUIET"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := isolateConfig(t)
			if tt.file != "" {
				writeTestFile(t, filepath.Join(dir, configLocal), tt.file)
			}
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			srv.Reset()
			rep, err := doctorJSON(t, append([]string{"--llm-url", srv.URL()}, tt.args...)...)
			if err != nil {
				t.Fatalf("doctor: %v (report %+v)", err, rep)
			}
			s, ok := rep.setting(tt.key)
			if !ok {
				t.Fatalf("settings lack %s: %+v", tt.key, rep.Settings)
			}
			if s.Value != tt.want || s.Origin != tt.from {
				t.Errorf("%s = %q from %q; want %q from %q", tt.key, s.Value, s.Origin, tt.want, tt.from)
			}
			// The value reached the client, not just the report.
			if tt.key == "embed-model" {
				reqs := srv.Requests()
				var got string
				for _, r := range reqs {
					if strings.HasSuffix(r.Path, "/embeddings") {
						got = r.Model
					}
				}
				if got != tt.want {
					t.Errorf("the embedding request used model %q; want %q", got, tt.want)
				}
			}
		})
	}
}

// TestConfigLocation checks which file is read: --config, KGRAG_CONFIG,
// ./kgrag.yaml, $XDG_CONFIG_HOME/kgrag/config.yaml, in that order.
func TestConfigLocation(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Config{Dim: 8})
	type files struct{ flag, env, local, xdg bool }
	tests := []struct {
		name  string
		files files
		want  string // the embed-model, which each file sets to its own name
	}{
		{"none", files{}, defaultEmbedModel},
		{"xdg", files{xdg: true}, "xdg"},
		{"local beats xdg", files{local: true, xdg: true}, "local"},
		{"KGRAG_CONFIG beats local", files{env: true, local: true, xdg: true}, "env"},
		{"--config beats KGRAG_CONFIG", files{flag: true, env: true, local: true, xdg: true}, "flag"},
	}
	for _, tt := range tests {
		for _, after := range []bool{false, true} {
			name := tt.name
			if after {
				name += "/--config after the command"
			}
			t.Run(name, func(t *testing.T) {
				dir := isolateConfig(t)
				other := t.TempDir()
				paths := map[string]string{
					"flag":  filepath.Join(other, "flag.yaml"),
					"env":   filepath.Join(other, "env.yaml"),
					"local": filepath.Join(dir, configLocal),
					"xdg":   filepath.Join(dir, "xdg", configUserRel),
				}
				for which, on := range map[string]bool{"flag": tt.files.flag, "env": tt.files.env, "local": tt.files.local, "xdg": tt.files.xdg} {
					if on {
						writeTestFile(t, paths[which], "embed-model: "+which+"\n")
					}
				}
				if tt.files.env {
					t.Setenv(configEnv, paths["env"])
				}
				args := []string{"--llm-url", srv.URL()}
				if tt.files.flag {
					if after {
						args = append(args, "--config", paths["flag"])
					} else {
						args = append([]string{"--config", paths["flag"]}, args...)
					}
				}
				rep, err := doctorJSON(t, args...)
				if err != nil {
					t.Fatal(err)
				}
				if s, _ := rep.setting("embed-model"); s.Value != tt.want {
					t.Errorf("embed-model = %q from %q; want %q", s.Value, s.Origin, tt.want)
				}
				wantFile := "none"
				if p, ok := paths[tt.want]; ok {
					wantFile = p
					if tt.want == "local" {
						wantFile = configLocal
					}
				}
				if !strings.HasPrefix(rep.ConfigFile, wantFile) {
					t.Errorf("config_file = %q; want %q", rep.ConfigFile, wantFile)
				}
			})
		}
	}
}

// TestConfigErrors checks that mistakes in the file stop every command
// with a usage error naming the file, the line and the key, and never the
// value of a secret.
func TestConfigErrors(t *testing.T) {
	const secret = "hunter2-secret"
	tests := []struct {
		name string
		file string
		want []string // in the message
	}{
		{"unknown key", "password: " + secret + "\nstor: http://x\n", []string{":2:", "stor", "unknown key", `did you mean "store"?`}},
		{"unknown key in a section", "ask:\n  password: " + secret + "\n  chat-modle: x\n", []string{":3:", "ask.chat-modle", "unknown key", `"chat-model"`}},
		{"flag of another command in a section", "load:\n  chat-model: x\n", []string{":2:", "load.chat-model", "not a flag of kgrag load"}},
		{"command without a mapping", "ask: " + secret + "\n", []string{":1:", "ask", "is a command"}},
		{"mapping for a flag", "store:\n  url: x\n", []string{":1:", "store", "takes a value"}},
		{"set twice", "graph: a\ngraph: b\n", []string{":2:", "graph", "set twice (first at line 1"}},
		{"secret and its file", "password: " + secret + "\npassword_file: /x\n", []string{":2:", "password-file", "set twice"}},
		{"--config in the file", "config: other.yaml\n", []string{":1:", "config", "cannot be set in the config file"}},
		{"global flag in a section", "load:\n  quiet: true\n", []string{":2:", "load.quiet", "global flag", "top level"}},
		{"unset variable", "password: ${KGRAG_NOT_SET_ANYWHERE}" + secret + "\n", []string{":1:", "password", "${KGRAG_NOT_SET_ANYWHERE} is not set", "--no-expand-env"}},
		{"not a mapping", "- store\n", []string{":1:", "mapping"}},
		{"bad YAML", "store: [x\n", []string{"kgrag.yaml", "yaml:"}},
		{"missing secret file", "token-file: /nonexistent/kgrag-token\n", []string{":1:", "token-file", "nonexistent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := isolateConfig(t)
			writeTestFile(t, filepath.Join(dir, configLocal), tt.file)
			// load reads token-file: ontology has no flags to read it.
			_, _, err := runInProcess(t, "load", "--input", dir, "--turtle", filepath.Join(dir, "out.ttl"))
			if err == nil {
				t.Fatal("no error")
			}
			var ue *usageError
			if !errors.As(err, &ue) || exitCode(t.Context(), err) != exitUsage {
				t.Errorf("error %v (%T) is not a usage error (exit 2)", err, err)
			}
			msg := err.Error()
			for _, w := range append(tt.want, "config "+configLocal) {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, secret) {
				t.Errorf("message %q shows the secret", msg)
			}
		})
	}
	t.Run("missing --config file", func(t *testing.T) {
		isolateConfig(t)
		_, _, err := runInProcess(t, "--config", "/nonexistent/kgrag.yaml", "ontology")
		if err == nil || exitCode(t.Context(), err) != exitUsage || !strings.Contains(err.Error(), "/nonexistent/kgrag.yaml") {
			t.Errorf("err = %v; want a usage error naming the file", err)
		}
	})
	t.Run("bad value", func(t *testing.T) {
		dir := isolateConfig(t)
		writeTestFile(t, filepath.Join(dir, configLocal), "llm-timeout: soon\n")
		_, _, err := runInProcess(t, "doctor")
		if err == nil || !strings.Contains(err.Error(), "kgrag.yaml:1 (llm-timeout)") {
			t.Errorf("err = %v; want it to name kgrag.yaml:1 (llm-timeout)", err)
		}
	})
}

// TestConfigOtherCommands: keys for flags of commands that are not running
// are accepted, and do not change the running one.
func TestConfigOtherCommands(t *testing.T) {
	dir := isolateConfig(t)
	writeTestFile(t, filepath.Join(dir, configLocal), `# settings for every command
chat-model: llama3.2
batch-size: 10
concurrency: 2
with-ontology: true
load:
  base: http://example.org/mine/
  omit-document-text: true
embed:
  batch-size: 20
ask:
  max-context-tokens: 8000
`)
	out, _, err := runInProcess(t, "ontology")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "gr:Entity") {
		t.Errorf("kgrag ontology printed no ontology:\n%.300s", out)
	}
}

// TestConfigSecrets: secrets from the file or a file it names reach the
// server without their final newline and are never printed.
func TestConfigSecrets(t *testing.T) {
	const key = "sk-config-secret"
	srv := llmtest.Start(t, llmtest.Config{Dim: 8})
	for _, tt := range []struct{ name, file string }{
		{"inline", "llm-key: " + key + "\n"},
		{"file", "llm_key_file: KEYFILE\n"},
		{"env file", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := isolateConfig(t)
			keyFile := filepath.Join(dir, "key")
			writeTestFile(t, keyFile, key+"\n")
			writeTestFile(t, filepath.Join(dir, configLocal), strings.ReplaceAll(tt.file, "KEYFILE", keyFile))
			if tt.file == "" {
				t.Setenv("KGRAG_LLM_KEY_FILE", keyFile)
			}
			srv.Reset()
			out, stderr, err := runInProcess(t, "doctor", "--show-config", "--llm-url", srv.URL())
			if err != nil {
				t.Fatalf("doctor: %v\n%s", err, out)
			}
			if strings.Contains(out+stderr, key) {
				t.Errorf("doctor printed the key:\n%s", out)
			}
			if !strings.Contains(out, "(hidden)") {
				t.Errorf("doctor --show-config does not show llm-key as hidden:\n%s", out)
			}
			for _, r := range srv.Requests() {
				if r.Auth != "Bearer "+key {
					t.Errorf("%s sent Authorization %q; want the key without a newline", r.Path, r.Auth)
				}
			}
		})
	}
}

// TestConfigHelp: --help states the precedence, and flags still list their
// env variables once the file is one of their sources.
func TestConfigHelp(t *testing.T) {
	isolateConfig(t)
	out, _, err := runInProcess(t, "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"flag > environment variable > config file > default", "--config FILE", "KGRAG_CONFIG", "./kgrag.yaml", "doctor"} {
		if !strings.Contains(out, want) {
			t.Errorf("kgrag --help lacks %q", want)
		}
	}
	out, _, err = runInProcess(t, "doctor", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[$KGRAG_STORE]", "[$KGRAG_EMBED_MODEL]", "[$KGRAG_CHAT_MODEL]", "EXIT STATUS"} {
		if !strings.Contains(out, want) {
			t.Errorf("kgrag doctor --help lacks %q", want)
		}
	}
}

// TestConfigCoversEveryFlag: every flag of every command reads the file,
// last of its sources, so a flag type without Sources cannot slip in.
func TestConfigCoversEveryFlag(t *testing.T) {
	app := newApp(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	for _, cmd := range app.Commands {
		for _, f := range cmd.Flags {
			name := f.Names()[0]
			if name == "help" {
				continue
			}
			if !cliconfig.ReadsFile(f, cmd.Name) {
				t.Errorf("kgrag %s --%s: the config file is not its last source, so the file cannot set it", cmd.Name, name)
			}
		}
	}
}
