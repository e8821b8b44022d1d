// Command kgrag-llmtest serves llmtest's OpenAI-compatible test endpoint on
// a fixed address, to try `kgrag embed` and `kgrag ask` by hand without a
// model:
//
//	kgrag-llmtest -addr 127.0.0.1:11435 -dim 384 &
//	kgrag ask --llm-url http://127.0.0.1:11435/v1 "who is ..."
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/kgrag/kgrag/internal/llm/llmtest"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "kgrag-llmtest:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("kgrag-llmtest", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:11435", "address to listen on")
	dim := fs.Int("dim", 64, "embedding dimension")
	models := fs.String("models", "", "comma-separated model names to serve (empty: any)")
	chunkDelay := fs.Duration("chunk-delay", 0, "delay between streamed chat chunks")
	prose := fs.Bool("prose", false, "answer every chat request with prose that holds no JSON, as a small model may")
	formats := fs.String("response-formats", "", "comma-separated response_format types to accept (json_schema, json_object, text); others get HTTP 400 (empty: any)")
	imitate := fs.String("imitate", "", "answer the window endpoints of llama-server, lmstudio or vllm, and refuse long prompts in its words")
	chatWindow := fs.Int("chat-window", 0, "the chat model's window in words: longer prompts are refused (0: none)")
	chatTruncate := fs.Bool("chat-truncate", false, "with -chat-window, cut a long prompt's middle silently instead of refusing it")
	embedWindow := fs.Int("embed-window", 0, "the embedding model's window in words: longer inputs are cut to it (0: none)")
	embedRefuse := fs.Bool("embed-refuse", false, "with -embed-window, refuse longer inputs (HTTP 500) instead of cutting them")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg := llmtest.Config{Dim: *dim, ChunkDelay: *chunkDelay, Prose: *prose, Imitate: *imitate, ChatWindow: *chatWindow,
		ChatTruncate: *chatTruncate, EmbedWindow: *embedWindow, EmbedRefuse: *embedRefuse}
	if *formats != "" {
		cfg.ResponseFormats = strings.Split(*formats, ",")
	}
	if *models != "" {
		cfg.Models = strings.Split(*models, ",")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	srv := &http.Server{Addr: *addr, Handler: llmtest.New(cfg), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	fmt.Fprintf(os.Stderr, "kgrag-llmtest: serving http://%s/v1\n", *addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("listen %s: %w", *addr, err)
	}
	return nil
}
