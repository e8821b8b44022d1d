package graphrag

import "context"

// OpenWindows is Open reading every table in windows of rows rows, for the
// tests that check windows change nothing.
func OpenWindows(ctx context.Context, dir string, rows int) (*Dataset, error) {
	return OpenWindowsWith(ctx, dir, rows, DefaultPolicy())
}

// OpenWindowsWith is OpenWindows under policy p.
func OpenWindowsWith(ctx context.Context, dir string, rows int, p Policy) (*Dataset, error) {
	return open(ctx, dir, Visitor{Windows: true, WindowRows: rows}, p)
}
