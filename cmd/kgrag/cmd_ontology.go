package main

import (
	"context"
	"fmt"

	"github.com/kgrag/kgrag/ontology"
	"github.com/urfave/cli/v3"
)

func newOntologyCommand(term terminal) *cli.Command {
	return &cli.Command{
		Name:  "ontology",
		Usage: "print the gr: ontology (Turtle, with SHACL shapes)",
		Description: `Prints the vocabulary kgrag writes: every class and property with its label,
comment, domain and range, and SHACL shapes that describe each class's
instances. Import it into your store beside the data, or let
'kgrag load --with-ontology' do that.

   kgrag ontology > gr.ttl
` + exitStatusHelp,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usagef("kgrag ontology > gr.ttl", "ontology takes no arguments, got %q", cmd.Args().First())
			}
			if _, err := term.out.Write(ontology.Turtle); err != nil {
				return fmt.Errorf("write ontology: %w", err)
			}
			return nil
		},
	}
}
