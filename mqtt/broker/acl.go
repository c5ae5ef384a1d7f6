package broker

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"strings"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// aclHook authenticates users and lets each act only as its home H (P is
// the prefix, D the Home Assistant discovery prefix):
//
//   - connect: the password matches, the client id is topic.ClientID(P, H)
//     (another id would let a home take over someone else's persistent
//     session, and with it that session's subscriptions), and a last will,
//     if any, goes to H's presence topic;
//   - protocol runs: publish P/<run>/inbox/<to>/H, P/<run>/multicast/H,
//     P/<run>/status/H and P/presence/H; subscribe to and receive its own
//     inbox P/<run>/inbox/H/<from>, every multicast and every status of a
//     run, and every presence;
//   - `hearth run`: read the round commands P/cmd and P/cmd/<home>, ask for
//     a round on P/cmd/H; publish its results P/<round>/result/H and read
//     everyone's; publish its plans under P/home/H/… and read everyone's
//     (P/home/+/#); publish its Home Assistant discovery configs under
//     D/sensor/H/…, D/number/H/… and D/select/H/…;
//   - a live home: a second connection with the client id
//     topic.ClientID(P, H)+LiveSuffix, whose last will goes to
//     P/home/H/availability; read the tariff P/prices/+;
//   - a controller (User.Controller) may besides publish round commands
//     on P/cmd;
//   - '#' never, except at the end of a P/home/… filter.
//
// Run and round levels may be '+' in a subscription but never one of the
// names topic.CheckRun reserves; every other level of a filter is either
// '+' where the rule lets the user read anyone's or a valid name.
type aclHook struct {
	mochi.HookBase
	prefix    string
	discovery string
	users     map[string]user
}

type user struct {
	hash       [32]byte // SHA-256 of the password, compared in constant time
	home       string
	clientID   string
	controller bool
}

func newACLHook(prefix, discovery string, users []User) (*aclHook, error) {
	h := &aclHook{prefix: prefix, discovery: discovery, users: map[string]user{}}
	for _, u := range users {
		home := u.Home
		if home == "" {
			home = u.Name
		}
		if err := topic.CheckAgent(home); err != nil {
			return nil, fmt.Errorf("user %q: home: %w", u.Name, err)
		}
		if _, dup := h.users[u.Name]; dup || u.Name == "" {
			return nil, fmt.Errorf("user %q: empty or listed twice", u.Name)
		}
		h.users[u.Name] = user{hash: sha256.Sum256([]byte(u.Password)), home: home,
			clientID: topic.ClientID(prefix, home), controller: u.Controller}
	}
	return h, nil
}

func (h *aclHook) ID() string { return "hearth-acl" }

func (h *aclHook) Provides(b byte) bool {
	return bytes.Contains([]byte{mochi.OnConnectAuthenticate, mochi.OnACLCheck}, []byte{b})
}

func (h *aclHook) OnConnectAuthenticate(cl *mochi.Client, pk packets.Packet) bool {
	name := string(pk.Connect.Username)
	u, ok := h.users[name]
	hash := sha256.Sum256(pk.Connect.Password)
	// Compare even for unknown users, so that timing does not tell
	// which user names exist.
	match := subtle.ConstantTimeCompare(hash[:], u.hash[:]) == 1
	switch {
	case !ok || !match || !pk.Connect.PasswordFlag:
		h.Log.Warn("MQTT authentication failed", "user", name, "remote", cl.Net.Remote)
		return false
	case cl.ID != u.clientID && cl.ID != u.clientID+LiveSuffix:
		h.Log.Warn("MQTT client id refused", "user", name, "client", cl.ID, "want", u.clientID)
		return false
	case pk.Connect.WillFlag && pk.Connect.WillTopic != h.willTopic(u, cl.ID):
		h.Log.Warn("MQTT last will refused", "user", name, "topic", pk.Connect.WillTopic)
		return false
	}
	return true
}

// LiveSuffix ends the client id of a live home's second connection
// (internal/live), which stays up while rounds take the home's own id
// down and up again; its last will says offline on P/home/H/availability.
const LiveSuffix = "-live"

