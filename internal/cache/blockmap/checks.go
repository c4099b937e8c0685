package blockmap

// Checks once per trip from disk. A page's CRC32C is checked when its
// bytes are read from the data file; the kernel's page cache then holds
// the bytes that passed, so a later small read of the page, while it is
// still in the page cache, may copy just the bytes asked for and skip
// the check. A page the cache wrote through the page cache counts as
// checked from the start: the kernel holds the bytes its CRC was
// computed from. The cache's read planner decides when a check may be
// skipped and when it must be forgotten; the Map keeps the bits:
//
//   - a bit per page that passed its check since it was last written
//     (Checked, MarkChecked), cleared whenever the page is dropped or
//     replaced (SetPages, Clear);
//   - Forgets, a count of checks forgotten (Uncheck): every read that
//     may bring a page back from disk forgets its check first, and a
//     reader that planned to copy checked pages copies them only if no
//     check of the file was forgotten meanwhile.
//
// The bits live in memory only: a restart checks every page again (an
// idle file's index record keeps them, CheckedBits and CarryChecked, so
// a job opening it again does not).

// Checked reports whether pages [p, q) all passed a check since they were
// last written.
func (m *Map) Checked(p, q int) bool {
	if m.checked == nil {
		return false
	}
	for ; p < q; p++ {
		if m.checked[p/64]&(1<<(p%64)) == 0 {
			return false
		}
	}
	return true
}

// MarkChecked records that pages [p, q) passed their check.
func (m *Map) MarkChecked(p, q int) {
	if m.checked == nil {
		m.checked = make([]uint64, len(m.present))
	}
	for ; p < q; p++ {
		m.checked[p/64] |= 1 << (p % 64)
	}
}

// Uncheck forgets page p's check, and the SubPage CRCs kept with it: its
// bytes were dropped or replaced, or may come back from disk unchecked.
func (m *Map) Uncheck(p int) {
	if m.checked != nil && m.checked[p/64]&(1<<(p%64)) != 0 {
		m.checked[p/64] &^= 1 << (p % 64)
		m.forgets++
	}
	m.forgetSubs(p)
}

// UncheckRange forgets the checks of pages [p, q).
func (m *Map) UncheckRange(p, q int) {
	for ; p < q; p++ {
		m.Uncheck(p)
	}
}

// Forgets counts the checks forgotten so far.
func (m *Map) Forgets() uint64 { return m.forgets }

// HasChecks reports whether any page counts as checked.
func (m *Map) HasChecks() bool {
	for _, w := range m.checked {
		if w != 0 {
			return true
		}
	}
	return false
}

// CheckedBits is a copy of the checked bits, to keep while the file is
// idle (see CarryChecked), or nil when no page counts as checked.
func (m *Map) CheckedBits() []uint64 {
	if !m.HasChecks() {
		return nil
	}
	return append([]uint64(nil), m.checked...)
}

// CarryChecked takes the checked bits an idle file's index record kept
// (CheckedBits of the same version), for the pages present (a page
// dropped meanwhile is not checked).
func (m *Map) CarryChecked(bits []uint64) {
	if len(bits) != len(m.present) {
		return
	}
	m.checked = bits
	for i := range bits {
		bits[i] &= m.present[i]
	}
}

// Verify checks the pages read into buf, each page bytes long, against
// crcs (all bad when the read failed with readErr, or fell short) and
// reports which are bad. With wantSubs, it computes the CRCs of each
// SubPage and combines them, returning those SubPage CRCs too.
func Verify(crcs []uint32, page int64, buf []byte, readErr error, wantSubs bool) (bad []bool, nbad int, subs []uint32) {
	bad = make([]bool, len(crcs))
	for i := range crcs {
		a := int64(i) * page
		if readErr != nil || a >= int64(len(buf)) {
			bad[i] = true
			nbad++
			continue
		}
		b := buf[a:min(a+page, int64(len(buf)))]
		var crc uint32
		if wantSubs && page%SubPage == 0 {
			n := len(subs)
			subs = SubCRCs(subs, b)
			crc = Combine(subs[n:], int64(len(b)))
		} else {
			crc = Checksum(b)
		}
		if bad[i] = crc != crcs[i]; bad[i] {
			nbad++
		}
	}
	return bad, nbad, subs
}
