package main

import (
	"context"
	"strconv"

	"github.com/urfave/cli/v3"
)

// --retries once named two flags: the store's (load) and the model
// server's (embed, ask, ...). Commands that talk to both dropped one copy,
// so in `index --load` the model's --retries also set the store's. Each
// client now has its own flag, --store-retries and --llm-retries; --retries
// stays, hidden, for one release, meaning what it meant where that was
// unambiguous, with urfave/cli's deprecation warning.

// retriesAlias is the old --retries of a command that talks to one client
// (or, in load, whose --retries was the store's): it sets target.
func retriesAlias(target string) cli.Flag {
	return &cli.IntFlag{
		Name: "retries", Hidden: true,
		Usage:      "deprecated: --" + target,
		Deprecated: "use --" + target + ", which it means here",
		Action: func(_ context.Context, cmd *cli.Command, n int) error {
			if cmd.IsSet(target) {
				return usagef("--"+target+" "+strconv.Itoa(n), "give --%s, not both it and --retries (deprecated)", target)
			}
			return cmd.Set(target, strconv.Itoa(n))
		},
	}
}

// retriesAmbiguous is the old --retries of a command that talks to a store
// and a model server (index --load), where it set both: refused, naming
// the two flags.
func retriesAmbiguous(command string) cli.Flag {
	return &cli.IntFlag{
		Name: "retries", Hidden: true,
		Usage: "removed: --llm-retries and --store-retries",
		Action: func(context.Context, *cli.Command, int) error {
			return usagef("--llm-retries 3 --store-retries 5",
				"--retries is ambiguous in kgrag %s, which talks to a model server and a store: give --llm-retries and/or --store-retries", command)
		},
	}
}
