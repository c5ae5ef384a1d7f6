package config

import (
	"crypto/ed25519"
	"fmt"
	"maps"
	"math"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/mqtt/sign"
)

// neighbourhood reads the top-level file.
func (l *loader) neighbourhood(path string, data []byte) *Config {
	root, ok := l.parse(path, data)
	if !ok {
		return nil
	}
	n := &devices.Neighbourhood{Units: devices.Units{Power: "kW", PowerScale: 1, Currency: "$", PriceScale: 1}}
	cfg := &Config{File: path, Neighbourhood: n, SeriesFiles: map[SeriesKey]string{}}
	l.series = cfg.SeriesFiles
	n.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if s, ok := root.str("name"); ok {
		n.Name = s
	}
	ck := l.horizon(root, n)
	l.prices(root, n, ck)
	nk := l.coordination(root, n, ck)
	l.objective(root, n)
	l.feeder(root, n)
	cfg.Solver = l.solver(root)
	cfg.Broker = l.broker(root)
	cfg.Run = l.run(root)
	cfg.Publish = l.publish(root)
	cfg.Live = l.live(root)
	var srcs []*homeSrc
	if files, ok := root.strs("homes"); ok {
		for i, f := range files {
			p := l.file(f)
			if l.read == nil {
				root.src.errorf(index("homes", i), "cannot read home files here")
				continue
			}
			data, err := l.read(p)
			if err != nil {
				root.src.errorf(index("homes", i), "cannot read home file: %v", err)
				continue
			}
			hn, ok := l.parse(p, data)
			if !ok {
				continue
			}
			def := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
			h, hs := l.home(hn, n.Horizon, ck, def)
			n.Homes = append(n.Homes, h)
			srcs = append(srcs, hs)
			cfg.HomeFiles = append(cfg.HomeFiles, p)
			cfg.Devices, cfg.PV = append(cfg.Devices, hs.live), append(cfg.PV, hs.pv)
			cfg.Sensors = append(cfg.Sensors, hs.sensors)
			cfg.Planners, cfg.Sizes = append(cfg.Planners, hs.planner), append(cfg.Sizes, hs.sizes)
		}
	}
	for _, hn := range root.tables("home") {
		h, hs := l.home(hn, n.Horizon, ck, "")
		n.Homes = append(n.Homes, h)
		srcs = append(srcs, hs)
		cfg.HomeFiles = append(cfg.HomeFiles, path)
		cfg.Devices, cfg.PV = append(cfg.Devices, hs.live), append(cfg.PV, hs.pv)
		cfg.Sensors = append(cfg.Sensors, hs.sensors)
		cfg.Planners, cfg.Sizes = append(cfg.Planners, hs.planner), append(cfg.Sizes, hs.sizes)
	}
	if !root.has("homes") && !root.has("home") {
		root.src.errorf("", "no homes: list home files in homes = [\"a.toml\", …] or add [[home]] tables")
	}
	l.neighbours(root, n, srcs)
	l.discoveryNames(root, cfg)
	cfg.Keys = l.keys(root, n)
	root.done("name", "homes", "home", "neighbours", "horizon", "prices", "coordination", "objective", "feeder", "solver", "broker", "run", "publish", "keys", "controllers", "live")
	if len(l.errs) > 0 {
		return cfg
	}
	l.check(root.src, nk, n, srcs)
	return cfg
}

// horizon reads [horizon] and returns the clock for time tokens.
func (l *loader) horizon(root *node, n *devices.Neighbourhood) clock {
	hz := devices.Horizon{Slots: DefaultSlots, SlotMinutes: int(DefaultSlot / time.Minute)}
	if t, ok := root.table("horizon"); ok {
		if v, ok := t.integer("slots"); ok {
			if v < 1 || v > 10000 {
				t.errorf("slots", "%d slots: use 1 to 10000", v)
			} else {
				hz.Slots = int(v)
			}
		}
		if s, ok := t.str("slot"); ok {
			if m, err := minutes(s); err != nil {
				t.errorf("slot", "%v", err)
			} else {
				hz.SlotMinutes = m
			}
		}
		if t.has("segments") {
			l.segments(t, &hz)
		}
		if s, ok := t.str("start"); ok {
			if m, err := parseClock(s); err != nil {
				t.errorf("start", "%v", err)
			} else {
				hz.Start = m % 1440
			}
		}
		switch oneOf(t, "dynamics", []string{"full", "shds"}, "full") {
		case "shds":
			hz.Dynamics = devices.SHDS
		}
		t.done("slots", "slot", "segments", "start", "dynamics")
	}
	l.fileStart = hz.Start
	if !l.opts.Rolling && root.has("live") {
		// A live neighbourhood is always read as a rolling horizon, here
		// from the file's own start.
		l.opts = LoadOptions{Rolling: true, Start: hz.Start}
	}
	if l.opts.Rolling {
		// A rolling horizon of uneven slots lays the segments' pattern
		// from slot 0 each round: the fine slots always come first.
		hz.Start = ((l.opts.Start % 1440) + 1440) % 1440
	}
	n.Horizon = hz
	ck := clock{start: hz.Start, slot: hz.SlotMinutes, slots: hz.Slots, rolling: l.opts.Rolling}
	if hz.Lengths != nil {
		ck.bounds = make([]int, hz.Slots+1)
		for i, m := range hz.Lengths {
			ck.bounds[i+1] = ck.bounds[i] + m
		}
	}
	return ck
}

