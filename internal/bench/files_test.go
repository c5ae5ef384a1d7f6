package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteDirReadFiles: WriteDir lays out results.csv and summary.md
// (the summary it returns is the file's), and ReadFiles reads the runs
// back, merged with a second file as Merge does; a missing file is an
// error naming it.
func TestWriteDirReadFiles(t *testing.T) {
	dir := t.TempDir()
	rows := sampleRows()
	e := &Experiment{Name: "fake", Metrics: []Metric{SimTime}, Plan: func(bool) Plan { return Plan{} }}
	sum, plots, err := WriteDir(dir, e, rows, false)
	if err != nil || plots != 0 {
		t.Fatalf("WriteDir: %d plots, %v", plots, err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil || !bytes.Equal(md, sum) || len(sum) == 0 {
		t.Errorf("summary.md %q, returned %q, %v", md, sum, err)
	}
	csv := filepath.Join(dir, "results.csv")
	got, err := ReadFiles([]string{csv})
	if err != nil || !equalRows(got, Merge(rows)) {
		t.Errorf("read back %+v, %v; want %+v", got, err, rows)
	}
	other := filepath.Join(t.TempDir(), "results.csv")
	more := []Row{row("C", "1", 5, 3, true)}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, more); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err = ReadFiles([]string{csv, other}); err != nil || !equalRows(got, Merge(rows, more)) {
		t.Errorf("merged %+v, %v", got, err)
	}
	missing := filepath.Join(dir, "none.csv")
	if _, err := ReadFiles([]string{missing}); err == nil || !bytes.Contains([]byte(err.Error()), []byte("none.csv")) {
		t.Errorf("missing file: %v", err)
	}
}
