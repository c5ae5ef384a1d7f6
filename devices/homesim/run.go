package homesim

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/devices"
)

// Broker says how to reach the MQTT broker.
type Broker struct {
	URL, Username, Password string
	TLS                     *tls.Config
}

// Config configures a run of one or more simulated homes.
type Config struct {
	Model *devices.Neighbourhood
	// Homes are the indices of the homes to simulate, each with its own
	// MQTT client.
	Homes []int
	// Prefix is the topic prefix; empty means "hearth".
	Prefix string
	Broker Broker
	// Clock is the simulated clock; the run starts when it reads
	// Clock.Start (at the wall time Clock.Epoch) and ends at Until.
	Clock Clock
	Until time.Time
	// Options apply to every home; Trips, when set, gives each home's
	// cars' trips instead of Options.Trips (nil: DefaultTrips).
	Options Options
	Trips   func(home int) []Trip
	// PV[h] is home h's PV per slot (config.Config.PV), nil for none.
	PV [][]float64
	// Publish is how often (simulated) each home publishes its state
	// besides every slot boundary; 0 means 5 minutes.
	Publish time.Duration
	Log     *slog.Logger
}

// DefaultPublish is how often a simulated home publishes its state.
const DefaultPublish = 5 * time.Minute

// Topics of a home, under prefix.
func commandTopic(prefix, home string) string { return prefix + "/home/" + home + "/command/+" }
func stateTopic(prefix, home, device string) string {
	return prefix + "/home/" + home + "/state/" + device
}
func forecastTopic(prefix, home, series string) string {
	return prefix + "/home/" + home + "/forecast/" + series
}

// Series is a forecast published on <prefix>/home/<home>/forecast/<name>.
type Series struct {
	Start  time.Time `json:"start"`
	Step   string    `json:"step"`
	Values []float64 `json:"values"`
}

type simClient struct {
	home   *Home
	client paho.Client
}

// Run simulates the homes until cfg.Until (or ctx ends) and returns the
// day's report. Each home subscribes to its commands, publishes its
// forecasts once and its state every Publish and at every slot boundary.
func Run(ctx context.Context, cfg Config) (*Day, error) {
	n := cfg.Model
	if n == nil || len(cfg.Homes) == 0 {
		return nil, errors.New("homesim: no homes to simulate")
	}
	if cfg.Clock.Speed <= 0 || math.IsNaN(cfg.Clock.Speed) || math.IsInf(cfg.Clock.Speed, 0) {
		return nil, fmt.Errorf("homesim: speed %g: want a positive factor", cfg.Clock.Speed)
	}
	if !cfg.Until.After(cfg.Clock.Start) {
		return nil, fmt.Errorf("homesim: the run ends at %s, not after its start %s", cfg.Until.Format(time.RFC3339), cfg.Clock.Start.Format(time.RFC3339))
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "hearth"
	}
	if cfg.Publish <= 0 {
		cfg.Publish = DefaultPublish
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	step := cfg.Options.Step
	if step <= 0 {
		step = DefaultStep
	}
	day := DayStart(n.Horizon, cfg.Clock.Start)
	var sims []*simClient
	defer func() {
		for _, sc := range sims {
			if sc.client != nil {
				sc.client.Disconnect(250)
			}
		}
	}()
	for _, hi := range cfg.Homes {
		o := cfg.Options
		o.Log = log
		if hi < len(cfg.PV) {
			o.PV = cfg.PV[hi]
		}
		if cfg.Trips != nil {
			o.Trips = cfg.Trips(hi)
		} else if o.Trips == nil {
			o.Trips = DefaultTrips(n, hi)
		}
		h, err := NewHome(n, hi, day, cfg.Clock.Start, o)
		if err != nil {
			return nil, err
		}
		sc := &simClient{home: h}
		if err := sc.connect(ctx, cfg, log); err != nil {
			return nil, err
		}
		sims = append(sims, sc)
	}
	for _, sc := range sims {
		if err := sc.publishForecasts(cfg.Prefix); err != nil {
			return nil, err
		}
		sc.publishState(cfg.Prefix, cfg.Clock.Start, log)
	}
	if wait := cfg.Clock.Until(cfg.Clock.Start); wait > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
	tick := max(cfg.Clock.WallDuration(step), 5*time.Millisecond)
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	last := cfg.Clock.Start
	for last.Before(cfg.Until) {
		select {
		case <-ctx.Done():
			return finish(n, sims), ctx.Err()
		case <-ticker.C:
		}
		now := cfg.Clock.Now()
		if now.After(cfg.Until) {
			now = cfg.Until
		}
		if !now.After(last) {
			continue
		}
		// Publish at each boundary of Publish (slot boundaries are
		// multiples of it when it divides the slot) crossed.
		for b := nextBoundary(last, cfg.Publish, day); !b.After(now); b = b.Add(cfg.Publish) {
			for _, sc := range sims {
				sc.home.Advance(b)
				sc.publishState(cfg.Prefix, b, log)
			}
			last = b
		}
		for _, sc := range sims {
			sc.home.Advance(now)
		}
		last = now
	}
	for _, sc := range sims {
		sc.publishState(cfg.Prefix, last, log)
	}
	return finish(n, sims), nil
}

// nextBoundary returns the first multiple of every after t, counted from
// anchor.
func nextBoundary(t time.Time, every time.Duration, anchor time.Time) time.Time {
	d := t.Sub(anchor)
	k := d / every
	if d >= 0 {
		k++
	}
	return anchor.Add(k * every)
}

func finish(n *devices.Neighbourhood, sims []*simClient) *Day {
	var traces []*Trace
	for _, sc := range sims {
		traces = append(traces, sc.home.Trace())
	}
	return NewDay(n, traces)
}

func (sc *simClient) connect(ctx context.Context, cfg Config, log *slog.Logger) error {
	home := sc.home.Name()
	o := paho.NewClientOptions().
		AddBroker(cfg.Broker.URL).
		SetClientID(fmt.Sprintf("hearth-homesim-%s-%d", home, time.Now().UnixNano()%1e9)).
		SetUsername(cfg.Broker.Username).
		SetPassword(cfg.Broker.Password).
		SetTLSConfig(cfg.Broker.TLS).
		SetCleanSession(true).
		SetAutoReconnect(true).
		SetConnectRetry(true).
		SetConnectRetryInterval(200 * time.Millisecond).
		SetConnectTimeout(10 * time.Second).
		SetOrderMatters(false)
	sub := commandTopic(cfg.Prefix, home)
	handler := func(_ paho.Client, m paho.Message) {
		device := m.Topic()[strings.LastIndexByte(m.Topic(), '/')+1:]
		if len(m.Payload()) == 0 {
			return // a retained command cleared
		}
		c, err := ParseCommand(m.Payload())
		if err != nil {
			log.Warn("command refused", "home", home, "topic", m.Topic(), "err", err)
			return
		}
		if err := sc.home.Command(device, c); err != nil {
			log.Warn("command refused", "topic", m.Topic(), "err", err)
		}
	}
	o.SetOnConnectHandler(func(c paho.Client) {
		// Subscribing on every (re)connection: a clean session forgets
		// subscriptions, and the broker resends the retained commands.
		c.Subscribe(sub, 1, handler)
	})
	sc.client = paho.NewClient(o)
	t := sc.client.Connect()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.Done():
	}
	if err := t.Error(); err != nil {
		return fmt.Errorf("homesim: home %s: connecting to %s: %w", home, cfg.Broker.URL, err)
	}
	return nil
}