// segments reads [horizon] segments, a horizon of uneven slots: a list
// of { slot = "15m", count = 16 } tables, in order, whose slots follow
// one another. It replaces slot and slots; only energy homes plan on it
// (homeReader.planner refuses the others).
func (l *loader) segments(t *node, hz *devices.Horizon) {
	if t.has("slot") || t.has("slots") {
		t.errorf("segments", "give either segments or slot/slots, not both")
		return
	}
	segs := t.tables("segments")
	if len(segs) == 0 {
		t.errorf("segments", "segments is a list of tables { slot = \"15m\", count = 16 }, at least one")
		return
	}
	var lengths []int
	for _, sg := range segs {
		s, okS := sg.str("slot")
		c, okC := sg.integer("count")
		sg.done("slot", "count")
		if !okS || !okC {
			sg.src.errorf(sg.path, "a segment needs slot = \"DURATION\" (e.g. \"15m\") and count = number of slots")
			return
		}
		m, err := minutes(s)
		if err != nil {
			sg.errorf("slot", "%v", err)
			return
		}
		if c < 1 || c > 10000 || len(lengths)+int(c) > 10000 {
			sg.errorf("count", "count = %d: a segment holds at least one slot, the horizon at most 10000", c)
			return
		}
		for range c {
			lengths = append(lengths, m)
		}
	}
	hz.Slots, hz.SlotMinutes, hz.Lengths = len(lengths), lengths[0], lengths
}

// prices reads [prices]: per_slot, or default with periods.
func (l *loader) prices(root *node, n *devices.Neighbourhood, ck clock) {
	H := n.Horizon.Slots
	n.Prices = make([]float64, H)
	for t := range n.Prices {
		n.Prices[t] = DefaultPrice
	}
	t, ok := root.table("prices")
	if !ok {
		return
	}
	if s, ok := t.str("currency"); ok {
		n.Units.Currency = s
	}
	n.ExportPrices = l.tariff(t, n.Prices, ck)
	l.seriesFile(t, "import_file", SeriesKey{What: "import"}, l.series)
	l.seriesFile(t, "export_file", SeriesKey{What: "export"}, l.series)
	t.done("per_slot", "default", "periods", "currency", "export_per_slot", "export_default", "import_file", "export_file")
}

// tariff reads the import prices of a [prices] table into prices (one per
// slot, already holding the defaults) and returns its export prices (nil:
// feed-in earns the price). It is the street's [prices] and a home's own.
func (l *loader) tariff(t *node, prices []float64, ck clock) []float64 {
	H := len(prices)
	if ps, ok := t.nums("per_slot"); ok {
		if t.has("default") || t.has("periods") {
			t.errorf("per_slot", "give either per_slot or default/periods, not both")
		}
		if len(ps) != H {
			t.errorf("per_slot", "%d prices for %d slots: give one price per slot", len(ps), H)
		} else {
			copy(prices, l.rotate(ps, ck, t, "per_slot"))
		}
	}
	if d, ok := t.num("default"); ok {
		for i := range prices {
			prices[i] = d
		}
	}
	for _, p := range t.tables("periods") {
		from, okf := p.str("from")
		to, okt := p.str("to")
		price, okp := p.num("price")
		if !okf || !okt || !okp {
			p.errorf("", "a period needs from = \"HH:MM\", to = \"HH:MM\" and price = number")
			p.done("from", "to", "price")
			continue
		}
		if ck.rolling {
			l.rollingPeriod(p, prices, ck, from, to, price)
			continue
		}
		a, err := ck.boundary(from)
		if err != nil {
			p.errorf("from", "%v", err)
			continue
		}
		b, err := ck.boundary(to)
		if err != nil {
			p.errorf("to", "%v", err)
			continue
		}
		if b <= a {
			p.errorf("to", "the period %s–%s is empty or runs past the end of the horizon; periods must lie inside it", from, to)
		}
		for s := a; s < b; s++ {
			prices[s] = price
		}
		p.done("from", "to", "price")
	}
	return l.exportPrices(t, prices, ck)
}

