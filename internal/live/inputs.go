package live

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hearth-dcop/hearth/config"
)

// Topic levels of the live topics.
const (
	levelHome     = "home"
	levelState    = "state"
	levelForecast = "forecast"
	levelPrices   = "prices"
	levelCommand  = "command"
	levelSet      = "set"
)

// StateTopic is P/home/H/state/D.
func StateTopic(prefix, home, device string) string {
	return prefix + "/" + levelHome + "/" + home + "/" + levelState + "/" + device
}

// ForecastTopic is P/home/H/forecast/<what> (pv or background).
func ForecastTopic(prefix, home, what string) string {
	return prefix + "/" + levelHome + "/" + home + "/" + levelForecast + "/" + what
}

// PriceTopic is P/prices/<what> (import or export).
func PriceTopic(prefix, what string) string { return prefix + "/" + levelPrices + "/" + what }

// CommandTopic is P/home/H/command/D.
func CommandTopic(prefix, home, device string) string {
	return prefix + "/" + levelHome + "/" + home + "/" + levelCommand + "/" + device
}

// SetTopic is P/home/H/set/D/<target>.
func SetTopic(prefix, home, device, target string) string {
	return prefix + "/" + levelHome + "/" + home + "/" + levelSet + "/" + device + "/" + target
}

// AvailabilityTopic is P/home/H/availability.
func AvailabilityTopic(prefix, home string) string {
	return prefix + "/" + levelHome + "/" + home + "/availability"
}

// Change is a move of the inputs that calls for a round before the next
// slot's: a car plugged in, a stored energy off the plan, new series, a
// user's target.
type Change struct {
	Why string
	// At is when it was seen (the home's clock).
	At time.Time
	// Online is set when the change is that every home of the
	// neighbourhood is online now (a home came online, or this one
	// found all the others online when it started).
	Online bool
}

// reading is the last good value of a device's live quantity.
type reading struct {
	v        float64
	plugged  bool
	at       time.Time // the payload's time, else when it arrived
	reported bool      // stale or missing reported since the last good value
}

// key names a live quantity: home, device and what ("soc", "plugged").
type key struct{ home, device, what string }

// Inputs holds the latest live values a home has received: every home's
// device state and series (so that every home of a round plans the same
// neighbourhood), and this home's user targets. Its handlers run on the
// MQTT client's goroutines; the daemon reads it between rounds.
type Inputs struct {
	prefix string
	home   string
	cfg    *config.Config
	log    *slog.Logger
	clock  *Clock

	mu       sync.Mutex
	readings map[key]*reading
	series   map[string]Series
	hashes   map[string]string
	// files are the series read from files, by path; fileErrs the last
	// error reported for each.
	files    map[string]Series
	fileErrs map[string]string
	targets  map[[3]string]string
	// expected are the plan's stored energies of this home's devices:
	// values at boundaries from start, every slot.
	expected map[string]expectation
	missing  map[key]bool
	changes  chan Change
	// online are the homes whose availability says online; complete
	// whether all were at the last message.
	online   map[string]bool
	complete bool
	// route maps a topic to what it carries.
	route map[string][]route
	// props are the live values of properties other than stored
	// energies (props.go).
	props map[propKey]*reading
	// running are the commands every home's storages run (their
	// retained command topics), by home and device: what carries a
	// stored energy read before slot 0 on to its start (ahead).
	running map[key]running
}

// running is a storage's command as the inputs read it.
type running struct {
	start, end time.Time
	action     string
}

type expectation struct {
	start  time.Time
	slot   time.Duration
	values []float64
	// from is when values[0] held: the instant the round read the
	// state, inside slot 0 for a round made within its slot.
	from time.Time
}

type route struct {
	k       key
	command bool
	series  bool
	target  bool
	avail   bool
	src     *config.Source // nil: the device's own state topic
	// prop is set for a [[sensor]]'s own topic: the property it reads.
	prop *propKey
	unit string
	full float64
}

