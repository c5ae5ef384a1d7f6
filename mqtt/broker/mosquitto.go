package broker

import "strings"

// MosquittoACL returns a Mosquitto acl_file that enforces, for topics
// under prefix, the same per-home rules as the embedded broker, for users
// named after their homes (%u is the username):
//
//	pattern write <prefix>/+/inbox/+/%u
//	pattern read  <prefix>/+/inbox/%u/+
//	pattern write <prefix>/+/status/%u
//	pattern read  <prefix>/+/status/+
//	pattern write <prefix>/presence/%u
//	pattern read  <prefix>/presence/+
//
// Pair it with `allow_anonymous false`, a password_file, and
// `use_username_as_clientid true`, which stops one home from taking over
// another's persistent session by borrowing its client id (the embedded
// broker requires the client id topic.ClientID(prefix, home) instead).
// mqtt/README.md shows a complete configuration.
func MosquittoACL(prefix string) string {
	var b strings.Builder
	b.WriteString("# hearth: every home (username) may publish only as itself and read\n")
	b.WriteString("# only its own inbox; statuses and presence are public to the users.\n")
	for _, l := range []string{
		"pattern write P/+/inbox/+/%u",
		"pattern read P/+/inbox/%u/+",
		"pattern write P/+/status/%u",
		"pattern read P/+/status/+",
		"pattern write P/presence/%u",
		"pattern read P/presence/+",
	} {
		b.WriteString(strings.Replace(l, "P/", prefix+"/", 1))
		b.WriteByte('\n')
	}
	return b.String()
}
