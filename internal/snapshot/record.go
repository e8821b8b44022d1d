package snapshot

import (
	"encoding/binary"
	"errors"
	"math"
)

// A record is a sequence of fields: strings and lists as uvarint length
// (lists: count + 1, 0 for nil, so nil and empty survive) then bytes,
// integers as varints, floats as 8 bytes, booleans packed into one flags
// byte.

type enc struct{ b []byte }

func (e *enc) str(s string) {
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *enc) strs(l []string) {
	if l == nil {
		e.b = append(e.b, 0)
		return
	}
	e.b = binary.AppendUvarint(e.b, uint64(len(l))+1)
	for _, s := range l {
		e.str(s)
	}
}

func (e *enc) int(v int64) { e.b = binary.AppendVarint(e.b, v) }

func (e *enc) f64(v float64) { e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v)) }

func (e *enc) flags(bits ...bool) {
	var f byte
	for i, b := range bits {
		if b {
			f |= 1 << i
		}
	}
	e.b = append(e.b, f)
}

var errRecord = errors.New("record ends early or holds an impossible length")

// dec reads a record; the first error sticks and later reads give zero
// values, so a caller checks err once at the end.
type dec struct {
	b   []byte
	err error
}

func (d *dec) fail() { d.err, d.b = errRecord, nil }

func (d *dec) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) str() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return ""
	}
	s := string(d.b[:n]) // a copy: nothing returned points into the mapping
	d.b = d.b[n:]
	return s
}

// skip passes over a string field.
func (d *dec) skip() {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return
	}
	d.b = d.b[n:]
}

func (d *dec) strs() []string {
	n := d.uvarint()
	if n == 0 {
		return nil
	}
	n--
	if n > uint64(len(d.b)) { // each string takes at least one byte
		d.fail()
		return nil
	}
	l := make([]string, n)
	for i := range l {
		l[i] = d.str()
	}
	return l
}

func (d *dec) int() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) f64() float64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

func (d *dec) flags() func(i int) bool {
	if len(d.b) < 1 {
		d.fail()
		return func(int) bool { return false }
	}
	f := d.b[0]
	d.b = d.b[1:]
	return func(i int) bool { return f&(1<<i) != 0 }
}
