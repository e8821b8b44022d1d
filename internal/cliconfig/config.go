// Package cliconfig makes a YAML file one more source of a command line's
// flags (urfave/cli v3), with the origin of every value and secrets that
// may come from files. Every flag of every command can be set in the file,
// whose keys are the long flag names: at the top level for every command
// that has the flag, or under a command's name for that command only.
// Precedence is flag > environment > file > default: the file is one more
// cli.ValueSource, appended to each flag's Sources after its env sources,
// so a flag given on the command line never consults it and an env
// variable found first wins. Unknown keys are errors, with the closest
// known key suggested; ${VAR} in values is expanded.
package cliconfig

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/kgrag/kgrag/internal/redact"
	"github.com/urfave/cli/v3"
	"go.yaml.in/yaml/v3"
)

// Options name the file and the program.
type Options struct {
	// App is the program's name, for messages ("kgrag").
	App string
	// Env is the variable naming the file ("KGRAG_CONFIG"), NoExpandEnv
	// the one that turns ${VAR} expansion off.
	Env, NoExpandEnv string
	// Local is the file looked for in the current directory
	// ("kgrag.yaml"), UserRel the one under $XDG_CONFIG_HOME or ~/.config
	// ("kgrag/config.yaml").
	Local, UserRel string
	// EnvPrefix is the prefix of the program's variables ("KGRAG_"):
	// its PREFIX*_FILE variables name secret files, checked before a run.
	EnvPrefix string
	// Sections are the sections of the file a command reads, most
	// specific first; the top level comes after them. Nil: the command's
	// own name.
	Sections func(command string) []string
	// Wrap turns the errors of reading the file into the program's own
	// (a usage error, say); nil leaves them.
	Wrap func(error) error
}

const (
	// SecretFileSuffix turns a secret's key into one that names a file
	// holding the secret: password-file, llm-key-file.
	SecretFileSuffix = "-file"
)

// configGlobalOnly names the global flags that the file cannot set: they
// say how to read it.
func configGlobalOnly(name string) bool { return name == "config" || name == "no-expand-env" }

// sections are the sections of the file command reads.
func (o Options) sections(command string) []string {
	if o.Sections == nil {
		return []string{command}
	}
	return o.Sections(command)
}

// configEntry is one Setting read from the file.
type configEntry struct {
	key   string // as written, with its section: "ask.chat-model"
	line  int
	value string
	// secretFile says value is the path of a file holding the value
	// (a "-file" key); it is read when the flag asks for it.
	secretFile bool
}

// where says where the entry is, for messages: "kgrag.yaml:3 (ask.store)".
func (e configEntry) where(path string) string { return fmt.Sprintf("%s:%d (%s)", path, e.line, e.key) }

// configFile is a parsed configuration file.
type configFile struct {
	o        Options
	path     string
	top      map[string]configEntry
	sections map[string]map[string]configEntry
}

// lookup returns the entry of flag for command: from the command's
// sections first, then the top level.
func (f *configFile) lookup(command, flag string) (configEntry, bool) {
	if f == nil {
		return configEntry{}, false
	}
	for _, s := range f.o.sections(command) {
		if e, ok := f.sections[s][flag]; ok {
			return e, true
		}
	}
	e, ok := f.top[flag]
	return e, ok
}

// configError is a mistake in the configuration file. It names the file,
// the line and the key; it never holds a value, which may be a secret.
type configError struct {
	Path string
	Line int // 0 when the whole file is concerned
	Key  string
	Err  error
	Hint string
}

