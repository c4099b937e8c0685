package jobs

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"
)

// db keeps the queue and the job records in an embedded database (bbolt:
// one file, transactions, fsync on commit), so a restart loses nothing.
type db struct {
	b *bolt.DB
}

var (
	bucketJobs  = []byte("jobs")
	bucketMeta  = []byte("meta")
	bucketUsage = []byte("usage") // owner → decayed usage, for fair share
	keyCluster  = []byte("cluster")
)

func openDB(path string) (*db, error) {
	b, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("job database %s is locked: is another box running on this state dir?", path)
		}
		return nil, fmt.Errorf("job database %s: %w", path, err)
	}
	err = b.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketJobs, bucketMeta, bucketUsage} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("job database %s: %w", path, err)
	}
	return &db{b: b}, nil
}

func (d *db) close() error { return d.b.Close() }

// nextCluster reserves a cluster number for a submission.
func (d *db) nextCluster(tx *bolt.Tx) (int64, error) {
	m := tx.Bucket(bucketMeta)
	n := int64(0)
	if v := m.Get(keyCluster); len(v) == 8 {
		n = int64(binary.BigEndian.Uint64(v))
	}
	n++
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	return n, m.Put(keyCluster, b[:])
}

// put writes jobs in tx.
func putJobs(tx *bolt.Tx, js ...*Job) error {
	b := tx.Bucket(bucketJobs)
	for _, j := range js {
		v, err := json.Marshal(j)
		if err != nil {
			return fmt.Errorf("encode job %s: %w", j.ID, err)
		}
		if err := b.Put([]byte(j.ID), v); err != nil {
			return err
		}
	}
	return nil
}

// save writes jobs in one transaction.
func (d *db) save(js ...*Job) error {
	if len(js) == 0 {
		return nil
	}
	return d.b.Update(func(tx *bolt.Tx) error { return putJobs(tx, js...) })
}

// load reads every job record.
func (d *db) load() ([]*Job, error) {
	var out []*Job
	err := d.b.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketJobs).ForEach(func(k, v []byte) error {
			j := &Job{}
			if err := json.Unmarshal(v, j); err != nil {
				return fmt.Errorf("job %s: %w", k, err)
			}
			out = append(out, j)
			return nil
		})
	})
	return out, err
}

// usage is one owner's decayed usage at a moment.
type usage struct {
	Value float64   `json:"value"` // CPU-seconds, decayed
	At    time.Time `json:"at"`
}

// decayed returns u's value at now with half-life h.
func (u usage) decayed(now time.Time, h time.Duration) float64 {
	if u.At.IsZero() || h <= 0 {
		return u.Value
	}
	dt := now.Sub(u.At).Seconds()
	if dt <= 0 {
		return u.Value
	}
	return u.Value * math.Exp2(-dt/h.Seconds())
}

func (d *db) saveUsage(m map[string]usage) error {
	return d.b.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketUsage)
		for owner, u := range m {
			v, _ := json.Marshal(u)
			if err := b.Put([]byte(owner), v); err != nil {
				return err
			}
		}
		return nil
	})
}

func (d *db) loadUsage() (map[string]usage, error) {
	m := map[string]usage{}
	err := d.b.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketUsage).ForEach(func(k, v []byte) error {
			var u usage
			if json.Unmarshal(v, &u) == nil {
				m[string(k)] = u
			}
			return nil
		})
	})
	return m, err
}

// boltTx is the transaction type the service writes submissions in.
type boltTx = bolt.Tx
