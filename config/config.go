// Package config reads hearth's TOML configuration: a neighbourhood
// (horizon, tariff, coordination windows and levels, objective weights,
// feeder limit, solver, broker) and its homes (devices, sensors, rules),
// inline or one file per home. It fills in defaults and checks everything
// it can before anything runs: every fault is reported as
// "file:line: key: what is wrong and how to fix it", including rules that
// no schedule can satisfy (devices.Home.Check) and unknown keys.
//
// See example.go for the annotated schema.
package config

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/mva/protocol"
)

// Config is a loaded neighbourhood.
type Config struct {
	// File is the neighbourhood file.
	File          string
	Neighbourhood *devices.Neighbourhood
	Solver        Solver
	Broker        Broker
	// Run is when `hearth run` starts rounds by itself ([run]).
	Run Run
	// Publish is what `hearth run` publishes besides the plans ([publish]).
	Publish Publish
	// Keys are the public keys that sign the homes' and the controllers'
	// MQTT messages ([keys], [controllers]).
	Keys Keys
	// HomeFiles[h] is the file home h was read from.
	HomeFiles []string
	// Live is [live]; Devices[h] the live state of home h's devices that
	// store energy or report plugged, and PV[h] its pv_kw per slot (nil
	// without one), which the home's background is net of.
	Live    Live
	Devices [][]DeviceLive
	PV      [][]float64
	// Sensors[h] are home h's [[sensor]] tables that name a topic their
	// live value comes from.
	Sensors [][]SensorLive
	// SeriesFiles are the CSV files of series ([prices] import_file and
	// export_file, a home's pv_file and background_file), absolute.
	SeriesFiles map[SeriesKey]string
	// Planners[h] is home h's planner: PlannerCompiled or PlannerEnergy.
	Planners []string
	// Sizes[h] are the size parameters home h's devices gave, by device
	// name (zero fields keep the catalogue's defaults); nil for none.
	Sizes []map[string]devices.Sizing
}

// Solver chooses the algorithms.
type Solver struct {
	// Global is the protocol between homes: one of GlobalSolvers.
	Global string
	// Local fills each home's MVA table: one of LocalSolvers.
	Local string
	// Table is "eager" (fill every MVA row first) or "lazy".
	Table string
	// Params are protocol parameters (name → number), passed to mva.Node.
	Params map[string]float64
	Seed   uint64
	// GPU is "auto", "on" or "off".
	GPU string
	// Timeout bounds a run; 0 means none.
	Timeout time.Duration
	// Improve is the improvement phase on the load that flows after the
	// protocol, as --improve gives it (devices/homesolve): 0 the default
	// (its descent without escapes), N > 0 that many escapes, -1 none.
	// It belongs to the file so that every `hearth run` home of a street
	// reads the same.
	Improve int
}

// Broker is the MQTT broker the homes meet at. An empty URL means the
// embedded broker on loopback.
type Broker struct {
	URL      string
	Username string
	Password string
	// CAFile, CertFile and KeyFile are absolute paths (resolved against
	// the configuration file's folder).
	CAFile, CertFile, KeyFile string
	TopicPrefix               string
}

// Keys are the neighbourhood's Ed25519 public keys (mqtt/sign): [keys]
// gives every home's, [controllers] those of the controllers that may
// start rounds (`hearth round`). Both empty means the neighbourhood's
// messages are not signed.
type Keys struct {
	Homes, Controllers map[string]ed25519.PublicKey
}

// Any reports whether any key is configured.
func (k Keys) Any() bool { return len(k.Homes)+len(k.Controllers) > 0 }

// Embedded reports whether hearth should start its own broker.
func (b *Broker) Embedded() bool { return b.URL == "" }

// The names the solver keys accept, with the defaults first. The
// protocols are the registry's (mva/protocol), so a protocol registered
// there is a [solver] global here too; the local solvers are those the
// commands' registry (internal/solve) offers for homes, which a test
// there keeps in step.
var (
	GlobalSolvers = globalSolvers()
	LocalSolvers  = []string{"be", "dfbnb", "aobb", "edac", "bruteforce", "gibbs", "mh", "auto"}
	Tables        = []string{"eager", "lazy"}
	GPUModes      = []string{"auto", "on", "off"}
)

// DefaultGlobal is the protocol of a neighbourhood whose [solver] names
// none.
const DefaultGlobal = "dpop"

// globalSolvers lists DefaultGlobal, the other registered protocols and
// "none" (a central solve).
func globalSolvers() []string {
	names := []string{DefaultGlobal}
	for _, n := range protocol.Names() {
		if n != DefaultGlobal {
			names = append(names, n)
		}
	}
	return append(names, "none")
}

// Defaults of the neighbourhood keys.
const (
	DefaultSlots       = 24
	DefaultSlot        = time.Hour
	DefaultLevels      = 4
	DefaultPrice       = 0.25 // currency per kWh, flat
	DefaultPeakWeight  = 0.01
	DefaultTopicPrefix = "hearth"
	DefaultSeed        = 1
)

// Load reads the neighbourhood file at path and the home files it names.
// The error is an Errors listing every fault.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data, os.ReadFile)
}

// Parse reads a neighbourhood from data; path names it in messages and
// anchors relative paths; read loads the home files and TLS files it
// names (nil refuses them).
func Parse(path string, data []byte, read func(string) ([]byte, error)) (*Config, error) {
	l := &loader{dir: filepath.Dir(path), read: read}
	cfg := l.neighbourhood(path, data)
	if len(l.errs) > 0 {
		return nil, l.errs.sorted()
	}
	return cfg, nil
}

// loader collects faults across files.
type loader struct {
	dir  string
	read func(string) ([]byte, error)
	errs Errors
	// opts are LoadWith's; fileStart is [horizon] start as the file
	// writes it.
	opts      LoadOptions
	fileStart int
	// series collects the series files (Config.SeriesFiles).
	series map[SeriesKey]string
}

func readFile(p string) ([]byte, error) { return os.ReadFile(p) }

func dirOf(p string) string { return filepath.Dir(p) }

// parse decodes one TOML file into a generic table, turning syntax errors
// into an Error with the parser's line.
func (l *loader) parse(file string, data []byte) (*node, bool) {
	src := &source{file: file, errs: &l.errs}
	var m map[string]any
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&m); err != nil {
		e := &Error{File: file, Msg: "not valid TOML: " + err.Error()}
		var pe toml.ParseError
		if errors.As(err, &pe) {
			e.Line = pe.Position.Line
			e.Key = pe.LastKey
			e.Msg = "not valid TOML: " + pe.Message
			if pe.Usage != "" {
				e.Msg += " (" + strings.TrimSpace(strings.SplitN(pe.Usage, "\n", 2)[0]) + ")"
			}
		}
		l.errs = append(l.errs, e)
		return nil, false
	}
	src.pos = locate(data)
	return newNode(src, "", m), true
}

// file resolves a path named in the configuration against its folder.
func (l *loader) file(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(l.dir, p)
}

func oneOf(n *node, k string, valid []string, def string) string {
	s, ok := n.str(k)
	if !ok {
		return def
	}
	for _, v := range valid {
		if s == v {
			return s
		}
	}
	msg := fmt.Sprintf("%q is not one of %s", s, strings.Join(valid, ", "))
	if c := closest(s, valid); c != "" {
		msg += fmt.Sprintf("; did you mean %q?", c)
	}
	n.errorf(k, "%s", msg)
	return def
}