func (e *configError) Error() string {
	var b strings.Builder
	b.WriteString("config ")
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ": %s", e.Key)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	if e.Hint != "" {
		b.WriteString(" (")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

func (e *configError) Unwrap() error { return e.Err }

// errUnknownKey matches keys that are no flag of any command.
var errUnknownKey = errors.New("unknown key")

// configSchema says which keys the file may hold: the long flag names of
// each command ("" for the global flags), and which of them are secrets.
type configSchema map[string]map[string]flagInfo

type flagInfo struct{ secret bool }

// known resolves key (a flag name or its "-file" form) in the flags of
// command, or of any command when command is "". It returns the flag's name
// and whether the key names a file holding the value.
func (s configSchema) known(command, key string) (name string, secretFile, ok bool) {
	match := func(flags map[string]flagInfo) (string, bool, bool) {
		if _, ok := flags[key]; ok {
			return key, false, true
		}
		if base, cut := strings.CutSuffix(key, SecretFileSuffix); cut && flags[base].secret {
			return base, true, true
		}
		return "", false, false
	}
	if command != "" {
		return match(s[command])
	}
	for c, flags := range s {
		if c == "" {
			continue
		}
		if n, sf, ok := match(flags); ok {
			return n, sf, true
		}
	}
	return "", false, false
}

// suggest returns the known key closest to key, or "" when none is close.
func (s configSchema) suggest(command, key string) string {
	best, bestD := "", 3 // at most two edits away
	try := func(flags map[string]flagInfo) {
		for name, fi := range flags {
			cands := []string{name}
			if fi.secret {
				cands = append(cands, name+SecretFileSuffix)
			}
			for _, c := range cands {
				if d := editDistance(key, c); d < bestD || (d == bestD && c < best) {
					best, bestD = c, d
				}
			}
		}
	}
	if command != "" {
		try(s[command])
	} else {
		for c, flags := range s {
			if c != "" {
				try(flags)
			}
		}
		for c := range s {
			if d := editDistance(key, c); c != "" && d < bestD {
				best, bestD = c, d
			}
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// envRef is a ${VAR} reference in a value.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// parseConfig reads the YAML text of the file at path against schema.
// Unknown keys are errors, so that a typo does not silently leave a
// default in place; so are keys for global flags that say how to read the
// file. With expand, ${VAR} in values is replaced by the environment
// variable, and an unset one is an error.
func parseConfig(path string, data []byte, schema configSchema, expand bool, o Options) (*configFile, error) {
	f := &configFile{o: o, path: path, top: map[string]configEntry{}, sections: map[string]map[string]configEntry{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &configError{Path: path, Err: err}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return f, nil // an empty file sets nothing
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return f, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, &configError{Path: path, Line: root.Line, Err: errors.New("the file must be a mapping of keys to values, like store: http://localhost:3030/ds")}
	}
	p := configParser{path: path, schema: schema, expand: expand, seen: map[string]int{}, app: o.App}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], deref(root.Content[i+1])
		key := normKey(k.Value)
		if _, isCommand := schema[key]; isCommand && key != "" && v.Kind == yaml.MappingNode {
			if err := p.dup(key, k.Line); err != nil {
				return nil, err
			}
			sec := map[string]configEntry{}
			for j := 0; j+1 < len(v.Content); j += 2 {
				if err := p.entry(sec, key, v.Content[j], deref(v.Content[j+1])); err != nil {
					return nil, err
				}
			}
			f.sections[key] = sec
			continue
		}
		if _, isCommand := schema[key]; isCommand && key != "" {
			return nil, &configError{Path: path, Line: k.Line, Key: key,
				Err: errors.New("is a command: its settings go below it, one flag-name: value per line, indented")}
		}
		if err := p.entry(f.top, "", k, v); err != nil {
			return nil, err
		}
	}
	return f, nil
}

type configParser struct {
	app    string
	path   string
	schema configSchema
	expand bool
	seen   map[string]int // qualified flag name → line, for duplicates
}

func deref(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// normKey lets keys be written with underscores, as in password_file.
func normKey(k string) string { return strings.ReplaceAll(strings.TrimSpace(k), "_", "-") }

func (p *configParser) dup(qualified string, line int) error {
	if first, ok := p.seen[qualified]; ok {
		return &configError{Path: p.path, Line: line, Key: qualified, Err: fmt.Errorf("set twice (first at line %d)", first)}
	}
	p.seen[qualified] = line
	return nil
}

// entry adds the Setting k: v of section (or the top level when section is
// "") to into.
func (p *configParser) entry(into map[string]configEntry, section string, k, v *yaml.Node) error {
	key := normKey(k.Value)
	qualified := key
	if section != "" {
		qualified = section + "." + key
	}
	fail := func(hint string, format string, args ...any) error {
		return &configError{Path: p.path, Line: k.Line, Key: qualified, Err: fmt.Errorf(format, args...), Hint: hint}
	}
	if k.Kind != yaml.ScalarNode {
		return fail("", "a key must be a name")
	}
	if _, global := p.schema[""][key]; global {
		switch {
		case configGlobalOnly(key):
			return fail("", "--%s cannot be set in the config file: it says how the file is read; use the flag or the environment", key)
		case section != "":
			return fail("put it at the top level", "--%s is a global flag", key)
		}
		return p.add(into, qualified, key, false, k, v)
	}
	name, secretFile, ok := p.schema.known(section, key)
	if !ok {
		hint := ""
		if s := p.schema.suggest(section, key); s != "" {
			hint = fmt.Sprintf("did you mean %q?", s)
		} else if section != "" {
			hint = "not a flag of " + p.app + " " + section + "; see " + p.app + " " + section + " --help"
		} else {
			hint = "keys are long flag names, like store or chat-model, or command names holding them"
		}
		return &configError{Path: p.path, Line: k.Line, Key: qualified, Err: errUnknownKey, Hint: hint}
	}
	return p.add(into, qualified, name, secretFile, k, v)
}

func (p *configParser) add(into map[string]configEntry, qualified, name string, secretFile bool, k, v *yaml.Node) error {
	fail := func(format string, args ...any) error {
		return &configError{Path: p.path, Line: k.Line, Key: qualified, Err: fmt.Errorf(format, args...)}
	}
	dupKey := qualified
	if secretFile {
		dupKey = strings.TrimSuffix(qualified, SecretFileSuffix)
	}
	if first, ok := p.seen[dupKey]; ok {
		return fail("set twice (first at line %d, as the value or its %s form)", first, SecretFileSuffix)
	}
	p.seen[dupKey] = k.Line
	var val string
	switch {
	case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null":
		return nil // "key:" with nothing after it leaves the flag unset
	case v.Kind == yaml.ScalarNode:
		val = v.Value
	case v.Kind == yaml.SequenceNode:
		items := make([]string, 0, len(v.Content))
		for _, it := range v.Content {
			it = deref(it)
			if it.Kind != yaml.ScalarNode {
				return fail("a list may hold only plain values")
			}
			items = append(items, it.Value)
		}
		val = strings.Join(items, ",") // as slice flags take them
	default:
		return fail("takes a value, not a mapping")
	}
	if p.expand {
		var missing string
		val = envRef.ReplaceAllStringFunc(val, func(ref string) string {
			name := envRef.FindStringSubmatch(ref)[1]
			s, ok := os.LookupEnv(name)
			if !ok && missing == "" {
				missing = name
			}
			return s
		})
		if missing != "" {
			return &configError{Path: p.path, Line: k.Line, Key: qualified,
				Err:  fmt.Errorf("${%s} is not set", missing),
				Hint: "set it, or give --no-expand-env to read ${...} as written"}
		}
	}
	into[name] = configEntry{key: qualified, line: k.Line, value: val, secretFile: secretFile}
	return nil
}

// Config is the configuration of one run of the app: where the file
// is, what it holds, and where each flag's value came from. It is filled
// while the command line is parsed and is not safe for concurrent use.
type Config struct {
	o        Options
	path     string // --config or KGRAG_CONFIG (the flag's Destination)
	noExpand bool   // --no-expand-env
	schema   configSchema

	loaded bool
	file   *configFile // nil when there is no file
	// err is the first error met while reading the file or a secret file
	// it names. Lookups cannot return errors, so the root's Before does.
	err error

	origins map[cli.Flag]string // flag → where its value came from
}

// New returns the configuration of one run; Attach it to the app.
func New(o Options) *Config {
	return &Config{o: o, schema: configSchema{}, origins: map[cli.Flag]string{}}
}

// Flags are the root's flags for the configuration file.
func (c *Config) Flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "config", Usage: "read settings from the YAML `FILE` (default: ./" + c.o.Local + ", else $XDG_CONFIG_HOME/" + c.o.UserRel + ")",
			Sources: cli.EnvVars(c.o.Env), Destination: &c.path, TakesFile: true},
		&cli.BoolFlag{Name: "no-expand-env", Usage: "read ${VAR} in the config file as written instead of expanding it", Destination: &c.noExpand,
			Sources: cli.EnvVars(c.o.NoExpandEnv)},
	}
}

// attach makes the file a source of every flag of every command of app,
// after the flag's own sources, and records where values come from. Call
// it once the commands are built.
func (c *Config) Attach(app *cli.Command) {
	c.schema[""] = map[string]flagInfo{}
	for _, f := range app.Flags {
		name := f.Names()[0]
		c.schema[""][name] = flagInfo{}
		if chain := FlagSources(f); chain != nil {
			c.track(f, chain)
		}
	}
	for _, cmd := range app.Commands {
		flags := map[string]flagInfo{}
		for _, f := range cmd.Flags {
			chain := FlagSources(f)
			if chain == nil {
				continue // a flag type without Sources cannot be configured
			}
			name := f.Names()[0]
			flags[name] = flagInfo{secret: IsSecret(name, chain)}
			c.track(f, chain)
			chain.Chain = append(chain.Chain, &trackedSource{src: &fileSource{cfg: c, command: cmd.Name, flag: name}, cfg: c, flag: f})
		}
		c.schema[cmd.Name] = flags
	}
	prev := app.Before
	app.Before = func(ctx context.Context, cmd *cli.Command) (context.Context, error) {
		if err := c.checkSecretFiles(os.Environ()); err != nil {
			return ctx, c.wrap(err)
		}
		if err := c.apply(cmd); err != nil {
			return ctx, err
		}
		if prev != nil {
			return prev(ctx, cmd)
		}
		return ctx, nil
	}
}

// track wraps the sources of f so that the one that supplies its value is
// recorded.
func (c *Config) track(f cli.Flag, chain *cli.ValueSourceChain) {
	for i, s := range chain.Chain {
		chain.Chain[i] = &trackedSource{src: s, cfg: c, flag: f}
	}
}

// apply runs before the command's action: it reports errors from reading
// the file, and sets the global flags the file holds (they are parsed before
// the subcommand names the file with --config, so they cannot read it as
// a source).
func (c *Config) apply(root *cli.Command) error {
	f, err := c.load()
	if err == nil {
		err = c.err
	}
	if err != nil {
		return c.wrap(err)
	}
	if f == nil {
		return nil
	}
	for _, fl := range root.Flags {
		name := fl.Names()[0]
		e, ok := f.top[name]
		if !ok || fl.IsSet() {
			continue
		}
		if err := root.Set(name, e.value); err != nil {
			return c.wrap(&configError{Path: f.path, Line: e.line, Key: e.key, Err: err})
		}
		c.origins[fl] = e.where(f.path)
	}
	return nil
}

// load finds and reads the file once: --config or KGRAG_CONFIG, else
// ./kgrag.yaml, else $XDG_CONFIG_HOME/kgrag/config.yaml (~/.config when
// XDG_CONFIG_HOME is unset). It returns nil and no error when there is none.
func (c *Config) load() (*configFile, error) {
	if c.loaded {
		return c.file, c.err
	}
	c.loaded = true
	path, err := c.locate()
	if err != nil || path == "" {
		c.err = err
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		c.err = &configError{Path: path, Err: err, Hint: "set --config or " + c.o.Env + " to a readable file"}
		return nil, c.err
	}
	c.file, c.err = parseConfig(path, data, c.schema, !c.noExpand, c.o)
	return c.file, c.err
}

// locate returns the file to read, or "" for none.
func (c *Config) locate() (string, error) {
	if c.path != "" {
		return c.path, nil // missing: ReadFile names it
	}
	cands := []string{c.o.Local}
	if dir := userConfigDir(); dir != "" {
		cands = append(cands, filepath.Join(dir, c.o.UserRel))
	}
	for _, p := range cands {
		_, err := os.Stat(p)
		switch {
		case err == nil:
			return p, nil
		case !errors.Is(err, fs.ErrNotExist):
			return "", &configError{Path: p, Err: err}
		}
	}
	return "", nil
}

// userConfigDir is $XDG_CONFIG_HOME, else ~/.config (on every OS, as
// command-line tools do), or "" when neither is known.
func userConfigDir() string {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		return d
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".config")
	}
	return ""
}

