// Package homesim is a virtual home: it simulates a home's devices from
// the same description `hearth run` plans from (a devices.Home loaded by
// package config), executes the commands a controller publishes on
// <prefix>/home/<home>/command/<device>, publishes what the devices hold
// on <prefix>/home/<home>/state/<device>, and records what actually
// happened slot by slot: each device's energy, the properties it moved,
// the home's import and export, the bill at the file's prices, the peak
// and the goals met or missed.
//
// It exists so that the live loop (state in, a rolling plan, commands
// out) can be run and checked end to end without a real home: `hearth
// home-sim` runs one home or a whole street on an accelerated clock, and
// the integration tests run it against `hearth run` processes over a
// broker.
//
// # Physics
//
// Time advances in steps (a simulated minute by default) inside the
// slots of the home's horizon. In each step every device runs the action
// of the command valid at that instant (slot_start ≤ t < slot_end and
// t < expires, the latest created first); without one it runs its idle
// action (the action whose power is closest to zero).
//
// On a horizon of uneven slots ([horizon] segments) the day is the
// file's slots laid once from its start, each recorded at its own
// length, and an action's effects in a slot are those of the slot's
// length (devices.Action.EffectIn: the planner's figures, rounded for
// that length), so that a home played a plan ends each slot where the
// plan says. Commands hold for the span they name, whatever the day's
// slots: `hearth run` re-lays the segments from the clock every round
// and commands slot 0's span.
//
//   - A storage device (a catalogue EV or home battery, the kinds that
//     take size parameters: one property of its own that every action
//     moves in proportion to its power) takes the
//     command's power_kw as a continuous set point, clamped to its
//     greatest charging and discharging power, stores η_c of what it
//     draws and gives back η_d of what it takes out, both read off its
//     actions (the catalogue's 89 % for wallboxes, 95 % each way for the
//     battery), and stops at its physical bounds: a full battery charges
//     only what fits in the step, an empty one gives nothing.
//   - Any other device runs the named action for the part of the step its
//     effects keep every property inside its physical bounds (a
//     dishwasher whose programme is done stops; a water heater at its
//     maximum stops heating), and its idle action for the rest.
//   - A car leaves and returns (Trip): unplugged, it refuses to charge;
//     when it returns it holds the charge it comes home with. By default
//     (DefaultTrips) an EV with a plugged-in window in its file leaves at
//     the window's departure and returns at its arrival.
//   - Properties drift as the file says, whatever the devices do.
//   - The base load is the file's background (gross of PV) times
//     1 + σ·z, z a standard normal drawn once per slot from the seed; PV
//     is the file's profile.
//
// A command that is physically impossible (an unknown action, charging an
// unplugged car, more power than the device has, a bound) is clamped to
// what the device can do and logged once per device, slot and reason;
// the trace counts them.
//
// # The meter
//
// The meter nets import and export over a slot, as the planner's bill
// does: a slot's bill is price·import or export_price·export of the
// slot's net energy. The peak is the greatest slot average of the net
// draw.
//
// Physical bounds are the catalogue's (the passive rules that config adds
// as "(bound of KIND)"), so that a user's comfort bound (`living
// temperature leq 22`) is a goal the report checks, not physics the
// simulator enforces.
package homesim
