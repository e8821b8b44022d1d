package tuples

import "strings"

// Delimiters are the markers an extraction prompt asks the model to write.
// The zero value of a field means GraphRAG's default for it.
type Delimiters struct {
	Tuple      string // between the fields of a record: "<|>"
	Record     string // between records: "##"
	Completion string // after the last record: "<|COMPLETE|>"
}

// DefaultDelimiters returns GraphRAG's delimiters (graph_extractor.py and
// claim_extractor.py in GraphRAG 3.3.0).
func DefaultDelimiters() Delimiters {
	return Delimiters{Tuple: "<|>", Record: "##", Completion: "<|COMPLETE|>"}
}

func (d Delimiters) withDefaults() Delimiters {
	def := DefaultDelimiters()
	if d.Tuple == "" {
		d.Tuple = def.Tuple
	}
	if d.Record == "" {
		d.Record = def.Record
	}
	if d.Completion == "" {
		d.Completion = def.Completion
	}
	return d
}

// pipe reports whether a bare "|" may stand for the tuple delimiter: only
// when the real one is made of a pipe and more (as "<|>" is).
func (d Delimiters) pipe() bool {
	return d.Tuple != "|" && strings.Contains(d.Tuple, "|")
}

// Entity is one ("entity"<|>NAME<|>TYPE<|>DESCRIPTION) record. Title and
// Type are normalised names (see the package doc); Description is cleaned
// text and may be empty.
type Entity struct {
	Title       string `json:"title"`
	Type        string `json:"type"`
	Description string `json:"description"`
}

// Relationship is one ("relationship"<|>SOURCE<|>TARGET<|>DESCRIPTION<|>
// STRENGTH) record. Source and Target are normalised names, never empty and
// never equal. Weight is the strength the model gave when HasWeight is set,
// else DefaultWeight.
type Relationship struct {
	Source      string  `json:"source"`
	Target      string  `json:"target"`
	Description string  `json:"description"`
	Weight      float64 `json:"weight"`
	HasWeight   bool    `json:"has_weight"`
}

// Claim is one (SUBJECT<|>OBJECT<|>TYPE<|>STATUS<|>START_DATE<|>END_DATE<|>
// DESCRIPTION<|>SOURCE_QUOTE) record of GraphRAG's claim extraction.
// Subject, Object, Type and Status are normalised names; the rest is
// cleaned text, written as the model wrote it ("NONE" stays "NONE").
type Claim struct {
	Subject     string `json:"subject"`
	Object      string `json:"object"`
	Type        string `json:"type"`
	Status      string `json:"status"`
	StartDate   string `json:"start_date"`
	EndDate     string `json:"end_date"`
	Description string `json:"description"`
	SourceText  string `json:"source_text"`
}

// Dropped is a record that could not be read safely: its text as the model
// wrote it (trimmed) and one of the Reason constants.
type Dropped struct {
	Record string `json:"record"`
	Reason string `json:"reason"`
}

// Reasons a record is dropped.
const (
	ReasonNoName         = "entity without a name"
	ReasonNoEnds         = "relationship without both ends"
	ReasonSelfLoop       = "relationship to itself"
	ReasonUnknownKind    = "unknown record kind"
	ReasonNoDelimiter    = "no tuple delimiter"
	ReasonNoSubject      = "claim without a subject"
	ReasonNoClaimContent = "claim without a type or description"
)

// DefaultWeight is the weight of a relationship whose strength is missing,
// not a number or out of range: GraphRAG's fallback when float() fails.
const DefaultWeight = 1.0

// MaxWeight is the largest strength kept as written; the prompt's scale
// (and GraphRAG's examples) run from 1 to 10.
const MaxWeight = 10.0

// Repair names a kind of fix the parser made. Result.Repairs counts them.
type Repair string

// Repairs. Reply-level ones are counted for the whole reply; the others
// once per record (or field, where said) of the records that were kept.
const (
	// Reply level.
	RepairCodeFence          Repair = "code_fence"          // a ``` or ~~~ line, removed
	RepairProse              Repair = "prose"               // a line or piece of text that is no record, skipped
	RepairNewlineSeparated   Repair = "newline_separated"   // a record parted from the one before by line breaks, or by "), (" on one line, not the record delimiter
	RepairJoinedLines        Repair = "joined_lines"        // a line appended to the unfinished record above it
	RepairCompletionMissing  Repair = "completion_missing"  // no completion delimiter anywhere (0 or 1)
	RepairCompletionRepeated Repair = "completion_repeated" // completion delimiters after the first

	// Record level (kept records only).
	RepairListMarker     Repair = "list_marker"     // "- ", "* ", "1. ", "## " or the like before the record
	RepairParentheses    Repair = "parentheses"     // outer parentheses missing, unbalanced, doubled or followed by punctuation
	RepairTupleDelimiter Repair = "tuple_delimiter" // fields parted by "<| >", "|" or quoted commas instead of the tuple delimiter
	RepairKind           Repair = "kind"            // the kind is not written exactly "entity" or "relationship" in double quotes (case, quotes, plural, spaces); for claims, any kind
	RepairMissingField   Repair = "missing_field"   // per field absent from the record (a missing strength counts as weight_missing)
	RepairEmptyField     Repair = "empty_field"     // per type, description or claim field written but empty
	RepairExtraField     Repair = "extra_field"     // per field beyond the expected number, joined into the description or dropped

	// Field level (per field of kept records).
	RepairQuotes   Repair = "quotes"   // surrounding or stray quotes removed
	RepairEmphasis Repair = "emphasis" // Markdown **bold** or *italic* markers around a field removed
	RepairBrackets Repair = "brackets" // <NAME>, [NAME] or {NAME} around a name, or <...> around a text, removed

	// Relationship strength (per relationship).
	RepairWeightMissing    Repair = "weight_missing"      // no strength, or an empty one: DefaultWeight
	RepairWeightNotNumeric Repair = "weight_not_numeric"  // "high" and the like: DefaultWeight
	RepairWeightOutOfRange Repair = "weight_out_of_range" // not in (0, MaxWeight]: DefaultWeight
	RepairWeightFormat     Repair = "weight_format"       // "8/10" read as 8
)

// Result is what ParseGraph read from one reply. Records is the number of
// records seen, so len(Entities)+len(Relationships)+len(Dropped) ==
// Records. Repairs is never nil.
type Result struct {
	Entities      []Entity       `json:"entities"`
	Relationships []Relationship `json:"relationships"`
	Dropped       []Dropped      `json:"dropped"`
	Repairs       map[Repair]int `json:"repairs"`
	Records       int            `json:"records"`
}

// ClaimsResult is what ParseClaims read from one reply, with the same
// invariant: len(Claims)+len(Dropped) == Records.
type ClaimsResult struct {
	Claims  []Claim        `json:"claims"`
	Dropped []Dropped      `json:"dropped"`
	Repairs map[Repair]int `json:"repairs"`
	Records int            `json:"records"`
}

// repairs counts fixes; a record's own fixes are counted aside and merged
// only when the record is kept.
type repairs map[Repair]int

func (r repairs) add(k Repair, n int) {
	if n > 0 {
		r[k] += n
	}
}

func (r repairs) merge(o repairs) {
	for k, n := range o {
		r[k] += n
	}
}
