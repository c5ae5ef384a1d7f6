package baseline

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/internal/cputime"
)

// TestProfileSHDS runs the SH-MGM-style baseline and the improvement
// phase from the homes' own schedules on the SHDS instance named by
// HEARTH_SHDS_PROFILE (e.g. dm_251_1_4, from ../shared/data/shds) and
// logs each one's CPU time, rounds and objective: with `go test
// -cpuprofile` it is the profile of the 251-home phases without the
// protocol's MQTT run before them. HEARTH_PROFILE_SKIP_SHMGM and
// HEARTH_PROFILE_SKIP_IMPROVE leave one out; HEARTH_PROFILE_EAGER runs
// SH-MGM's eager rounds; HEARTH_PROFILE_ROUNDS bounds its rounds (a
// shorter profile). Skipped without HEARTH_SHDS_PROFILE.
func TestProfileSHDS(t *testing.T) {
	name := os.Getenv("HEARTH_SHDS_PROFILE")
	if name == "" {
		t.Skip("HEARTH_SHDS_PROFILE not set")
	}
	ctx := context.Background()
	n := shdsFile(t, name)
	measure := func(what string, f func() string) {
		cpu, wall := cputime.Used(), time.Now()
		got := f()
		t.Logf("%s: %s; %.1f s CPU, %.1f s wall", what, got, (cputime.Used() - cpu).Seconds(), time.Since(wall).Seconds())
	}
	var u *Outcome
	measure("uncoordinated", func() string {
		var err error
		if u, err = Uncoordinated(ctx, n, Options{}); err != nil {
			t.Fatal(err)
		}
		return ""
	})
	if os.Getenv("HEARTH_PROFILE_SKIP_SHMGM") == "" {
		measure("SH-MGM-style", func() string {
			rounds, _ := strconv.Atoi(os.Getenv("HEARTH_PROFILE_ROUNDS"))
			s, err := SHMGM(ctx, n, Options{Rounds: rounds, eager: os.Getenv("HEARTH_PROFILE_EAGER") != ""})
			if err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("objective %.0f, rounds %d, moves %d, converged %v, solves %d, approximate %d", FlowObjective(n, s.Eval), s.Rounds, s.Moves, s.Converged, s.Solves, s.Approximate)
		})
	}
	if os.Getenv("HEARTH_PROFILE_SKIP_IMPROVE") == "" {
		measure("improve from uncoordinated", func() string {
			a, err := Improve(ctx, n, u.Schedule, ImproveOptions{Seed: 1, KickedHomes: -1, Options: Options{ExactEntries: 1 << 20}})
			if err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("objective %.0f → %.0f, rounds %d, moves %d, kicks %d (%d kept), responses %d (budgeted %v), approximate %d", a.Start, a.Flow, a.Rounds, a.Moves, a.Kicks, a.Accepted, a.Responses, a.Budgeted, a.Approximate)
		})
	}
}
