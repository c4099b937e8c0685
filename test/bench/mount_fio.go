package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// FioRW is the fiorw workload on a writable mount: fio sequential
// write and read of a file (1 MiB blocks, MB/s), then random 4 KiB
// reads and writes of it (IOPS). Writes end with an fsync, which a
// sitebox mount answers by uploading the file, so the figures include
// getting the bytes to the server.
type FioRW struct {
	SeqWriteMBps, SeqReadMBps   float64
	RandReadIOPS, RandWriteIOPS float64
}

// fioReadWrite runs the four fio passes on a new file of size bytes in
// dir, random ones for d each, and removes the file.
func fioReadWrite(ctx context.Context, dir string, size int64, d time.Duration) (FioRW, error) {
	var r FioRW
	file := filepath.Join(dir, "fiorw.dat")
	defer os.Remove(file)
	secs := strconv.Itoa(max(1, int(d.Seconds()))) + "s"
	passes := []struct {
		name string
		args []string
		to   *float64
		get  func(fioJob) float64
	}{
		{"seqwrite", []string{"--rw=write", "--bs=1M", "--end_fsync=1"}, &r.SeqWriteMBps, func(j fioJob) float64 { return j.Write.BW / 1e6 }},
		{"seqread", []string{"--rw=read", "--bs=1M", "--readonly"}, &r.SeqReadMBps, func(j fioJob) float64 { return j.Read.BW / 1e6 }},
		{"randread", []string{"--rw=randread", "--bs=4k", "--readonly", "--time_based", "--runtime=" + secs}, &r.RandReadIOPS, func(j fioJob) float64 { return j.Read.IOPS }},
		{"randwrite", []string{"--rw=randwrite", "--bs=4k", "--time_based", "--runtime=" + secs, "--end_fsync=1"}, &r.RandWriteIOPS, func(j fioJob) float64 { return j.Write.IOPS }},
	}
	for _, p := range passes {
		j, err := runFio(ctx, append([]string{"--name=" + p.name, "--filename=" + file, "--size=" + strconv.FormatInt(size, 10), "--ioengine=psync"}, p.args...), d)
		if err != nil {
			return r, fmt.Errorf("%s: %w", p.name, err)
		}
		*p.to = p.get(j)
	}
	return r, nil
}

// fioJob is the part of fio's JSON output for one job the bench reads.
type fioJob struct {
	Read, Write struct {
		IOPS float64 `json:"iops"`
		BW   float64 `json:"bw_bytes"`
	}
}

// runFio runs fio with args (one job, at most d plus two minutes) and
// returns its figures.
func runFio(ctx context.Context, args []string, d time.Duration) (fioJob, error) {
	ctx, cancel := context.WithTimeout(ctx, d+2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "fio", append(args, "--output-format=json")...).Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = trimMsg(ee.Stderr)
		}
		return fioJob{}, fmt.Errorf("fio: %v: %s %s", err, msg, trimMsg(out))
	}
	var r struct{ Jobs []fioJob }
	if err := json.Unmarshal(out, &r); err != nil || len(r.Jobs) == 0 {
		return fioJob{}, fmt.Errorf("fio output %q: %v", trimMsg(out), err)
	}
	return r.Jobs[0], nil
}