// exportPrices reads what feeding power back earns: export_per_slot, or
// export_default for every slot. Without either, feed-in earns the price
// (the behaviour before export prices existed): it returns nil.
func (l *loader) exportPrices(t *node, prices []float64, ck clock) []float64 {
	H := len(prices)
	var out []float64
	if ps, ok := t.nums("export_per_slot"); ok {
		if t.has("export_default") {
			t.errorf("export_per_slot", "give either export_per_slot or export_default, not both")
		}
		if len(ps) != H {
			t.errorf("export_per_slot", "%d export prices for %d slots: give one per slot", len(ps), H)
			return nil
		}
		out = l.rotate(ps, ck, t, "export_per_slot")
	}
	if d, ok := t.num("export_default"); ok {
		out = make([]float64, H)
		for i := range out {
			out[i] = d
		}
	}
	for i, p := range out {
		if p > prices[i] {
			key := "export_default"
			if t.has("export_per_slot") {
				key = index(t.key("export_per_slot"), i)
				t.src.errorf(key, "export price %g above the slot's price %g: a home would earn by drawing and feeding back at once", p, prices[i])
			} else {
				t.errorf(key, "export price %g above slot %d's price %g: a home would earn by drawing and feeding back at once", p, i, prices[i])
			}
			return out
		}
	}
	return out
}

// nbKeys are the neighbourhood-file keys that model errors point at.
type nbKeys struct {
	windows []string
}

// coordination reads [coordination]: windows or every, and levels.
func (l *loader) coordination(root *node, n *devices.Neighbourhood, ck clock) nbKeys {
	H := n.Horizon.Slots
	n.Levels = DefaultLevels
	var keys nbKeys
	t, ok := root.table("coordination")
	if !ok {
		n.Windows = []devices.Window{{From: 0, To: H}}
		keys.windows = []string{"coordination"}
		return keys
	}
	if v, ok := t.integer("levels"); ok {
		switch {
		case v < 1:
			t.errorf("levels", "levels = %d: a home needs at least one level per window (1 commits it to its greatest draw; 3 to 6 let homes coordinate)", v)
		case v > 64:
			t.errorf("levels", "levels = %d: more than 64 levels make the tables between homes too large", v)
		default:
			n.Levels = int(v)
		}
	}
	switch {
	case t.has("windows") && t.has("every"):
		t.errorf("windows", "give either windows or every, not both")
	case t.has("windows") && ck.rolling:
		l.rollingWindows(t, n, ck, &keys)
	case t.has("windows"):
		ws, _ := t.list("windows")
		for i, w := range ws {
			k := index(t.key("windows"), i)
			pair, ok := w.([]any)
			if !ok || len(pair) != 2 {
				t.src.errorf(k, "a window is a pair [from, to] of times (\"HH:MM\" or slot numbers)")
				continue
			}
			var b [2]int
			good := true
			for j, v := range pair {
				var err error
				switch x := v.(type) {
				case string:
					b[j], err = ck.boundary(x)
				case int64:
					b[j], err = ck.boundary(fmt.Sprint(x))
				default:
					err = fmt.Errorf("want a time, got %s", typeName(v))
				}
				if err != nil {
					t.src.errorf(k, "%v", err)
					good = false
				}
			}
			if !good {
				continue
			}
			if b[1] <= b[0] {
				t.src.errorf(k, "the window is empty or runs past the end of the horizon; write [from, to] with from before to")
				continue
			}
			n.Windows = append(n.Windows, devices.Window{From: b[0], To: b[1]})
			keys.windows = append(keys.windows, k)
		}
	case t.has("every"):
		s, _ := t.str("every")
		m, err := minutes(s)
		if err == nil && ck.bounds != nil {
			if err = everyUneven(n, ck, m); err != nil {
				t.errorf("every", "%v", err)
			}
			for range n.Windows {
				keys.windows = append(keys.windows, t.key("every"))
			}
			break
		}
		if err == nil && m%n.Horizon.SlotMinutes != 0 {
			err = fmt.Errorf("%s is not a whole number of %d-minute slots", s, n.Horizon.SlotMinutes)
		}
		if err != nil {
			t.errorf("every", "%v", err)
			break
		}
		step := m / n.Horizon.SlotMinutes
		for a := 0; a < H; a += step {
			n.Windows = append(n.Windows, devices.Window{From: a, To: min(a+step, H)})
			keys.windows = append(keys.windows, t.key("every"))
		}
	default:
		n.Windows = []devices.Window{{From: 0, To: H}}
		keys.windows = []string{t.path}
	}
	t.done("windows", "every", "levels")
	return keys
}