// fileSource is the value of one flag of one command in the file.
type fileSource struct {
	cfg     *Config
	command string
	flag    string
	last    configEntry // the entry the last Lookup found, for messages
}

func (s *fileSource) Lookup() (string, bool) {
	f, err := s.cfg.load()
	if err != nil {
		return "", false // apply reports it
	}
	e, ok := f.lookup(s.command, s.flag)
	if !ok {
		return "", false
	}
	s.last = e
	if !e.secretFile {
		return e.value, true
	}
	v, err := ReadSecret(e.value)
	if err != nil {
		if s.cfg.err == nil {
			s.cfg.err = &configError{Path: f.path, Line: e.line, Key: e.key, Err: err}
		}
		return "", false
	}
	return v, true
}

func (s *fileSource) String() string {
	if s.cfg.file == nil || s.last.key == "" {
		return "config file"
	}
	return s.last.where(s.cfg.file.path)
}

func (s *fileSource) GoString() string {
	return fmt.Sprintf("&fileSource{command:%q, flag:%q}", s.command, s.flag)
}

// ReadSecret reads a secret from a file. Files written with echo or an
// editor end in a newline that is no part of the secret.
func ReadSecret(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(data), "\r\n"), nil
}

// checkSecretFiles fails when a PREFIX*_FILE variable of env names a file
// that cannot be read. The flag's lookup cannot fail, so without this a
// missing password file would send an empty password and say nothing.
func (c *Config) checkSecretFiles(env []string) error {
	for _, kv := range env {
		name, path, _ := strings.Cut(kv, "=")
		if c.o.EnvPrefix == "" || !strings.HasPrefix(name, c.o.EnvPrefix) || !strings.HasSuffix(name, "_FILE") || path == "" {
			continue
		}
		if _, err := ReadSecret(path); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return fmt.Errorf("%s names %s, which cannot be read: %v", name, path, err)
		}
	}
	return nil
}

