package config_test

import (
	"crypto/ed25519"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/mqtt/sign"
)

// TestKeys reads [keys] and [controllers]: every home's key or none, no
// controller named like a home, no key for a name that is no home, and
// each value a public key as `hearth keygen` prints it.
func TestKeys(t *testing.T) {
	pub := func(seed byte) string {
		s := make([]byte, ed25519.SeedSize)
		s[0] = seed
		return sign.FormatPublic(ed25519.NewKeyFromSeed(s).Public().(ed25519.PublicKey))
	}
	homes := "[[home]]\nname = \"alder\"\n[[home]]\nname = \"birch\"\n"
	for _, tc := range []struct {
		name, toml string
		homes, ctl int    // keys read
		err        string // want, when not empty
	}{
		{"none", "", 0, 0, ""},
		{"homes and a controller", "[keys]\nalder = \"" + pub(1) + "\"\nbirch = \"" + pub(2) + "\"\n[controllers]\nctl = \"" + pub(3) + "\"\n", 2, 1, ""},
		{"a home without a key", "[keys]\nalder = \"" + pub(1) + "\"\n", 0, 0, "no key for home(s) birch"},
		{"a key for no home", "[keys]\nalder = \"" + pub(1) + "\"\nbirch = \"" + pub(2) + "\"\nelm = \"" + pub(4) + "\"\n", 0, 0, `no home "elm"`},
		{"a controller named like a home", "[keys]\nalder = \"" + pub(1) + "\"\nbirch = \"" + pub(2) + "\"\n[controllers]\nalder = \"" + pub(3) + "\"\n", 0, 0, "a controller needs a name of its own"},
		{"not a key", "[keys]\nalder = \"ssh-ed25519 AAAA\"\nbirch = \"" + pub(2) + "\"\n", 0, 0, "ed25519:"},
		{"short key", "[keys]\nalder = \"ed25519:AAAA\"\nbirch = \"" + pub(2) + "\"\n", 0, 0, "not 32 bytes"},
		{"not a string", "[keys]\nalder = 3\nbirch = \"" + pub(2) + "\"\n", 0, 0, "want a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse("n.toml", []byte(homes+tc.toml), nil)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Keys.Homes) != tc.homes || len(cfg.Keys.Controllers) != tc.ctl {
				t.Fatalf("keys %v", cfg.Keys)
			}
			if tc.homes > 0 && sign.FormatPublic(cfg.Keys.Homes["alder"]) != pub(1) {
				t.Fatalf("alder's key %s, want %s", sign.FormatPublic(cfg.Keys.Homes["alder"]), pub(1))
			}
		})
	}
}