// everyUneven cuts a horizon of uneven slots into windows of m minutes
// each (the last may be shorter); every cut must fall on a slot boundary.
func everyUneven(n *devices.Neighbourhood, ck clock, m int) error {
	from := 0
	for cut := m; from < ck.slots; cut += m {
		b, ok := slices.BinarySearch(ck.bounds, cut)
		if b > ck.slots {
			b, ok = ck.slots, true
		}
		if !ok {
			n.Windows = nil
			return fmt.Errorf("every %d minutes cuts a slot: %s falls inside the slot %s–%s", m, fmtClock(ck.start+cut), fmtClock(ck.start+ck.bounds[b-1]), fmtClock(ck.start+ck.bounds[b]))
		}
		n.Windows = append(n.Windows, devices.Window{From: from, To: b})
		from = b
	}
	return nil
}

// objective reads [objective].
func (l *loader) objective(root *node, n *devices.Neighbourhood) {
	n.Weights = devices.Weights{Price: 1, Peak: DefaultPeakWeight, Miss: devices.DefaultMissPenalty}
	t, ok := root.table("objective")
	if !ok {
		return
	}
	if v, ok := t.num("miss"); ok {
		if v <= 0 || v > 1e12 {
			t.errorf("miss", "miss = %v: the penalty per missing unit of a soft goal must be positive (default %v); make the goal hard = true to refuse plans that miss it", v, devices.DefaultMissPenalty)
		} else {
			n.Weights.Miss = v
		}
	}
	for _, k := range []string{"price", "peak"} {
		v, ok := t.num(k)
		if !ok {
			continue
		}
		if v < 0 || v > 1e12 {
			t.errorf(k, "weight %v: use a non-negative number (0 switches the term off)", v)
			continue
		}
		if k == "price" {
			n.Weights.Price = v
		} else {
			n.Weights.Peak = v
		}
	}
	t.done("price", "peak", "miss")
}

// feeder reads [feeder].
func (l *loader) feeder(root *node, n *devices.Neighbourhood) {
	t, ok := root.table("feeder")
	if !ok {
		return
	}
	if v, ok := t.num("limit_kw"); ok {
		if v <= 0 || v > 1e9 {
			t.errorf("limit_kw", "limit %v kW: give a positive limit, or leave [feeder] out for none", v)
		} else {
			n.FeederLimit = v
		}
	}
	n.FeederSoft = true
	if v, ok := t.boolean("hard"); ok {
		n.FeederSoft = !v
		if !t.has("limit_kw") {
			t.errorf("hard", "hard applies to limit_kw; give the limit too")
		}
	}
	t.done("limit_kw", "hard")
}

// solver reads [solver].
func (l *loader) solver(root *node) Solver {
	s := Solver{Global: GlobalSolvers[0], Local: LocalSolvers[0], Table: Tables[0], GPU: GPUModes[0], Seed: DefaultSeed, Params: map[string]float64{}}
	t, ok := root.table("solver")
	if !ok {
		return s
	}
	s.Global = oneOf(t, "global", GlobalSolvers, s.Global)
	s.Local = oneOf(t, "local", LocalSolvers, s.Local)
	s.Table = oneOf(t, "table", Tables, s.Table)
	s.GPU = oneOf(t, "gpu", GPUModes, s.GPU)
	if v, ok := t.integer("seed"); ok {
		if v < 0 {
			t.errorf("seed", "the seed must be a non-negative integer")
		} else {
			s.Seed = uint64(v)
		}
	}
	if v, ok := t.str("timeout"); ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			t.errorf("timeout", "%q is not a duration such as \"30s\" or \"5m\"", v)
		} else {
			s.Timeout = d
		}
	}
	if v, ok := t.integer("improve"); ok {
		if v < -1 || v > 1000 {
			t.errorf("improve", "improve = %d: want the escapes of the improvement phase on the load that flows (1 to 1000), 0 for its descent alone (the default) or -1 for none", v)
		} else {
			s.Improve = int(v)
		}
	}
	if names, ps := t.numbers("params"); ps != nil {
		for _, k := range names {
			if math.IsNaN(ps[k]) || math.IsInf(ps[k], 0) {
				continue
			}
			s.Params[k] = ps[k]
		}
	}
	t.done("global", "local", "table", "gpu", "seed", "timeout", "params", "improve")
	return s
}