// NewInputs returns the inputs of home of cfg, on topics under prefix.
func NewInputs(cfg *config.Config, prefix, home string, clock *Clock, log *slog.Logger) *Inputs {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	in := &Inputs{prefix: prefix, home: home, cfg: cfg, log: log, clock: clock,
		readings: map[key]*reading{}, series: map[string]Series{}, hashes: map[string]string{},
		files: map[string]Series{}, fileErrs: map[string]string{},
		targets: map[[3]string]string{}, expected: map[string]expectation{}, missing: map[key]bool{},
		changes: make(chan Change, 16), online: map[string]bool{}, running: map[key]running{}}
	in.routes()
	return in
}

// Changes delivers the moves that call for a round.
func (in *Inputs) Changes() <-chan Change { return in.changes }

func (in *Inputs) routes() {
	in.route = map[string][]route{}
	n := in.cfg.Neighbourhood
	add := func(t string, r route) { in.route[t] = append(in.route[t], r) }
	for hi, h := range n.Homes {
		for _, dl := range in.cfg.Devices[hi] {
			own := StateTopic(in.prefix, h.Name, dl.Device)
			if dl.Property != "" {
				add(CommandTopic(in.prefix, h.Name, dl.Device), route{k: key{h.Name, dl.Device, "command"}, command: true})
				if dl.SoC != nil {
					add(dl.SoC.Topic, route{k: key{h.Name, dl.Device, "soc"}, src: dl.SoC, unit: dl.SoC.Unit, full: dl.Full})
				} else {
					add(own, route{k: key{h.Name, dl.Device, "soc"}, unit: "kWh", full: dl.Full})
				}
			}
			if dl.EV {
				if dl.Plugged != nil {
					add(dl.Plugged.Topic, route{k: key{h.Name, dl.Device, "plugged"}, src: dl.Plugged})
				} else {
					add(own, route{k: key{h.Name, dl.Device, "plugged"}})
				}
			}
		}
		for _, what := range []string{"pv", "background"} {
			add(ForecastTopic(in.prefix, h.Name, what), route{k: key{h.Name, "", what}, series: true})
		}
		for _, t := range Targets(in.cfg, in.prefix, hi) {
			add(t.StateTopic, route{k: key{h.Name, t.Device, t.Name}, target: true})
		}
		for _, what := range []string{"import", "export"} {
			add(HomePriceTopic(in.prefix, h.Name, what), route{k: key{h.Name, "", "price-" + what}, series: true})
		}
		add(AvailabilityTopic(in.prefix, h.Name), route{k: key{h.Name, "", "online"}, avail: true})
	}
	for _, what := range []string{"import", "export"} {
		add(PriceTopic(in.prefix, what), route{k: key{"", "", what}, series: true})
	}
	in.propRoutes(add)
}