// secretFile is the secret in the file it names (no value when the name
// is "" or the file unreadable): cli.File without the final newline.
type secretFile string

func secretFileSource(path string) cli.ValueSource { return secretFile(path) }

func (f secretFile) Lookup() (string, bool) {
	if f == "" {
		return "", false
	}
	v, err := ReadSecret(string(f))
	return v, err == nil
}

func (f secretFile) String() string   { return fmt.Sprintf("file %q", string(f)) }
func (f secretFile) GoString() string { return fmt.Sprintf("secretFile(%q)", string(f)) }

// trackedSource records in cfg which source supplied a flag's value. It
// passes on EnvValueSource, so --help still lists the env variables.
type trackedSource struct {
	src  cli.ValueSource
	cfg  *Config
	flag cli.Flag
}

func (t *trackedSource) Lookup() (string, bool) {
	v, ok := t.src.Lookup()
	if ok {
		t.cfg.origins[t.flag] = describeSource(t.src)
	}
	return v, ok
}

func (t *trackedSource) String() string   { return t.src.String() }
func (t *trackedSource) GoString() string { return t.src.GoString() }

func (t *trackedSource) IsFromEnv() bool {
	e, ok := t.src.(cli.EnvValueSource)
	return ok && e.IsFromEnv()
}

func (t *trackedSource) Key() string {
	if e, ok := t.src.(cli.EnvValueSource); ok {
		return e.Key()
	}
	return ""
}