// broker reads [broker].
func (l *loader) broker(root *node) Broker {
	b := Broker{TopicPrefix: DefaultTopicPrefix}
	t, ok := root.table("broker")
	if !ok {
		return b
	}
	b.URL, _ = t.str("url")
	b.Username, _ = t.str("username")
	b.Password, _ = t.str("password")
	if p, ok := t.str("topic_prefix"); ok {
		if p == "" || strings.ContainsAny(p, "#+") || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
			t.errorf("topic_prefix", "%q: use a non-empty topic without wildcards (# +) or leading/trailing '/'", p)
		} else {
			b.TopicPrefix = p
		}
	}
	tls := false
	if b.URL != "" {
		u, err := url.Parse(b.URL)
		switch {
		case err != nil || u.Host == "":
			t.errorf("url", "%q is not a broker URL such as tcp://broker.local:1883 or ssl://broker.local:8883 (leave it empty for the embedded broker)", b.URL)
		case u.Scheme == "ssl" || u.Scheme == "tls" || u.Scheme == "mqtts" || u.Scheme == "wss":
			tls = true
		case u.Scheme == "tcp" || u.Scheme == "mqtt" || u.Scheme == "ws":
		default:
			t.errorf("url", "scheme %q: use tcp://, mqtt://, ssl://, tls://, mqtts://, ws:// or wss://", u.Scheme)
		}
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"ca_file", &b.CAFile}, {"cert_file", &b.CertFile}, {"key_file", &b.KeyFile}} {
		v, ok := t.str(f.key)
		if !ok || v == "" {
			continue
		}
		*f.dst = l.file(v)
		if !tls {
			t.errorf(f.key, "TLS files need a TLS broker URL (ssl://, tls://, mqtts:// or wss://)")
		}
		if l.read != nil {
			if _, err := l.read(*f.dst); err != nil {
				t.errorf(f.key, "cannot read %s: %v", *f.dst, err)
			}
		}
	}
	if (b.CertFile == "") != (b.KeyFile == "") {
		t.errorf("cert_file", "a client certificate needs both cert_file and key_file")
	}
	if b.URL == "" && (b.Username != "" || b.Password != "") {
		t.errorf("username", "credentials need a broker url; the embedded broker listens on loopback without them")
	}
	t.done("url", "username", "password", "ca_file", "cert_file", "key_file", "topic_prefix")
	return b
}

// neighbours reads the optional neighbour pairs.
func (l *loader) neighbours(root *node, n *devices.Neighbourhood, srcs []*homeSrc) {
	list, ok := root.list("neighbours")
	if !ok {
		return
	}
	idx := map[string]int{}
	for i := range n.Homes {
		idx[n.Homes[i].Name] = i
	}
	seen := map[[2]int]bool{}
	n.Links = [][2]int{}
	for i, v := range list {
		k := index("neighbours", i)
		pair, ok := v.([]any)
		if !ok || len(pair) != 2 {
			root.src.errorf(k, "a neighbour link is a pair of home names, e.g. [\"alder\", \"birch\"]")
			continue
		}
		var ends [2]int
		good := true
		for j, x := range pair {
			s, _ := x.(string)
			h, found := idx[s]
			if !found {
				names := make([]string, 0, len(idx))
				for name := range idx {
					names = append(names, name)
				}
				msg := fmt.Sprintf("%q is not a home of the neighbourhood", fmt.Sprint(x))
				if c := closest(s, names); c != "" {
					msg += fmt.Sprintf("; did you mean %q?", c)
				}
				root.src.errorf(k, "%s", msg)
				good = false
			}
			ends[j] = h
		}
		if !good {
			continue
		}
		a, b := min(ends[0], ends[1]), max(ends[0], ends[1])
		switch {
		case a == b:
			root.src.errorf(k, "a home cannot be its own neighbour")
		case seen[[2]int{a, b}]:
			root.src.errorf(k, "the link is listed twice")
		default:
			seen[[2]int{a, b}] = true
			n.Links = append(n.Links, [2]int{a, b})
		}
	}
}

