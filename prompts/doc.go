// Package prompts holds the prompt templates kgrag sends to language
// models, as text files embedded in the binary (templates/*.tmpl), written
// for this project. Each is a text/template; Render fills it.
//
//	text, err := prompts.Render("local_answer", prompts.LocalAnswer{
//		Question: "Who is Scrooge?", Context: ctxTables, ResponseType: "multiple paragraphs",
//	})
//
// Keeping prompts out of Go code lets them be read, reviewed and diffed as
// prose, and tested as golden files.
package prompts