func (sc *simClient) publishForecasts(prefix string) error {
	h := sc.home
	hz := h.n.Horizon
	// A series has one step: on a horizon of uneven slots, the greatest
	// common divisor of the lengths, each slot's value repeated over the
	// steps it spans.
	g := hz.SlotMinutes
	for t := range hz.Slots {
		g = gcd(g, hz.Minutes(t))
	}
	step := (time.Duration(g) * time.Minute).String()
	step = strings.TrimSuffix(strings.TrimSuffix(step, "0s"), "0m")
	spread := func(v func(t int) float64) []float64 {
		var out []float64
		for t := range hz.Slots {
			for range hz.Minutes(t) / g {
				out = append(out, v(t))
			}
		}
		return out
	}
	series := map[string]Series{"background": {Start: h.start, Step: step, Values: spread(h.gross)}}
	if h.opts.PV != nil {
		series["pv"] = Series{Start: h.start, Step: step, Values: spread(h.pv)}
	}
	for name, s := range series {
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		sc.client.Publish(forecastTopic(prefix, h.Name(), name), 1, true, b)
	}
	return nil
}

// publishState publishes every device's state at simulated time t,
// retained, without waiting for the broker.
func (sc *simClient) publishState(prefix string, t time.Time, log *slog.Logger) {
	h := sc.home
	for d := range h.h.Devices {
		props, plugged := h.State(d)
		m := map[string]any{"time": t.Format(time.RFC3339)}
		for k, v := range props {
			// Down to a thousandth (a Wh of stored energy): never more
			// than the device holds, so that a plan that meets a goal
			// exactly from this state meets it on the device (the
			// automatic levels' goals are kept to 1 mWh). The slack of
			// 10⁻⁶ keeps a float a hair under a thousandth on it.
			m[k] = math.Floor(v*1000+1e-3) / 1000
		}
		if plugged != nil {
			m["plugged"] = *plugged
		}
		b, err := json.Marshal(m)
		if err != nil {
			log.Warn("state not published", "home", h.Name(), "err", err)
			continue
		}
		sc.client.Publish(stateTopic(prefix, h.Name(), h.h.Devices[d].Name), 1, true, b)
	}
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
