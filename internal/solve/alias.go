package solve

import "github.com/hearth-dcop/hearth/internal/solvefile"

// Local is the choice and tuning of the local solver. It lives in
// internal/solvefile, which hearth-solve links without this package's
// protocols, homes, bench and MQTT code.
type Local = solvefile.Local

// LocalAuto is --local auto (solvefile.LocalAuto).
const LocalAuto = solvefile.LocalAuto

// LocalNames lists every --local solver (solvefile.LocalNames).
var LocalNames = solvefile.LocalNames
