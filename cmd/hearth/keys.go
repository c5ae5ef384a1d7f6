package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/mqtt"
	"github.com/hearth-dcop/hearth/mqtt/sign"
	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// securityOptions are the flags that sign a process's messages and decide
// what it refuses to run without (`hearth run`, `hearth round`).
type securityOptions struct {
	keysFile string // --keys: [keys] and [controllers] when no neighbourhood gives them
	signKey  string // --sign-key: this process's private key
	insecure bool
}

func (s *securityOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&s.keysFile, "keys", "", "a TOML file whose [keys] and [controllers] hold the public keys (for --instance and --shds; a neighbourhood -c has its own)")
	fs.StringVar(&s.signKey, "sign-key", "", "this process's private key file (hearth keygen writes it): every message it publishes is signed with it")
	fs.BoolVar(&s.insecure, "insecure", false, "run without signed messages, or with a broker off this machine without TLS and credentials (anyone reaching the broker can then forge plans)")
}

// publicKeys returns the public keys: the neighbourhood's, or --keys'.
func (s *securityOptions) publicKeys(fromConfig config.Keys) (config.Keys, error) {
	if s.keysFile == "" {
		return fromConfig, nil
	}
	if fromConfig.Any() {
		return config.Keys{}, errors.New("--keys: the neighbourhood file has [keys] of its own")
	}
	var f struct {
		Keys        map[string]string `toml:"keys"`
		Controllers map[string]string `toml:"controllers"`
	}
	if _, err := toml.DecodeFile(s.keysFile, &f); err != nil {
		return config.Keys{}, fmt.Errorf("--keys %s: %w", s.keysFile, err)
	}
	out := config.Keys{Homes: map[string]ed25519.PublicKey{}, Controllers: map[string]ed25519.PublicKey{}}
	for _, t := range []struct {
		name string
		in   map[string]string
		out  map[string]ed25519.PublicKey
	}{{"keys", f.Keys, out.Homes}, {"controllers", f.Controllers, out.Controllers}} {
		for n, v := range t.in {
			pub, err := sign.ParsePublic(v)
			if err != nil {
				return config.Keys{}, fmt.Errorf("--keys %s: [%s] %s: %w", s.keysFile, t.name, n, err)
			}
			t.out[n] = pub
		}
	}
	if !out.Any() {
		return config.Keys{}, fmt.Errorf("--keys %s: no [keys] or [controllers]", s.keysFile)
	}
	return out, nil
}

// keyring builds the keyring of keys (nil when there are none) with the
// private key of --sign-key, whose file names its owner (name, when not
// empty, is the owner expected).
func (s *securityOptions) keyring(keys config.Keys, name string) (*sign.Keyring, error) {
	if !keys.Any() {
		if s.signKey != "" {
			return nil, errors.New("--sign-key: no public keys to check it against: add [keys] to the neighbourhood (hearth keygen prints the lines), or give --keys FILE")
		}
		return nil, nil
	}
	ring := sign.NewKeyring()
	for n, k := range keys.Homes {
		if err := ring.Add(n, k, false); err != nil {
			return nil, err
		}
	}
	for n, k := range keys.Controllers {
		if err := ring.Add(n, k, true); err != nil {
			return nil, err
		}
	}
	if s.signKey == "" {
		return nil, errors.New("the neighbourhood's messages are signed ([keys]): give this process its private key, --sign-key FILE (hearth keygen --home NAME writes one)")
	}
	signer, err := sign.LoadKey(s.signKey, name)
	if err != nil {
		return nil, fmt.Errorf("--sign-key: %w", err)
	}
	if !ring.Has(signer.Name()) {
		return nil, fmt.Errorf("--sign-key: %q has no public key in [keys] or [controllers]", signer.Name())
	}
	if err := ring.AddSigner(signer); err != nil {
		return nil, fmt.Errorf("--sign-key: %w", err)
	}
	return ring, nil
}

