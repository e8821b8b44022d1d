package snapshot

// The sections of a snapshot, in file order. Blobs hold records (see
// tables.go) addressed by an offset array of count+1 uint64; lists are
// CSR: an offset array of count+1 uint64 into an array of uint32 rows.
// Hash tables are open-addressed (linear probing, FNV-1a) with a power of
// two uint32 slots, each a row + 1 (0 is empty); the key is read from the
// row itself.
const (
	secMeta       = iota // JSON Meta
	secEntOff            // entity records
	secEntBlob           //
	secUnitOff           // text unit records
	secUnitBlob          //
	secRelOff            // relationship records
	secRelBlob           //
	secCommOff           // community records (with their reports)
	secCommBlob          //
	secRelPos            // uint32 per relationship: its place in human_readable_id order
	secCommKept          // int64 per community: deepest for maxLevel in [level, kept)
	secKeyOff            // entity ids named anywhere (the keys): their bytes
	secKeyBlob           //
	secKeyHash           // key -> key row
	secKeyEntity         // int32 per key: the first entity row with the id, or -1
	secKeyRelOff         // per key: the relationships with an end there, in row order
	secKeyRels           //
	secKeyCommOff        // per key: the communities listing it as a member, in row order
	secKeyComms          //
	secKeyUnitOff        // per key: the text units naming it, in row order
	secKeyUnits          //
	secUnitHash          // text unit id -> first row
	secTitleHash         // entity title -> first row that is not a placeholder
	secCommHash          // community number -> first row
	numSections
)

const (
	version    = 1
	headerSize = 8 + 4 + 4 + numSections*16 + 8
)

var magic = [8]byte{'K', 'G', 'S', 'N', 'A', 'P', 'S', 'H'}
