package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Summarize writes, for each sweep of rows, one Markdown table per metric
// (algorithms × points, the median over seeds of the finished runs) and
// one per ratio; a cell whose runs all failed says how. Markdown, so that
// the same text reads in a terminal and pastes into docs/BENCHMARKS.md.
func Summarize(w io.Writer, e *Experiment, rows []Row) error {
	bw := &errWriter{w: w}
	if e.Source != "" {
		bw.printf("Reproduces: %s. Host: %s.\n\n", e.Source, strings.Join(hosts(rows), "; "))
	}
	for _, sweep := range sweepNames(rows) {
		sr := filter(rows, func(r Row) bool { return r.Sweep == sweep })
		labels := sortedLabels(sr)
		seeds := map[uint64]bool{}
		for _, r := range sr {
			seeds[r.Seed] = true
		}
		bw.printf("### %s: %s\n", e.Name, sweep)
		for _, m := range e.Metrics {
			bw.printf("\n%s, median of %d seeds\n\n", m.Title, len(seeds))
			header(bw, "algorithm", labels)
			for _, alg := range algorithmNames(sr) {
				cells := make([]string, len(labels))
				for j, l := range labels {
					cells[j] = cell(filter(sr, func(r Row) bool { return r.Algorithm == alg && r.XLabel == l }), m)
				}
				bw.printf("| %s | %s |\n", alg, strings.Join(cells, " | "))
			}
		}
		if len(e.Ratios) > 0 {
			bw.printf("\nspeed-ups, median over seeds of the per-instance ratio\n\n")
			header(bw, "ratio", labels)
			for _, q := range e.Ratios {
				cells := make([]string, len(labels))
				for j, l := range labels {
					cells[j] = ratioCell(filter(sr, func(r Row) bool { return r.XLabel == l }), q)
				}
				bw.printf("| %s (%s) | %s |\n", q.Name, q.Metric.Name, strings.Join(cells, " | "))
			}
		}
		bw.printf("\n")
	}
	return bw.err
}

func header(bw *errWriter, first string, labels []string) {
	bw.printf("| %s | %s |\n", first, strings.Join(labels, " | "))
	bw.printf("|---|%s\n", strings.Repeat("---:|", len(labels)))
}

// cell is the median of m over the finished runs, with the share of
// finished runs when some failed, or the most frequent failure.
func cell(rows []Row, m Metric) string {
	if len(rows) == 0 {
		return ""
	}
	var xs []float64
	fails := map[string]int{}
	for _, r := range rows {
		if r.Status == StatusOK {
			if x := m.Get(r); !math.IsNaN(x) {
				xs = append(xs, x)
			}
			continue
		}
		fails[r.Status]++
	}
	if len(xs) == 0 {
		return failureWord(fails)
	}
	s := formatNumber(median(xs), m)
	if len(xs) < len(rows) {
		s += fmt.Sprintf(" (%d/%d)", len(xs), len(rows))
	}
	return s
}

func failureWord(fails map[string]int) string {
	best, n := "", 0
	for _, st := range []string{StatusTimeout, StatusMemory, StatusSkipped, StatusInfeasible, StatusUnavailable, StatusError} {
		if fails[st] > n {
			best, n = st, fails[st]
		}
	}
	if best == StatusUnavailable {
		return "n/a"
	}
	return best
}

// ratioCell is the median over seeds of Num/Den on the same instance.
func ratioCell(rows []Row, q Ratio) string {
	num := map[uint64]float64{}
	for _, r := range rows {
		if r.Algorithm == q.Num && r.Status == StatusOK {
			num[r.Seed] = q.Metric.Get(r)
		}
	}
	var xs []float64
	den, available := false, false
	for _, r := range rows {
		if r.Algorithm != q.Den {
			continue
		}
		den = true
		available = available || r.Status != StatusUnavailable
		if n, ok := num[r.Seed]; ok && r.Status == StatusOK && q.Metric.Get(r) > 0 {
			xs = append(xs, n/q.Metric.Get(r))
		}
	}
	if len(xs) == 0 {
		switch {
		case !den:
			return ""
		case !available:
			return "n/a"
		}
		return "—"
	}
	return fmt.Sprintf("%.3g×", median(xs))
}

func formatNumber(x float64, m Metric) string {
	switch {
	case m.Name == Gap.Name:
		return fmt.Sprintf("%.2f", x)
	case math.Abs(x) >= 1000:
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.3g", x)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func filter(rows []Row, keep func(Row) bool) []Row {
	var out []Row
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// sweepNames returns the sweeps of rows in order of first appearance.
func sweepNames(rows []Row) []string {
	var out []string
	for _, r := range rows {
		if !slices.Contains(out, r.Sweep) {
			out = append(out, r.Sweep)
		}
	}
	return out
}

// algorithmNames returns the algorithms of rows in order of first
// appearance.
func algorithmNames(rows []Row) []string {
	var out []string
	for _, r := range rows {
		if !slices.Contains(out, r.Algorithm) {
			out = append(out, r.Algorithm)
		}
	}
	return out
}

// errWriter keeps the first write error, so that printing code stays flat.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// hosts returns the distinct hosts of rows.
func hosts(rows []Row) []string {
	var out []string
	for _, r := range rows {
		if r.Host != "" && !slices.Contains(out, r.Host) {
			out = append(out, r.Host)
		}
	}
	return out
}
