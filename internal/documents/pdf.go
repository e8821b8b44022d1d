package documents

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ledongthuc/pdf"
)

// pdfText returns the text of the PDF file name, page after page, as
// github.com/ledongthuc/pdf extracts it (each text object on a line of its
// own). GraphRAG reads PDFs with markitdown (pdfminer), whose text, and so
// the document id, differs. The library panics on some malformed files;
// that is returned as an error.
func pdfText(ctx context.Context, name string, size int64) (text string, err error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	defer func() {
		if p := recover(); p != nil {
			text, err = "", fmt.Errorf("malformed PDF: %v", p)
		}
	}()
	r, err := pdf.NewReader(f, size)
	if err != nil {
		return "", err
	}
	n := r.NumPage()
	if n == 0 {
		return "", errors.New("no pages")
	}
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		p := r.Page(i)
		if p.V.IsNull() {
			return "", fmt.Errorf("page %d of %d not found", i, n)
		}
		// Fonts by the page's own names: another page may give a name to
		// another font, so the library's whole-file cache is not used.
		t, err := p.GetPlainText(nil)
		if err != nil {
			return "", fmt.Errorf("page %d: %w", i, err)
		}
		sb.WriteString(t)
	}
	return strings.ToValidUTF8(sb.String(), "\uFFFD"), nil
}