func describeSource(s cli.ValueSource) string {
	if e, ok := s.(cli.EnvValueSource); ok && e.IsFromEnv() {
		return "env " + e.Key()
	}
	return s.String()
}

// secretMark is a source that never has a value: secretSource adds it to
// a chain so that the flag is known to hold a secret.
type secretMark struct{}

func (secretMark) Lookup() (string, bool) { return "", false }
func (secretMark) String() string         { return "secret" }
func (secretMark) GoString() string       { return "secretMark{}" }

// secretName matches the names of flags (and of KGRAG_ variables) that
// hold secrets: it catches secrets of flags that do not use secretSource,
// and main masks the values of those it finds on the command line.
var secretName = regexp.MustCompile(`(?i)(^|[-_])(password|token|secret|key)$`)

func IsSecret(name string, chain *cli.ValueSourceChain) bool {
	if secretName.MatchString(name) {
		return true
	}
	return slices.ContainsFunc(chain.Chain, func(s cli.ValueSource) bool {
		_, ok := s.(secretMark)
		return ok
	})
}

// FlagSources returns the Sources of f, for every flag type built on
// cli.FlagBase, or nil for a flag type without them. Reflection spares a
// type switch that would silently miss flag types added later.
func FlagSources(f cli.Flag) *cli.ValueSourceChain {
	v := reflect.ValueOf(f)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	fv := v.Elem().FieldByName("Sources")
	if !fv.IsValid() || !fv.CanAddr() {
		return nil
	}
	chain, ok := fv.Addr().Interface().(*cli.ValueSourceChain)
	if !ok {
		return nil
	}
	return chain
}