// secure returns the keyring of a `hearth run` process: public keys from
// the neighbourhood, or --keys; its private key from --sign-key, owned by
// name when not empty. The caller then checks require.
func (s *securityOptions) secure(fromConfig config.Keys, name string) (*sign.Keyring, error) {
	keys, err := s.publicKeys(fromConfig)
	if err != nil {
		return nil, err
	}
	return s.keyring(keys, name)
}

// require refuses what `hearth run` and `hearth round` do not do without
// --insecure: unsigned messages, and a broker off this machine reached
// without TLS or without credentials.
func (s *securityOptions) require(b mqtt.Broker, keys *sign.Keyring) error {
	if s.insecure {
		return nil
	}
	if keys == nil {
		return errors.New("no keys: anyone who reaches the broker could forge rounds, statuses and plans. " +
			"Give every home a key (hearth keygen --home NAME), list the public keys in the neighbourhood's [keys] " +
			"(or --keys FILE) and pass --sign-key FILE; or --insecure to run unsigned")
	}
	return brokerSafe(b.URL, b.Username, b.Password)
}

// brokerSafe refuses a broker off the loopback reached without TLS or
// without credentials.
func brokerSafe(raw, user, password string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("broker %q: %w", raw, err)
	}
	if isLoopback(u.Hostname()) {
		return nil
	}
	var missing []string
	if !isTLS(raw) {
		missing = append(missing, "TLS (an ssl:// URL)")
	}
	if user == "" || password == "" {
		missing = append(missing, "credentials (--username, and --password-file or $"+passwordEnv+")")
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("broker %s is not on this machine, and is reached without %s: others on the network could read and disturb the rounds. "+
		"See mqtt/README.md for a Mosquitto with TLS and per-home users; or --insecure", raw, strings.Join(missing, " or "))
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

const keygenSynopsis = `--home NAME [-o FILE]
       hearth keygen --controller NAME [-o FILE]

Makes an Ed25519 key for home (or controller) NAME: writes the private key to
FILE (default NAME.key, mode 0600; never replaces a file) and prints the line
of the public key to add to the neighbourhood's [keys] (a controller's to
[controllers]), in every home's copy of the file. The home's process then
signs with it: hearth run -c FILE --home NAME --sign-key NAME.key`

func runKeygen(_ context.Context, e *env, args []string) int {
	var home, controller, out string
	fs := newFlagSet(e, "keygen", keygenSynopsis)
	fs.StringVar(&home, "home", "", "the home the key is for")
	fs.StringVar(&controller, "controller", "", "the controller the key is for (it may start rounds: hearth round)")
	fs.StringVar(&out, "o", "", "the private key file to write (default NAME.key)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagExit(err)
	}
	name, table := home, "keys"
	switch {
	case len(pos) > 0:
		fmt.Fprintf(e.stderr, "hearth keygen: unexpected argument %q\n", pos[0])
		return exitUsage
	case (home == "") == (controller == ""):
		fmt.Fprintln(e.stderr, "hearth keygen: give either --home NAME or --controller NAME")
		return exitUsage
	case controller != "":
		name, table = controller, "controllers"
	}
	if err := topic.CheckAgent(name); err != nil {
		fmt.Fprintf(e.stderr, "hearth keygen: %v\n", err)
		return exitUsage
	}
	if out == "" {
		out = name + ".key"
	}
	s, err := sign.Generate(name, nil)
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth keygen: %v\n", err)
		return exitFailed
	}
	if err := sign.WriteKey(out, s); err != nil {
		fmt.Fprintf(e.stderr, "hearth keygen: %v\n", err)
		return exitUsage
	}
	abs, _ := filepath.Abs(out)
	fmt.Fprintf(e.stderr, "hearth keygen: wrote %s's private key to %s (keep it on %s's machine only)\n", name, abs, name)
	fmt.Fprintf(e.stdout, "# add to [%s] of the neighbourhood file, in every home's copy\n%s = %q\n", table, tomlKey(name), sign.FormatPublic(s.Public()))
	return exitOK
}