// Topics are the topics to subscribe to, sorted.
func (in *Inputs) Topics() []string {
	out := make([]string, 0, len(in.route))
	for t := range in.route {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Handle takes a message on topic t.
func (in *Inputs) Handle(t string, payload []byte) {
	routes := in.route[t]
	if len(routes) == 0 {
		return
	}
	now := in.clock.Now()
	var st *State
	for _, r := range routes {
		switch {
		case r.command:
			in.handleCommand(r.k, payload)
		case r.avail:
			in.handleAvailability(r.k.home, payload, now)
		case r.target:
			in.handleTarget(r.k, payload, now)
		case r.series:
			in.handleSeries(t, r, payload, now)
		case r.prop != nil:
			v, err := ParseNumber(payload, r.src.Field)
			if err != nil {
				in.log.Warn("live state ignored", "topic", t, "err", err)
				continue
			}
			in.setSensor(r, v, now)
		case r.src != nil && r.k.what == "plugged":
			v, err := ParseBool(payload, r.src.Field)
			if err != nil {
				in.log.Warn("live state ignored", "topic", t, "err", err)
				continue
			}
			in.setPlugged(r.k, v, now)
		case r.src != nil:
			v, err := ParseNumber(payload, r.src.Field)
			if err != nil {
				in.log.Warn("live state ignored", "topic", t, "err", err)
				continue
			}
			in.setSoC(r, v, now)
		default:
			if st == nil {
				s, err := ParseState(payload)
				if err != nil {
					in.log.Warn("live state ignored", "topic", t, "err", err)
					return
				}
				if s.Time.IsZero() {
					s.Time = now
				}
				st = &s
			}
			if r.k.what == whatProps {
				in.setProps(r.k, *st)
				continue
			}
			if r.k.what == "plugged" {
				if st.Plugged != nil {
					in.setPlugged(r.k, *st.Plugged, st.Time)
				}
				continue
			}
			prop := in.property(r.k)
			if v, ok := st.Values[prop]; ok {
				in.setSoC(r, v, st.Time)
			}
		}
	}
}

// property is the stored property of a device ("charge", "soc").
func (in *Inputs) property(k key) string {
	for hi, h := range in.cfg.Neighbourhood.Homes {
		if h.Name != k.home {
			continue
		}
		for _, dl := range in.cfg.Devices[hi] {
			if dl.Device == k.device {
				return dl.Property
			}
		}
	}
	return ""
}

func (in *Inputs) setSoC(r route, v float64, at time.Time) {
	if r.unit == "%" {
		v = v / 100 * r.full
	}
	if v < -1e-9 || r.full > 0 && v > r.full*1.05+1e-9 {
		in.log.Warn("live state out of the device's range; ignored", "home", r.k.home, "device", r.k.device, "value", v, "full", r.full)
		return
	}
	v = math.Max(0, math.Min(v, r.full))
	in.mu.Lock()
	in.readings[r.k] = &reading{v: v, at: at}
	delete(in.missing, r.k)
	change := ""
	if r.k.home == in.home {
		if e, ok := in.expected[r.k.device]; ok {
			if want, ok := e.at(at); ok && math.Abs(want-v) > in.cfg.Live.OffPlanKWh {
				change = fmt.Sprintf("%s off the plan: %.2f kWh, planned %.2f", r.k.device, v, want)
				delete(in.expected, r.k.device)
			}
		}
	}
	in.mu.Unlock()
	if change != "" {
		in.signal(Change{Why: change, At: at})
	}
}

func (in *Inputs) setPlugged(k key, v bool, at time.Time) {
	in.mu.Lock()
	prev, had := in.readings[k]
	in.readings[k] = &reading{plugged: v, at: at}
	delete(in.missing, k)
	in.mu.Unlock()
	if k.home == in.home && v && (!had || !prev.plugged) && had {
		in.signal(Change{Why: k.device + " plugged in", At: at})
	}
	if k.home == in.home && !v && had && prev.plugged {
		in.signal(Change{Why: k.device + " unplugged", At: at})
	}
}

func (in *Inputs) handleSeries(t string, r route, payload []byte, now time.Time) {
	s, err := ParseSeries(payload)
	if err != nil {
		in.log.Warn("series ignored", "topic", t, "err", err)
		return
	}
	h := sha256.Sum256(payload)
	hash := hex.EncodeToString(h[:])
	in.mu.Lock()
	old, had := in.hashes[t]
	in.series[t], in.hashes[t] = s, hash
	in.mu.Unlock()
	if had && old == hash {
		return
	}
	// The home whose forecast or own prices it is asks for the round;
	// the street's prices, which are every home's, the neighbourhood's
	// first home.
	asker := r.k.home
	if asker == "" && len(in.cfg.Neighbourhood.Homes) > 0 {
		asker = in.cfg.Neighbourhood.Homes[0].Name
	}
	if asker == in.home {
		in.signal(Change{Why: "new series on " + t, At: now})
	}
}

// handleCommand keeps the command a home's storage runs.
func (in *Inputs) handleCommand(k key, payload []byte) {
	c, err := ParseCommand(payload)
	if err != nil {
		in.log.Warn("command ignored", "home", k.home, "device", k.device, "err", err)
		return
	}
	start, err1 := time.Parse(time.RFC3339, c.SlotStart)
	end, err2 := time.Parse(time.RFC3339, c.SlotEnd)
	if err1 != nil || err2 != nil || !end.After(start) {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.running[k] = running{start: start, end: end, action: c.Action}
}

func (in *Inputs) signal(c Change) {
	select {
	case in.changes <- c:
	default:
		// A round is pending already; it reads the newest inputs.
	}
}

// at interpolates the plan's value at t.
func (e expectation) at(t time.Time) (float64, bool) {
	if e.slot <= 0 || len(e.values) < 2 || t.Before(e.start) {
		return 0, false
	}
	x := float64(t.Sub(e.start)) / float64(e.slot)
	i := int(x)
	if i+1 >= len(e.values) {
		return 0, false
	}
	f := x - float64(i)
	if i == 0 && e.from.After(e.start) {
		// A round made inside slot 0 planned it from the state at
		// from, to be reached by the slot's end: the course runs from
		// there (a whole slot's course from the slot's start would
		// put the device behind it by what the slot had already
		// moved, and ask for round after round).
		if t.Before(e.from) {
			return 0, false
		}
		f = float64(t.Sub(e.from)) / float64(e.start.Add(e.slot).Sub(e.from))
	}
	return e.values[i]*(1-f) + e.values[i+1]*f, true
}

// Expect records the plan's stored energy of this home's device at the
// slot boundaries from start (values[0] at start, or at from where the
// round read the state inside slot 0), for the off-plan check.
func (in *Inputs) Expect(device string, start time.Time, slot time.Duration, values []float64, from time.Time) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.expected[device] = expectation{start: start, slot: slot, values: slices.Clone(values), from: from}
}

// handleTarget takes the value in effect of a home's target; a change
// of this home's asks for a round.
func (in *Inputs) handleTarget(k key, payload []byte, now time.Time) {
	v := strings.TrimSpace(string(payload))
	if len(v) > 64 {
		return
	}
	tk := [3]string{k.home, k.device, k.what}
	in.mu.Lock()
	old, had := in.targets[tk]
	if v == "" {
		delete(in.targets, tk)
	} else {
		in.targets[tk] = v
	}
	in.mu.Unlock()
	if k.home == in.home && (!had || old != v) {
		in.signal(Change{Why: fmt.Sprintf("%s %s set to %s", k.device, k.what, v), At: now})
	}
}

// handleAvailability takes a home's availability (online or offline).
// When it completes the set of homes online, the change asks for a
// round: a home that starts while the others run, or the last home of a
// street to start, brings every home into one round at once, where a
// round asked for earlier would have waited for homes not yet running.
func (in *Inputs) handleAvailability(home string, payload []byte, now time.Time) {
	on := strings.TrimSpace(string(payload)) == "online"
	in.mu.Lock()
	in.online[home] = on
	was := in.complete
	in.complete = in.missingLocked() == nil
	completed := in.complete && !was
	in.mu.Unlock()
	if completed {
		in.signal(Change{Why: "every home online", At: now, Online: true})
	}
}

// Offline returns the homes of the neighbourhood whose availability
// does not say online (none: every home runs).
func (in *Inputs) Offline() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.missingLocked()
}

func (in *Inputs) missingLocked() []string {
	var out []string
	for _, h := range in.cfg.Neighbourhood.Homes {
		if !in.online[h.Name] {
			out = append(out, h.Name)
		}
	}
	return out
}

// Unread counts the device states (a stored energy, whether a car is
// plugged in) and the [[sensor]] topics of every home that no message
// has given yet: a process that plans once waits a bounded time for the
// retained ones. The other properties a device moves are not waited
// for: many appliances publish no state.
func (in *Inputs) Unread() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	n := 0
	for _, routes := range in.route {
		for _, r := range routes {
			if r.series || r.target || r.avail || r.command || r.k.what == whatProps {
				continue
			}
			if r.prop != nil {
				if _, ok := in.props[*r.prop]; !ok {
					n++
				}
			} else if _, ok := in.readings[r.k]; !ok {
				n++
			}
		}
	}
	return n
}
