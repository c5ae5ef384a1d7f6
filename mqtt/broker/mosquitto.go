package broker

import (
	"fmt"
	"strings"

	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// MosquittoACL returns a Mosquitto acl_file that enforces, for topics
// under prefix and Home Assistant's default discovery prefix, the same
// per-home rules as the embedded broker, for users named after their
// homes; controllers are the users that may also publish round commands.
// See ACLOptions.MosquittoACL.
func MosquittoACL(prefix string, controllers ...string) string {
	return ACLOptions{Prefix: prefix, Controllers: controllers}.MosquittoACL()
}

// ACLOptions describe a Mosquitto acl_file for hearth.
type ACLOptions struct {
	// Prefix is hearth's topic prefix; empty means DefaultPrefix.
	Prefix string
	// Discovery is Home Assistant's discovery prefix; empty means
	// topic.DefaultDiscovery.
	Discovery string
	// Controllers are the users (not homes) that publish round commands
	// on <prefix>/cmd.
	Controllers []string
}

// MosquittoACL returns the acl_file (%u is the username, which must be the
// home's name):
//
//	pattern write P/+/inbox/+/%u       protocol runs
//	pattern read  P/+/inbox/%u/+
//	pattern write P/+/multicast/%u
//	pattern read  P/+/multicast/+
//	pattern write P/+/status/%u
//	pattern read  P/+/status/+
//	pattern write P/presence/%u
//	pattern read  P/presence/+
//	pattern read  P/cmd                `hearth run`: round commands
//	pattern read  P/cmd/+
//	pattern write P/cmd/%u
//	pattern write P/+/result/%u        round results
//	pattern read  P/+/result/+
//	pattern write P/home/%u/#          published plans
//	pattern read  P/home/+/#
//	pattern read  P/prices/+           the tariff live homes read
//	pattern write D/sensor/%u/#        Home Assistant discovery (and D/number, D/select)
//	user ctl                           for each controller
//	topic write P/cmd
//
// Patterns apply to every user, controllers included; `topic` lines after
// `user` only to that user. Pair it with `allow_anonymous false`, a
// password_file, and `use_username_as_clientid true`, which stops one home
// from taking over another's persistent session by borrowing its client
// id (the embedded broker requires the client id topic.ClientID(prefix,
// home) instead). mqtt/README.md shows a complete configuration.
//
// Mosquitto cannot exclude names from a '+': the run level of the
// patterns also matches cmd, home and presence, and the home level of the
// P/home pattern inbox, status and result. topic.CheckRun and
// topic.CheckAgent refuse those as run ids and home names, so no home can
// use the overlap.
func (o ACLOptions) MosquittoACL() string {
	p, d := o.Prefix, o.Discovery
	if p == "" {
		p = DefaultPrefix
	}
	if d == "" {
		d = topic.DefaultDiscovery
	}
	var b strings.Builder
	b.WriteString("# hearth: every home (username) may publish only as itself and read\n")
	b.WriteString("# only its own inbox; multicasts, statuses and presence are public to the users.\n")
	lines := []string{
		"pattern write P/+/inbox/+/%u",
		"pattern read P/+/inbox/%u/+",
		"pattern write P/+/multicast/%u",
		"pattern read P/+/multicast/+",
		"pattern write P/+/status/%u",
		"pattern read P/+/status/+",
		"pattern write P/presence/%u",
		"pattern read P/presence/+",
		"# hearth run: round commands, results and published plans.",
		"pattern read P/cmd",
		"pattern read P/cmd/+",
		"pattern write P/cmd/%u",
		"pattern write P/+/result/%u",
		"pattern read P/+/result/+",
		"pattern write P/home/%u/#",
		"pattern read P/home/+/#",
		"pattern read P/prices/+",
		"# Home Assistant discovery, node_id = the home.",
		"pattern write D/sensor/%u/#",
		"pattern write D/number/%u/#",
		"pattern write D/select/%u/#",
	}
	for _, l := range lines {
		l = strings.Replace(l, "P/", p+"/", 1)
		l = strings.Replace(l, "D/", d+"/", 1)
		b.WriteString(l)
		b.WriteByte('\n')
	}
	for _, c := range o.Controllers {
		fmt.Fprintf(&b, "# controller: starts rounds\nuser %s\ntopic write %s\n", c, topic.CmdTopic(p))
	}
	return b.String()
}
