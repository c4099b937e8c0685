package units

import (
	"testing"
	"time"

	toml "github.com/pelletier/go-toml/v2"
)

func TestTypedDecode(t *testing.T) {
	var v struct {
		RAM   Size     `toml:"ram"`
		Plain Size     `toml:"plain"`
		Every Duration `toml:"every"`
	}
	if err := toml.Unmarshal([]byte("ram = \"1GiB\"\nplain = 4096\nevery = \"90s\"\n"), &v); err != nil {
		t.Fatal(err)
	}
	if v.RAM != 1<<30 || v.Plain != 4096 || v.Every.D() != 90*time.Second {
		t.Fatalf("decoded %+v", v)
	}
	if err := toml.Unmarshal([]byte("ram = \"lots\"\n"), &v); err == nil {
		t.Fatal("a size of \"lots\" was accepted")
	}
	if err := toml.Unmarshal([]byte("every = \"soon\"\n"), &v); err == nil {
		t.Fatal("a duration of \"soon\" was accepted")
	}
}

func TestSizeRoundTrip(t *testing.T) {
	for _, n := range []Size{0, 1000, 64 << 10, 1 << 20, 3 << 30, 1<<40 + 1} {
		b, _ := n.MarshalText()
		var back Size
		if err := back.UnmarshalText(b); err != nil || back != n {
			t.Errorf("%d printed %q read back %d (%v)", n, b, back, err)
		}
	}
}
