// Package prompts holds the prompt templates kgrag sends to language
// models, as text files embedded in the binary (templates/*.tmpl), written
// for this project. Each is a text/template; Render fills it.
//
//	system, err := prompts.Render("local_answer", prompts.LocalAnswer{
//		Context: ctxTables, ResponseType: prompts.DefaultResponseType,
//	})
//	// then chat with system as the system message and the question as
//	// the user message.
//
// Keeping prompts out of Go code lets them be read, reviewed and diffed as
// prose, and tested as golden files.
package prompts
