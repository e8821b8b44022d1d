package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"
)

// profileSmall is --profile small: for chat models of a few hundred
// million to a few billion parameters (Ollama's llama3.2:1b..8b, LM
// Studio's small GGUFs), whose context is 2-8k tokens by default and whose
// JSON breaks more often the longer they write.
const profileSmall = "small"

// profileSettings are the flags a profile sets, by long name, with their
// values. A flag the user set (command line, environment, config file)
// keeps the user's value; a flag the command lacks is left out. docs/modes.md
// lists them.
func profileSettings(name string) ([][2]string, bool) {
	switch name {
	case "":
		return nil, true
	case profileSmall:
		return [][2]string{
			{"max-context-tokens", "4000"},    // local context and each global map batch (12000)
			{"reduce-context-tokens", "2000"}, // global's reduce call (12000)
			{"map-max-length", "300"},         // words a map reply may have (1000)
			{"report-summaries", "true"},      // global maps and rates report summaries, not whole reports (false)
			{"top-k-text-units", "5"},         // basic search (10)
			{"drift-k-followups", "5"},        // DRIFT (20)
			{"drift-primer-folds", "2"},       // (5)
			{"drift-depth", "1"},              // (3): up to 9 calls, not 67
			{"max-gleanings", "0"},            // index: no extra extraction round (1)
			{"report-max-length", "500"},      // index: report words (2000)
		}, true
	}
	return nil, false
}

// profileFlag is --profile, bound to dest.
func profileFlag(dest *string) cli.Flag {
	return &cli.StringFlag{Name: "profile", Destination: dest, Sources: cli.EnvVars("KGRAG_PROFILE"),
		Usage: "`NAME` of a set of defaults for a kind of model: \"small\" for models of a few hundred million to a few billion " +
			"parameters (smaller context budgets, report summaries in global search, DRIFT of 1 round, no gleanings, shorter reports; docs/modes.md); flags given win"}
}

// applyProfile sets cmd's flags of the profile name that were not set.
func applyProfile(cmd *cli.Command, name string) error {
	settings, ok := profileSettings(name)
	if !ok {
		return usagef("kgrag ask --profile small ...", "--profile %q: the profiles are %q", name, profileSmall)
	}
	for _, s := range settings {
		if !hasFlag(cmd, s[0]) || cmd.IsSet(s[0]) {
			continue
		}
		if err := cmd.Set(s[0], s[1]); err != nil {
			return fmt.Errorf("--profile %s: set --%s: %w", name, s[0], err)
		}
	}
	return nil
}

func hasFlag(cmd *cli.Command, name string) bool {
	return slices.ContainsFunc(cmd.Flags, func(f cli.Flag) bool {
		return slices.ContainsFunc(f.Names(), func(n string) bool { return strings.EqualFold(n, name) })
	})
}