// keys reads [keys] (a public key per home: every home's, or none) and
// [controllers] (a public key per controller), as `hearth keygen` prints
// them: name = "ed25519:…".
func (l *loader) keys(root *node, n *devices.Neighbourhood) Keys {
	read := func(table string) map[string]ed25519.PublicKey {
		t, ok := root.table(table)
		if !ok {
			return nil
		}
		out := map[string]ed25519.PublicKey{}
		for _, name := range slices.Sorted(maps.Keys(t.m)) {
			s, ok := t.str(name)
			if !ok {
				continue
			}
			pub, err := sign.ParsePublic(s)
			if err != nil {
				t.errorf(name, "%v", err)
				continue
			}
			out[name] = pub
		}
		return out
	}
	k := Keys{Homes: read("keys"), Controllers: read("controllers")}
	homes := map[string]bool{}
	var missing []string
	for _, h := range n.Homes {
		homes[h.Name] = true
		if _, ok := k.Homes[h.Name]; !ok {
			missing = append(missing, h.Name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(k.Homes)) {
		if !homes[name] {
			root.errorf(join("keys", name), "no home %q in the neighbourhood (a controller's key goes in [controllers])", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(k.Controllers)) {
		if homes[name] {
			root.errorf(join("controllers", name), "%q is a home: a controller needs a name of its own", name)
		}
	}
	if k.Any() && len(missing) > 0 {
		root.errorf("keys", "no key for home(s) %s: with keys, every home signs its messages (hearth keygen --home NAME prints the line to add)", strings.Join(missing, ", "))
	}
	return k
}

// rollingPeriod applies a price period on a rolling horizon: every slot
// whose start lies in [from, to) on the clock (wrapping past midnight)
// takes the price, whichever day it falls on.
func (l *loader) rollingPeriod(p *node, prices []float64, ck clock, from, to string, price float64) {
	a, err := parseClock(from)
	if err != nil {
		p.errorf("from", "%v", err)
		return
	}
	b, err := parseClock(to)
	if err != nil {
		p.errorf("to", "%v", err)
		return
	}
	a, b = a%1440, b%1440
	for s := range prices {
		m := (ck.start + ck.slotStart(s)) % 1440
		if a < b && m >= a && m < b || a > b && (m >= a || m < b) || a == b {
			prices[s] = price
		}
	}
	p.done("from", "to", "price")
}

// rollingWindows reads coordination windows on a rolling horizon: each
// [from, to] is a daily span of clock times (wrapping past midnight), and
// the horizon's windows are the runs of consecutive slots whose starts
// fall in the same span; slots in no span belong to no window.
func (l *loader) rollingWindows(t *node, n *devices.Neighbourhood, ck clock, keys *nbKeys) {
	ws, _ := t.list("windows")
	type span struct {
		a, b int
		key  string
	}
	var spans []span
	for i, w := range ws {
		k := index(t.key("windows"), i)
		pair, ok := w.([]any)
		if !ok || len(pair) != 2 {
			t.src.errorf(k, "a window is a pair [from, to] of clock times \"HH:MM\" (a rolling horizon has no fixed slot numbers)")
			continue
		}
		var m [2]int
		good := true
		for j, v := range pair {
			s, isStr := v.(string)
			c, err := parseClock(s)
			if !isStr || err != nil || (c-ck.start)%ck.slot != 0 {
				t.src.errorf(k, "want clock times on the %d-minute slot grid (\"HH:MM\"), got %v", ck.slot, v)
				good = false
				break
			}
			m[j] = c % 1440
		}
		if good {
			spans = append(spans, span{m[0], m[1], k})
		}
	}
	in := func(s span, c int) bool {
		return s.a < s.b && c >= s.a && c < s.b || s.a > s.b && (c >= s.a || c < s.b) || s.a == s.b
	}
	cur, from := -1, 0
	for slot := 0; slot <= n.Horizon.Slots; slot++ {
		w := -1
		if slot < n.Horizon.Slots {
			c := (ck.start + ck.slotStart(slot)) % 1440
			for i, s := range spans {
				if in(s, c) {
					w = i
					break
				}
			}
		}
		if w == cur && slot < n.Horizon.Slots {
			continue
		}
		if cur >= 0 {
			n.Windows = append(n.Windows, devices.Window{From: from, To: slot})
			keys.windows = append(keys.windows, spans[cur].key)
		}
		cur, from = w, slot
	}
}
