package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// WriteDir writes an experiment's output into dir, the layout `hearth
// bench` documents: results.csv (every run), summary.md (Summarize) and,
// with plots, the plot files. It returns the summary, for printing (also
// when only the plots failed), and the number of plot files.
func WriteDir(dir string, e *Experiment, rows []Row, plots bool) (summary []byte, plotFiles int, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, 0, err
	}
	var csv bytes.Buffer
	if err := WriteCSV(&csv, rows); err != nil {
		return nil, 0, err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.csv"), csv.Bytes(), 0o644); err != nil {
		return nil, 0, err
	}
	var sum bytes.Buffer
	if err := Summarize(&sum, e, rows); err != nil {
		return nil, 0, err
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.md"), sum.Bytes(), 0o644); err != nil {
		return nil, 0, err
	}
	if plots {
		files, err := Plot(dir, e, rows)
		if err != nil {
			return sum.Bytes(), 0, err
		}
		plotFiles = len(files)
	}
	return sum.Bytes(), plotFiles, nil
}

// ReadFiles reads the results.csv files at paths and merges their rows
// (Merge), as `hearth bench --merge` does with runs made on several
// machines.
func ReadFiles(paths []string) ([]Row, error) {
	var sets [][]Row
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		rows, err := ReadCSV(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		sets = append(sets, rows)
	}
	return Merge(sets...), nil
}
