package config_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/config"
)

func TestRunAndPublish(t *testing.T) {
	tests := []struct {
		name    string
		extra   string
		home    string // "" means the good one
		run     config.Run
		publish config.Publish
		// Want an error at line:key holding msg.
		line     int
		key, msg string
	}{
		{name: "absent", publish: config.Publish{DiscoveryPrefix: "homeassistant"}},
		{
			name:    "times sorted",
			extra:   "[run]\nat = [\"16:30\", \"06:00\", \"24:00\"]\nevery = \"15m\"\n",
			run:     config.Run{At: []int{0, 6 * 60, 16*60 + 30}, Every: 15 * time.Minute},
			publish: config.Publish{DiscoveryPrefix: "homeassistant"},
		},
		{
			name:    "seconds",
			extra:   "[run]\nevery = \"2s\"\n",
			run:     config.Run{Every: 2 * time.Second},
			publish: config.Publish{DiscoveryPrefix: "homeassistant"},
		},
		{
			name:    "home assistant",
			extra:   "[publish]\nhome_assistant = true\ndiscovery_prefix = \"ha/discovery\"\n",
			publish: config.Publish{HomeAssistant: true, DiscoveryPrefix: "ha/discovery"},
		},
		{name: "bad time", extra: "[run]\nat = [\"16:30\",\n  \"4pm\"]\n", line: 7, key: "run.at[1]", msg: "not a clock time"},
		{name: "twice", extra: "[run]\nat = [\"16:30\", \"16:30\"]\n", line: 6, key: "run.at[1]", msg: "16:30 is listed twice"},
		{name: "not strings", extra: "[run]\nat = [1630]\n", line: 6, key: "run.at[0]", msg: "want a string"},
		{name: "every syntax", extra: "[run]\nevery = \"often\"\n", line: 6, key: "run.every", msg: "not a whole number of seconds"},
		{name: "every fraction", extra: "[run]\nevery = \"1.5s\"\n", line: 6, key: "run.every", msg: "not a whole number of seconds"},
		{name: "every too long", extra: "[run]\nevery = \"25h\"\n", line: 6, key: "run.every", msg: "between 1s and 24h"},
		{name: "every drifts", extra: "[run]\nevery = \"7m\"\n", line: 6, key: "run.every", msg: "does not divide a day"},
		{name: "run key", extra: "[run]\nevry = \"1h\"\n", line: 6, key: "run.evry", msg: `did you mean "every"`},
		{name: "bool", extra: "[publish]\nhome_assistant = \"yes\"\n", line: 6, key: "publish.home_assistant", msg: "want true or false"},
		{name: "prefix", extra: "[publish]\ndiscovery_prefix = \"ha/#\"\n", line: 6, key: "publish.discovery_prefix", msg: "without wildcards"},
		{name: "prefix slash", extra: "[publish]\ndiscovery_prefix = \"ha/\"\n", line: 6, key: "publish.discovery_prefix", msg: "empty levels"},
		{name: "prefix dollar", extra: "[publish]\ndiscovery_prefix = \"$ha\"\n", line: 6, key: "publish.discovery_prefix", msg: "'$'"},
		{name: "publish key", extra: "[publish]\nhome_asistant = true\n", line: 6, key: "publish.home_asistant", msg: `did you mean "home_assistant"`},
		{
			name: "dotted home", extra: "[publish]\nhome_assistant = true\n", home: strings.Replace(home, `"alder"`, `"alder.7"`, 1),
			line: 6, key: "publish.home_assistant", msg: `home "alder.7"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := files{"/x/alder.toml": home}
			if tc.home != "" {
				fsys["/x/alder.toml"] = tc.home
			}
			cfg, err := config.Parse("/x/n.toml", []byte(neighbourhood(tc.extra)), fsys.read)
			if tc.msg == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(cfg.Run.At, tc.run.At) || cfg.Run.Every != tc.run.Every || cfg.Publish != tc.publish {
					t.Errorf("run %+v publish %+v, want %+v %+v", cfg.Run, cfg.Publish, tc.run, tc.publish)
				}
				if cfg.Run.Scheduled() != (len(tc.run.At) > 0 || tc.run.Every > 0) {
					t.Errorf("Scheduled() = %v", cfg.Run.Scheduled())
				}
				return
			}
			var es config.Errors
			if !errors.As(err, &es) {
				t.Fatalf("error %v, want config.Errors", err)
			}
			for _, e := range es {
				if e.File == "/x/n.toml" && e.Line == tc.line && e.Key == tc.key && strings.Contains(e.Msg, tc.msg) {
					return
				}
			}
			t.Errorf("got\n%v\nwant /x/n.toml:%d: %s: …%s…", err, tc.line, tc.key, tc.msg)
		})
	}
}
