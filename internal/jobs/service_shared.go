package jobs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"sitebox/internal/jobs/spec"
)

// Files shipped with a submission and used by several of its jobs are
// kept once, by the SHA-256 of their bytes, in the shared directory
// beside the sandboxes (the box's alone), not in every job record: a
// "queue 100" with a 1 MB input stores 1 MB.

func (s *Service) sharedDir() string { return filepath.Join(s.cfg.Dir, ".shared") }

func (s *Service) sharedPath(ref string) string { return filepath.Join(s.sharedDir(), ref) }

// SubmitKeyed is Submit with the files the specs name by Ref and the
// submitter's key for the jobs (Job.Key, "" for none), recorded with
// them in one commit.
func (s *Service) SubmitKeyed(who Submitter, key string, specs []spec.Spec, shared map[string][]byte) ([]*Job, error) {
	if len(key) > 200 {
		return nil, fmt.Errorf("submission key is longer than 200 bytes")
	}
	if err := s.storeShared(specs, shared); err != nil {
		return nil, err
	}
	return s.submit(who, key, specs)
}

// storeShared checks that every Ref is sent and is the hash of its bytes
// (a client cannot name another submission's file), and writes each.
func (s *Service) storeShared(specs []spec.Spec, shared map[string][]byte) error {
	for i, sp := range specs {
		for _, in := range sp.Inputs {
			if in.Ref == "" {
				continue
			}
			if in.Data != nil || in.From != "" {
				return fmt.Errorf("job %d: input %s: a shared input has neither data nor a source of its own", i, in.As)
			}
			if _, ok := shared[in.Ref]; !ok {
				return fmt.Errorf("job %d: input %s: shared file %.16s… is not in the submission", i, in.As, in.Ref)
			}
		}
	}
	if len(shared) == 0 {
		return nil
	}
	if err := os.MkdirAll(s.sharedDir(), 0o700); err != nil {
		return fmt.Errorf("jobs: shared inputs: %w", err)
	}
	for ref, data := range shared {
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != ref {
			return fmt.Errorf("shared file %.16s…: its name is not the SHA-256 of its bytes", ref)
		}
		if _, err := os.Stat(s.sharedPath(ref)); err == nil {
			os.Chtimes(s.sharedPath(ref), time.Now(), time.Now()) // in use again
			continue
		}
		tmp, err := os.CreateTemp(s.sharedDir(), ".tmp-*")
		if err != nil {
			return fmt.Errorf("jobs: shared inputs: %w", err)
		}
		_, err = tmp.Write(data)
		if err == nil {
			err = tmp.Sync()
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), s.sharedPath(ref))
		}
		if err != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("jobs: shared inputs: %w", err)
		}
	}
	return nil
}

// copyShared puts shared file ref in the sandbox as dst.
func (s *Service) copyShared(ref, dst string) error {
	src, err := os.Open(s.sharedPath(ref))
	if err != nil {
		return fmt.Errorf("shared input: %w", err)
	}
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, src)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// withSharedData is sp with its shared inputs' bytes inline, for a
// domain that stages by itself (another box).
func (s *Service) withSharedData(sp spec.Spec) (spec.Spec, error) {
	ins := make([]spec.Input, len(sp.Inputs))
	for i, in := range sp.Inputs {
		ins[i] = in
		if in.Ref != "" {
			b, err := os.ReadFile(s.sharedPath(in.Ref))
			if err != nil {
				return sp, fmt.Errorf("shared input %s: %w", in.As, err)
			}
			ins[i].Data, ins[i].Ref = b, ""
		}
	}
	sp.Inputs = ins
	return sp, nil
}

// sweepSharedLocked removes the shared files no unfinished job names,
// an hour after their last use (a submission being written is younger).
func (s *Service) sweepSharedLocked(now time.Time) {
	ents, err := os.ReadDir(s.sharedDir())
	if err != nil {
		return
	}
	inUse := map[string]bool{}
	for _, j := range s.jobs {
		if j.State.Final() {
			continue
		}
		for _, in := range j.Spec.Inputs {
			if in.Ref != "" {
				inUse[in.Ref] = true
			}
		}
	}
	for _, e := range ents {
		info, err := e.Info()
		if err != nil || inUse[e.Name()] || now.Sub(info.ModTime()) < time.Hour {
			continue
		}
		os.Remove(filepath.Join(s.sharedDir(), e.Name()))
	}
}
