package objpool

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
)

// encodeRunV1 writes a run in format 1 (bare records, magic CLR1), as
// clink did before block trailers, to prove old pools stay readable.
func encodeRunV1(recs []record, blockSize int) ([]byte, RunRef) {
	var buf, idx []byte
	var nblocks uint64
	blockStart := -1
	var first []byte
	flush := func() {
		if blockStart < 0 {
			return
		}
		idx = binary.AppendUvarint(idx, uint64(len(first)))
		idx = append(idx, first...)
		idx = binary.AppendUvarint(idx, uint64(blockStart))
		idx = binary.AppendUvarint(idx, uint64(len(buf)-blockStart))
		nblocks++
		blockStart = -1
	}
	for _, r := range recs {
		if blockStart < 0 {
			blockStart, first = len(buf), r.ik
		}
		buf = binary.AppendUvarint(buf, uint64(len(r.ik)))
		buf = append(buf, r.ik...)
		var flags byte
		if r.deleted {
			flags = flagDelete
		}
		buf = append(buf, flags)
		buf = binary.AppendUvarint(buf, uint64(r.keyGroup))
		buf = binary.AppendUvarint(buf, uint64(len(r.value)))
		buf = append(buf, r.value...)
		if len(buf)-blockStart >= blockSize {
			flush()
		}
	}
	flush()
	indexOff := len(buf)
	buf = binary.AppendUvarint(buf, nblocks)
	buf = append(buf, idx...)
	buf = newBloom(recs).appendTo(buf)
	indexLen := len(buf) - indexOff
	buf = binary.BigEndian.AppendUint64(buf, uint64(indexOff))
	buf = binary.BigEndian.AppendUint32(buf, uint32(indexLen))
	buf = append(buf, runMagicV1...)
	ref := RunRef{Size: int64(len(buf)), IndexOff: int64(indexOff), IndexLen: int64(indexLen), Count: len(recs)}
	if len(recs) > 0 {
		ref.Min, ref.Max = recs[0].ik, recs[len(recs)-1].ik
	}
	return buf, ref
}

// downgrade rewrites every object of a pool in st to layout version 1:
// runs in format 1, manifests and CURRENT saying version 1 and no run
// format, as a clink from before format 2 would have left them.
func downgrade(t *testing.T, st *MemStore) {
	t.Helper()
	ctx := context.Background()
	keys, err := st.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]RunRef{}
	for _, k := range keys {
		if !strings.HasPrefix(k, "runs/") {
			continue
		}
		data, _, _ := st.Get(ctx, k)
		_, blocks, err := parseRun(data, nil)
		if err != nil {
			t.Fatal(err)
		}
		var recs []record
		for _, b := range blocks {
			br, err := b.records()
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, br...)
		}
		v1, ref := encodeRunV1(recs, 512)
		ref.Key = k
		refs[k] = ref
		st.objs[k] = v1
	}
	for _, k := range keys {
		data, _, _ := st.Get(ctx, k)
		switch {
		case strings.HasPrefix(k, "manifests/"):
			m, err := decodeManifest(k, data, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			m.Version = 1
			for p := range m.Runs {
				for i, r := range m.Runs[p] {
					m.Runs[p][i] = refs[r.Key]
				}
			}
			for i := range m.Ancestors {
				m.Ancestors[i].CRC = 0
			}
			b, _ := json.Marshal(m)
			if strings.Contains(string(b), `"format"`) || strings.Contains(string(b), `"crc"`) {
				t.Fatalf("manifest still names a format or checksum: %s", b)
			}
			st.objs[k] = b
		case strings.HasPrefix(k, "hotkeys/"):
			hot, err := decodeKeys(k, data, layoutVersion)
			if err != nil {
				t.Fatal(err)
			}
			b := encodeKeys(k, hot)
			l, n := binary.Uvarint(b)
			st.objs[k] = b[n+int(l) : len(b)-8] // no identity, checksum or magic
		case k == currentKey:
			c, err := decodeCurrent(data)
			if err != nil {
				t.Fatal(err)
			}
			c.Version, c.ManifestCRC, c.Ancestors = 1, 0, nil
			st.objs[k], _ = json.Marshal(c)
		}
	}
}

// Downgrade and RunFormats are downgrade and the served manifest's run
// formats, for the external tests.
var Downgrade = downgrade

// RunFormats counts the served checkpoint's runs by block format, and
// returns its manifest version.
func RunFormats(p *Pool) (int, map[int]int) {
	m := p.servedManifest()
	formats := map[int]int{}
	for _, runs := range m.Runs {
		for _, run := range runs {
			formats[run.format()]++
		}
	}
	return m.Version, formats
}
