package homesim

import "time"

// Clock is a simulated clock running Speed times faster than the wall:
// it reads Start at the wall time Epoch. Processes that share Start,
// Epoch and Speed (`--now`, `--epoch`, `--speed`) share the simulated
// time to within their wall clocks' agreement.
type Clock struct {
	Start time.Time
	Epoch time.Time
	Speed float64
	// Wall reads the wall clock; nil means time.Now.
	Wall func() time.Time
}

func (c *Clock) wall() time.Time {
	if c.Wall != nil {
		return c.Wall()
	}
	return time.Now()
}

// Now returns the simulated time.
func (c *Clock) Now() time.Time {
	return c.Start.Add(time.Duration(float64(c.wall().Sub(c.Epoch)) * c.Speed))
}

// WallDuration converts a simulated duration to wall time.
func (c *Clock) WallDuration(d time.Duration) time.Duration {
	return time.Duration(float64(d) / c.Speed)
}

// Until returns the wall time until the clock reads t (negative when it
// has passed).
func (c *Clock) Until(t time.Time) time.Duration {
	return c.WallDuration(t.Sub(c.Now()))
}
