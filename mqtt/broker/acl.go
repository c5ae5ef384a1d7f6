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

// aclHook authenticates users and lets each act only as its home H:
//
//   - connect: the password matches, the client id is topic.ClientID(prefix,
//     H) (another id would let a home take over someone else's persistent
//     session, and with it that session's subscriptions), and a last will,
//     if any, goes to H's presence topic;
//   - publish: <prefix>/<run>/inbox/<to>/H, <prefix>/<run>/status/H and
//     <prefix>/presence/H only;
//   - subscribe and receive: its own inbox <prefix>/<run>/inbox/H/<from>,
//     every status of a run and every presence; '#' never.
//
// The run level may be '+' in a subscription; every other level of a
// filter is either '+' where the rule allows anyone or a valid name.
type aclHook struct {
	mochi.HookBase
	prefix string
	users  map[string]user
}

type user struct {
	hash     [32]byte // SHA-256 of the password, compared in constant time
	home     string
	clientID string
}

func newACLHook(prefix string, users []User) (*aclHook, error) {
	h := &aclHook{prefix: prefix, users: map[string]user{}}
	for _, u := range users {
		home := u.Home
		if home == "" {
			home = u.Name
		}
		if err := topic.CheckName(home); err != nil {
			return nil, fmt.Errorf("user %q: home: %w", u.Name, err)
		}
		if _, dup := h.users[u.Name]; dup || u.Name == "" {
			return nil, fmt.Errorf("user %q: empty or listed twice", u.Name)
		}
		h.users[u.Name] = user{hash: sha256.Sum256([]byte(u.Password)), home: home, clientID: topic.ClientID(prefix, home)}
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
	case cl.ID != u.clientID:
		h.Log.Warn("MQTT client id refused", "user", name, "client", cl.ID, "want", u.clientID)
		return false
	case pk.Connect.WillFlag && pk.Connect.WillTopic != topic.PresenceTopic(h.prefix, u.home):
		h.Log.Warn("MQTT last will refused", "user", name, "topic", pk.Connect.WillTopic)
		return false
	}
	return true
}

func (h *aclHook) OnACLCheck(cl *mochi.Client, t string, write bool) bool {
	u, ok := h.users[string(cl.Properties.Username)]
	allowed := ok && h.allowed(u.home, t, write)
	if !allowed {
		h.Log.Warn("MQTT access denied", "user", string(cl.Properties.Username), "client", cl.ID, "topic", t, "write", write)
	}
	return allowed
}

// allowed applies the rules to a topic (write) or a filter or topic
// (read) for home.
func (h *aclHook) allowed(home, t string, write bool) bool {
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
	switch {
	case len(lv) == 2 && lv[0] == topic.Presence:
		return is(1, home, !write)
	case len(lv) == 3 && lv[1] == topic.Status:
		return is(0, "", true) && is(2, home, !write)
	case len(lv) == 4 && lv[1] == topic.Inbox:
		if write {
			return is(0, "", true) && is(2, "", true) && is(3, home, false)
		}
		return is(0, "", true) && is(2, home, false) && is(3, "", true)
	}
	return false
}