// willTopic is the one topic client id's last will may name.
func (h *aclHook) willTopic(u user, id string) string {
	if id == u.clientID+LiveSuffix {
		return h.prefix + "/" + topic.Home + "/" + u.home + "/availability"
	}
	return topic.PresenceTopic(h.prefix, u.home)
}

func (h *aclHook) OnACLCheck(cl *mochi.Client, t string, write bool) bool {
	u, ok := h.users[string(cl.Properties.Username)]
	allowed := ok && h.allowed(u, t, write)
	if !allowed {
		h.Log.Warn("MQTT access denied", "user", string(cl.Properties.Username), "client", cl.ID, "topic", t, "write", write)
	}
	return allowed
}

// allowed applies the rules to a topic (write) or a filter or topic
// (read) for user u.
func (h *aclHook) allowed(u user, t string, write bool) bool {
	if rest, ok := strings.CutPrefix(t, h.discovery+"/"); ok && h.discoveryAllowed(u, rest, write) {
		return true
	}
	rest, ok := strings.CutPrefix(t, h.prefix+"/")
	if !ok {
		return false
	}
	lv := strings.Split(rest, "/")
	// is reports whether level i is the literal want, or, where any is
	// true, '+' (read only) or any valid name.
	is := func(i int, want string, any bool) bool {
		l := lv[i]
		switch {
		case l == "+":
			return any && !write
		case topic.CheckName(l) != nil:
			return false
		}
		return any || l == want
	}
	// run is is for a run or round level: never a reserved name.
	run := func(i int) bool { return is(i, "", true) && (lv[i] == "+" || topic.CheckRun(lv[i]) == nil) }
	switch {
	case len(lv) == 2 && lv[0] == topic.Presence:
		return is(1, u.home, !write)
	case len(lv) == 1 && lv[0] == topic.Cmd:
		return !write || u.controller
	case len(lv) == 2 && lv[0] == topic.Cmd:
		return is(1, u.home, !write)
	case len(lv) >= 1 && lv[0] == topic.Home:
		return h.homeAllowed(u, lv[1:], write)
	case len(lv) == 2 && lv[0] == "prices":
		// The street's published tariff, which live homes read.
		return !write && (lv[1] == "+" || topic.CheckName(lv[1]) == nil)
	case len(lv) == 3 && lv[1] == topic.Status:
		return run(0) && is(2, u.home, !write)
	case len(lv) == 3 && lv[1] == topic.Multicast:
		return run(0) && is(2, u.home, !write)
	case len(lv) == 3 && lv[1] == topic.Result:
		return run(0) && is(2, u.home, !write)
	case len(lv) == 4 && lv[1] == topic.Inbox:
		if write {
			return run(0) && is(2, "", true) && is(3, u.home, false)
		}
		return run(0) && is(2, u.home, false) && is(3, "", true)
	}
	return false
}

// homeAllowed applies the rule of P/home/<home>/…, lv being the levels
// after "home": u publishes under its own home (P/home/H itself
// included, as Mosquitto's P/home/%u/# allows), and reads anyone's, with
// '+' for any level and '#' as the last.
func (h *aclHook) homeAllowed(u user, lv []string, write bool) bool {
	if len(lv) == 0 {
		return false
	}
	for i, l := range lv {
		switch {
		case write && topic.CheckName(l) == nil:
		case !write && l == "#" && i == len(lv)-1:
		case !write && (l == "+" || topic.CheckName(l) == nil):
		default:
			return false
		}
	}
	return !write || lv[0] == u.home
}

// discoveryAllowed applies the rule of D/sensor/<home>/…, lv being the
// levels after D: u publishes its own discovery configs (Home Assistant's
// node_id form, D/sensor/H/<object>/config), and reads nothing: Home
// Assistant's own user is the broker administrator's business.
func (h *aclHook) discoveryAllowed(u user, rest string, write bool) bool {
	lv := strings.Split(rest, "/")
	// Sensors of plans; numbers and selects of a live home's targets.
	component := lv[0] == topic.Sensor || lv[0] == "number" || lv[0] == "select"
	if !write || len(lv) < 2 || !component || lv[1] != u.home {
		return false
	}
	for _, l := range lv[2:] {
		if topic.CheckName(l) != nil {
			return false
		}
	}
	return true
}
