package main

import (
	"context"
	"time"

	"github.com/kgrag/kgrag/internal/basicsearch"
	"github.com/kgrag/kgrag/internal/llm"
	"github.com/urfave/cli/v3"
)

// basicFlags are the flags of --mode basic.
func basicFlags(o *askOptions) []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "top-k-text-units", Category: "basic search (--mode basic)", Value: o.basic.K, Destination: &o.basic.K,
			Usage: "text units taken from the text units' vector index (kgrag embed --tables text_units)"},
	}
}

// askBasic answers with basic search: the text units nearest the
// question, their text as the context, one answer call.
func askBasic(ctx context.Context, opts askOptions, client *llm.Client, res *askResult, term terminal) error {
	t := time.Now()
	idx, src, emb, err := openIndexed(ctx, opts, tableTextUnits, client, res, term)
	if err != nil {
		return err
	}
	defer idx.Close()
	p := opts.basic
	p.MaxContextTokens, p.Encoding = opts.params.MaxContextTokens, opts.params.Encoding
	s, err := basicsearch.New(src.retrieval(), idx, emb, client, basicsearch.Options{Params: p,
		ResponseType: opts.responseType, Chat: opts.chatOptions(), Source: src.name})
	if err != nil {
		return err
	}
	res.Timings["open"] = ms(time.Since(t))

	before := src.requests()
	r, err := s.Context(ctx, opts.question)
	if err != nil {
		return searchError(opts, src, err)
	}
	res.AddBasic(r)
	if stop, err := retrieved(opts, src, before, res, term, r.Context.Text); stop {
		return err
	}
	system, err := s.System(r.Context)
	if err != nil {
		return err
	}
	return answer(ctx, opts, client, system, res, term)
}
