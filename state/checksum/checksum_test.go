package checksum

import (
	"bytes"
	"errors"
	"testing"
)

// A sealed object unseals to its body; every flipped, dropped or appended
// byte either breaks the seal (ErrMismatch) or removes it (sealed false),
// never yields the body as if intact.
func TestSeal(t *testing.T) {
	body := []byte(`{"version":3,"checkpoint":7}`)
	sealed := Seal(body)
	if got, ok, err := Unseal(sealed); err != nil || !ok || !bytes.Equal(got, body) {
		t.Fatalf("Unseal(Seal) = %q %v %v", got, ok, err)
	}
	if got, ok, err := Unseal(body); err != nil || ok || !bytes.Equal(got, body) {
		t.Fatalf("Unseal(unsealed) = %q %v %v, want the bytes, not sealed", got, ok, err)
	}
	for i := range sealed {
		for _, bit := range []byte{1, 0x20, 0x80} {
			b := bytes.Clone(sealed)
			b[i] ^= bit
			check(t, "flip", b, body)
		}
		check(t, "cut", sealed[:i], body)
	}
	for _, tail := range []string{"\n", " ", "x", "#crc32c:00000000\n"} {
		check(t, "append "+tail, append(bytes.Clone(sealed), tail...), body)
	}
}

func check(t *testing.T, what string, b, body []byte) {
	t.Helper()
	got, ok, err := Unseal(b)
	if err != nil {
		if !errors.Is(err, ErrMismatch) {
			t.Fatalf("%s: error %v does not wrap ErrMismatch", what, err)
		}
		return
	}
	if ok {
		t.Fatalf("%s %q: unsealed as intact (%q)", what, b, got)
	}
}