// Setting is one flag's effective value and where it came from.
type Setting struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Origin string `json:"origin"` // "flag", "env KGRAG_STORE", "kgrag.yaml:3 (store)", "default"
	Secret bool   `json:"secret,omitempty"`
}

// settings lists the flags of cmd and of the root, with their values
// (secrets masked) and origins.
func (c *Config) Settings(cmd *cli.Command) []Setting {
	var out []Setting
	add := func(f cli.Flag, secret bool) {
		name := f.Names()[0]
		if configGlobalOnly(name) || name == "help" {
			return
		}
		s := Setting{Name: name, Value: fmt.Sprint(cmd.Value(name)), Secret: secret, Origin: "default"}
		if o, ok := c.origins[f]; ok {
			s.Origin = o
		} else if f.IsSet() {
			s.Origin = "flag"
		}
		if secret && s.Value != "" {
			s.Value = "(hidden)"
		}
		// A URL's user information or a key in its query is a secret
		// too, whichever flag holds it.
		s.Value = redact.New().Text(s.Value)
		out = append(out, s)
	}
	for _, f := range cmd.Flags {
		add(f, c.schema[cmd.Name][f.Names()[0]].secret)
	}
	for _, f := range cmd.Root().Flags {
		add(f, false)
	}
	return out
}

// DescribeFile says which configuration file this run read.
func (c *Config) DescribeFile() string {
	switch {
	case c.file != nil:
		return c.file.path
	case c.path != "":
		return c.path + " (not read)"
	}
	where := "./" + c.o.Local
	if dir := userConfigDir(); dir != "" {
		where += " or " + filepath.Join(dir, c.o.UserRel)
	}
	return "none (no " + where + ")"
}

func (c *Config) wrap(err error) error {
	if c.o.Wrap == nil {
		return err
	}
	return c.o.Wrap(err)
}

// IsSecretName reports whether a flag or variable name names a secret
// (password, token, secret, key), whose values are never shown.
func IsSecretName(name string) bool { return secretName.MatchString(name) }

// SecretSource is the value source of a secret flag: the file named by
// the variable env+"_FILE", else the variable env. It also marks the flag
// as a secret, so that its value is never shown.
func SecretSource(env string) cli.ValueSourceChain {
	return cli.NewValueSourceChain(secretFileSource(os.Getenv(env+"_FILE")), cli.EnvVar(env), secretMark{})
}

// ReadsFile reports whether f's last source is the file's entry of f for
// command: what Attach adds to every flag it can.
func ReadsFile(f cli.Flag, command string) bool {
	chain := FlagSources(f)
	if chain == nil || len(chain.Chain) == 0 {
		return false
	}
	t, ok := chain.Chain[len(chain.Chain)-1].(*trackedSource)
	if !ok {
		return false
	}
	fs, ok := t.src.(*fileSource)
	return ok && fs.command == command && fs.flag == f.Names()[0]
}
