package report

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CSV table headers. A table with a row per slot ends with the slot's
// start as a clock time ("start", HH:MM, Homes.Slots) beside its number,
// so that slots of different lengths ([horizon] segments) read right.
var (
	ScheduleHeader = []string{"home", "device", "slot", "action", "kw", "start"}
	LoadHeader     = []string{"slot", "coordinated_kw", "uncoordinated_kw", "shmgm_kw", "start"}
	HomesHeader    = []string{"home", "energy_kwh", "energy_cost", "peak_kw", "rules_satisfied", "rules_total"}
	// EnergyHeader is NAME-energy.csv's, written where the street has
	// energy homes: a row per slot of the street's load ("street",
	// "load"), of each energy home's meter ("meter": import − export,
	// negative where it feeds back) and of each of its storages (kW at
	// the bus, negative discharging, and the energy at the slot's end).
	EnergyHeader = []string{"home", "series", "slot", "kw", "kwh", "start"}
)

// WriteCSV writes one file per table into dir, named after the
// neighbourhood: NAME-schedule.csv (a row per home, device and slot),
// NAME-load.csv (a row per slot; an empty cell where a baseline was not
// computed) and NAME-homes.csv (a row per home). A street's energy homes
// have rows in the schedule (a storage's action charge, discharge or
// idle and its signed kW) and in the homes table (goals as rules), and
// NAME-energy.csv has their meters, storages and the street's load
// (EnergyHeader). It returns the paths.
func (h *Homes) WriteCSV(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	base := filepath.Join(dir, FileBase(h.Neighbourhood))
	var sched, homes [][]string
	for _, p := range h.Schedules {
		for _, d := range p.Devices {
			for t, a := range d.Actions {
				sched = append(sched, []string{p.Home, d.Device, strconv.Itoa(t), a, num(d.KW[t]), h.slotStart(t)})
			}
		}
		homes = append(homes, []string{p.Home, num(p.EnergyKWh), num(p.EnergyCost), num(p.PeakKW), strconv.Itoa(p.RulesSatisfied), strconv.Itoa(p.RulesTotal)})
	}
	sched, homes = h.energyRows(sched, homes)
	var load [][]string
	cell := func(v []float64, t int) string {
		if t < len(v) {
			return num(v[t])
		}
		return ""
	}
	var unc, sh []float64
	if b := h.Baselines.Uncoordinated; b != nil {
		unc = b.LoadKW
	}
	if b := h.Baselines.SHMGM; b != nil {
		sh = b.LoadKW
	}
	for t := range h.Slots {
		load = append(load, []string{strconv.Itoa(t), cell(h.LoadKW, t), cell(unc, t), cell(sh, t), h.slotStart(t)})
	}
	files := []struct {
		name   string
		header []string
		rows   [][]string
	}{
		{base + "-schedule.csv", ScheduleHeader, sched},
		{base + "-load.csv", LoadHeader, load},
		{base + "-homes.csv", HomesHeader, homes},
	}
	if h.EnergyHomes != nil {
		files = append(files, struct {
			name   string
			header []string
			rows   [][]string
		}{base + "-energy.csv", EnergyHeader, h.energySeries()})
	}
	var out []string
	for _, f := range files {
		if err := writeCSV(f.name, f.header, f.rows); err != nil {
			return out, err
		}
		out = append(out, f.name)
	}
	return out, nil
}

func writeCSV(name string, header []string, rows [][]string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(header)
	w.WriteAll(rows) // flushes
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", name, err)
	}
	return f.Close()
}

// slotStart is slot t's start as a clock time (Slots; empty where the
// result has none).
func (h *Homes) slotStart(t int) string {
	if t < len(h.Slots) {
		return h.Slots[t]
	}
	return ""
}

// num formats a value with the shortest exact representation.
func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// FileBase turns a neighbourhood name into a file name stem: letters,
// digits, '-', '_' and '.', other characters replaced by '_'.
func FileBase(name string) string {
	if name == "" {
		return "homes"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
}