// tomlKey quotes a key that TOML's bare keys cannot hold.
func tomlKey(k string) string {
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return fmt.Sprintf("%q", k)
		}
	}
	return k
}

const roundSynopsis = `ID -c NEIGHBOURHOOD.toml --sign-key CONTROLLER.key [--at TIME] [flags]

Asks every home for round ID: publishes {"round": "ID"} on <prefix>/cmd,
signed with the controller's key (hearth keygen --controller NAME; its public
key in the neighbourhood's [controllers]), on the broker of [broker] unless
the flags say otherwise. Without -c, --broker and --keys FILE name them.`

func runRound(ctx context.Context, e *env, args []string) int {
	var (
		b      brokerOptions
		sec    securityOptions
		file   string
		at     string
		retain bool
	)
	fs := newFlagSet(e, "round", roundSynopsis)
	b.register(fs)
	sec.register(fs)
	fs.StringVar(&file, "c", "", "the neighbourhood TOML: its [broker], and its [controllers] keys")
	fs.StringVar(&at, "at", "", "the instant the homes plan from, RFC 3339 (default: each home's start of the round)")
	fs.BoolVar(&retain, "retain", false, "publish the command retained, for homes that connect later")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagExit(err)
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(e.stderr, "hearth round: "+format+"\n", a...)
		return code
	}
	if len(pos) != 1 {
		return fail(exitUsage, "want exactly one round ID")
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "password" {
			e.log.Warn("--password is visible to every user of this machine (ps): prefer --password-file FILE or $" + passwordEnv)
		}
	})
	req := mqtt.Request{ID: pos[0]}
	if err := mqtt.CheckRoundID(req.ID); err != nil {
		return fail(exitUsage, "%v", err)
	}
	if at != "" {
		if req.At, err = time.Parse(time.RFC3339, at); err != nil {
			return fail(exitUsage, "--at %q is not an RFC 3339 time", at)
		}
	}
	var keys config.Keys
	if file != "" {
		c, err := config.Load(file)
		if err != nil {
			return fail(exitUsage, "%s: %v", file, err)
		}
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		b = homeBroker(set, b, c)
		keys = c.Keys
	}
	if b.url == "" {
		return fail(exitUsage, "no broker: give -c NEIGHBOURHOOD.toml with a [broker] url, or --broker URL")
	}
	if keys, err = sec.publicKeys(keys); err != nil {
		return fail(exitUsage, "%v", err)
	}
	ring, err := sec.keyring(keys, "")
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	cfg, err := b.config("", "")
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if err := sec.require(cfg.Broker, ring); err != nil {
		return fail(exitUsage, "%v", err)
	}
	name := "hearth-round"
	if ring != nil {
		s, _ := sign.LoadKey(sec.signKey, "")
		name = s.Name()
		if !ring.IsController(name) {
			return fail(exitUsage, "%q is not in the neighbourhood's [controllers]: the homes would drop its command", name)
		}
	}
	cfg.Keys = ring
	cfg.Logger = e.log
	c := mqtt.NewControl(cfg, name, nil, false)
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.Connect(cctx); err != nil {
		return fail(exitFailed, "%v", err)
	}
	defer c.Disconnect()
	if err := c.PublishCommand(cctx, req, retain); err != nil {
		return fail(exitFailed, "%v", err)
	}
	how := "unsigned"
	if ring != nil {
		how = "signed by " + name
	}
	fmt.Fprintf(e.stdout, "round %s asked on %s (%s)\n", req.ID, c.CommandTopic(), how)
	return exitOK
}

// readPasswordFile returns the first line of path.
func readPasswordFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--password-file: %w", err)
	}
	pw, _, _ := strings.Cut(string(b), "\n")
	pw = strings.TrimSuffix(pw, "\r")
	if pw == "" {
		return "", fmt.Errorf("--password-file %s: empty first line", path)
	}
	return pw, nil
}
