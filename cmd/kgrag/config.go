package main

import (
	"github.com/kgrag/kgrag/internal/cliconfig"
	"github.com/urfave/cli/v3"
)

// Where kgrag's configuration file is looked for.
const (
	configEnv     = "KGRAG_CONFIG"
	configLocal   = "kgrag.yaml"        // in the current directory
	configUserRel = "kgrag/config.yaml" // under $XDG_CONFIG_HOME or ~/.config
)

// appConfig is the configuration file of one run (package cliconfig).
type appConfig = cliconfig.Config

// setting is one flag's effective value and where it came from.
type setting = cliconfig.Setting

func newAppConfig() *appConfig {
	return cliconfig.New(cliconfig.Options{
		App: "kgrag", Env: configEnv, NoExpandEnv: "KGRAG_NO_EXPAND_ENV", Local: configLocal, UserRel: configUserRel,
		EnvPrefix: "KGRAG_",
		// doctor checks what ask would use, so it reads ask's section too.
		Sections: func(command string) []string {
			if command == "doctor" {
				return []string{"doctor", "ask"}
			}
			return []string{command}
		},
		Wrap: func(err error) error { return &usageError{msg: err.Error()} },
	})
}

// secretSource is the value source of a secret flag: env+"_FILE", then
// env; the flag's value is never shown.
func secretSource(env string) cli.ValueSourceChain { return cliconfig.SecretSource(env) }

// readSecret and secretName are cliconfig's, for main's masking of the
// secrets an error may hold.
var readSecret = cliconfig.ReadSecret

func isSecretName(name string) bool { return cliconfig.IsSecretName(name) }

// configHelp ends kgrag --help: where settings come from.
const configHelp = `
Settings: flag > environment variable > config file > default. A flag on the
command line wins; else the environment variable its help names (KGRAG_*);
else the config file; else the flag's default. The config file is --config FILE (or KGRAG_CONFIG), else ./kgrag.yaml, else
$XDG_CONFIG_HOME/kgrag/config.yaml (~/.config/kgrag/config.yaml). Its keys
are long flag names: at the top level for every command that has the flag,
or under a command's name for that command only. A secret (password, token,
llm-key, ...) may instead name the file holding it (password-file). ${VAR}
in a value is the environment variable VAR. An unknown key is an error.
   store: http://localhost:3030/ds
   graph: http://example.org/kg
   password-file: /run/secrets/kgrag-store
   ask:
     chat-model: llama3.2
'kgrag doctor --show-config' shows every setting and where it came from.`
