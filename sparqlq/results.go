package sparqlq

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"strconv"
	"strings"
)

// Term types in results.
const (
	TypeURI     = "uri"
	TypeLiteral = "literal"
	TypeBNode   = "bnode"
	TypeTriple  = "triple" // RDF-star quoted triples; Value is left empty
)

// Term is one bound value in a result row. Type is TypeURI, TypeLiteral or
// TypeBNode; Datatype and Lang are set for literals only. Virtuoso's
// "typed-literal" arrives as TypeLiteral with its Datatype.
type Term struct {
	Type     string
	Value    string
	Datatype string
	Lang     string
}

// Int parses an integer literal such as a COUNT result. An integral
// decimal or double ("3.0", "3.0E0") is read as the integer it is.
func (t Term) Int() (int64, error) {
	if t.Type != TypeLiteral {
		return 0, fmt.Errorf("sparqlq: %s term %q is not a number", t.Type, t.Value)
	}
	n, err := parseInt(t.Value)
	if err != nil {
		return 0, fmt.Errorf("sparqlq: %w", err)
	}
	return n, nil
}

// Float parses a numeric literal.
func (t Term) Float() (float64, error) {
	if t.Type != TypeLiteral {
		return 0, fmt.Errorf("sparqlq: %s term %q is not a number", t.Type, t.Value)
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(t.Value), 64)
	if err != nil {
		return 0, fmt.Errorf("sparqlq: literal %q is not a number", t.Value)
	}
	return f, nil
}

// Results holds the answer to a SELECT (Vars and Bindings) or an ASK
// (Boolean). An unbound variable is absent from its row's map.
type Results struct {
	Vars     []string
	Bindings []map[string]Term
	Boolean  *bool
}

// ReadResults decodes SPARQL 1.1 Query Results in JSON or XML. contentType
// chooses the format; when it names neither, the first byte decides.
func ReadResults(r io.Reader, contentType string) (*Results, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	br := bufio.NewReader(r)
	switch {
	case strings.HasSuffix(mt, "json"):
		return readJSON(br)
	case strings.HasSuffix(mt, "xml"):
		return readXML(br)
	}
	for {
		b, err := br.Peek(1)
		if err != nil {
			return nil, fmt.Errorf("read results (%s): %w", contentType, errEmpty(err))
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n', 0xEF, 0xBB, 0xBF:
			_, _ = br.ReadByte()
			continue
		case '{':
			return readJSON(br)
		case '<':
			return readXML(br)
		}
		return nil, fmt.Errorf("read results: unsupported content type %q", contentType)
	}
}

func errEmpty(err error) error {
	if errors.Is(err, io.EOF) {
		return errors.New("empty answer")
	}
	return err
}

type jsonResults struct {
	Head struct {
		Vars []string `json:"vars"`
	} `json:"head"`
	Boolean *bool `json:"boolean"`
	Results *struct {
		Bindings []map[string]jsonTerm `json:"bindings"`
	} `json:"results"`
}

type jsonTerm struct {
	Type     string `json:"type"`
	Value    string `json:"value"`
	Datatype string `json:"datatype"`
	Lang     string `json:"xml:lang"`
}

func readJSON(r io.Reader) (*Results, error) {
	var jr jsonResults
	if err := json.NewDecoder(r).Decode(&jr); err != nil {
		return nil, fmt.Errorf("read JSON results: %w", err)
	}
	res := &Results{Vars: jr.Head.Vars, Boolean: jr.Boolean}
	if jr.Boolean == nil && jr.Results == nil {
		return nil, errors.New("read JSON results: neither results nor boolean")
	}
	if jr.Results != nil {
		res.Bindings = make([]map[string]Term, 0, len(jr.Results.Bindings))
		for _, row := range jr.Results.Bindings {
			m := make(map[string]Term, len(row))
			for k, v := range row {
				t := Term{Type: v.Type, Value: v.Value, Datatype: v.Datatype, Lang: v.Lang}
				if t.Type == "typed-literal" {
					t.Type = TypeLiteral
				}
				m[k] = t
			}
			res.Bindings = append(res.Bindings, m)
		}
	}
	return res, nil
}

type xmlResults struct {
	Head struct {
		Vars []struct {
			Name string `xml:"name,attr"`
		} `xml:"variable"`
	} `xml:"head"`
	Boolean *string `xml:"boolean"`
	Results *struct {
		Result []struct {
			Binding []xmlBinding `xml:"binding"`
		} `xml:"result"`
	} `xml:"results"`
}

type xmlBinding struct {
	Name    string `xml:"name,attr"`
	URI     *string
	BNode   *string
	Literal *struct {
		Value    string `xml:",chardata"`
		Datatype string `xml:"datatype,attr"`
		Lang     string `xml:"http://www.w3.org/XML/1998/namespace lang,attr"`
	}
	Triple *struct{}
}

func (b *xmlBinding) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	for _, a := range start.Attr {
		if a.Name.Local == "name" {
			b.Name = a.Value
		}
	}
	type inner struct {
		URI     *string `xml:"uri"`
		BNode   *string `xml:"bnode"`
		Literal *struct {
			Value    string `xml:",chardata"`
			Datatype string `xml:"datatype,attr"`
			Lang     string `xml:"http://www.w3.org/XML/1998/namespace lang,attr"`
		} `xml:"literal"`
		Triple *struct{} `xml:"triple"`
	}
	var in inner
	if err := d.DecodeElement(&in, &start); err != nil {
		return err
	}
	b.URI, b.BNode, b.Literal, b.Triple = in.URI, in.BNode, in.Literal, in.Triple
	return nil
}

func readXML(r io.Reader) (*Results, error) {
	var xr xmlResults
	if err := xml.NewDecoder(r).Decode(&xr); err != nil {
		return nil, fmt.Errorf("read XML results: %w", err)
	}
	res := &Results{}
	for _, v := range xr.Head.Vars {
		res.Vars = append(res.Vars, v.Name)
	}
	if xr.Boolean != nil {
		b, err := strconv.ParseBool(strings.TrimSpace(*xr.Boolean))
		if err != nil {
			return nil, fmt.Errorf("read XML results: boolean %q", *xr.Boolean)
		}
		res.Boolean = &b
		return res, nil
	}
	if xr.Results == nil {
		return nil, errors.New("read XML results: neither results nor boolean")
	}
	res.Bindings = make([]map[string]Term, 0, len(xr.Results.Result))
	for _, row := range xr.Results.Result {
		m := make(map[string]Term, len(row.Binding))
		for _, b := range row.Binding {
			switch {
			case b.URI != nil:
				m[b.Name] = Term{Type: TypeURI, Value: *b.URI}
			case b.BNode != nil:
				m[b.Name] = Term{Type: TypeBNode, Value: *b.BNode}
			case b.Literal != nil:
				m[b.Name] = Term{Type: TypeLiteral, Value: b.Literal.Value,
					Datatype: b.Literal.Datatype, Lang: b.Literal.Lang}
			case b.Triple != nil:
				m[b.Name] = Term{Type: TypeTriple}
			}
		}
		res.Bindings = append(res.Bindings, m)
	}
	return res, nil
}
