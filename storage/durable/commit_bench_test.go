package durable

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkCommit: what one group commit of n 2 KiB changes costs on
// this disk, the engines side by side: the bare sync (the records
// appended to a file, then fdatasync), bbolt (the store's first engine:
// the records put in a bucket in one transaction, which syncs the data
// pages, then the meta page; also with NoFreelistSync, which leaves the
// freelist out of the commit) and pebble (the store's commit: one batch
// appended to pebble's log, then one fdatasync, then the marker's
// write in place; "marker" is that write alone, on a marker of its
// own, no sync). Each iteration commits
// once on each, in turn, so that other processes' I/O weighs on all
// three alike; the metrics are the mean milliseconds of each and the
// median of bbolt's time over pebble's in the same iteration.
func BenchmarkCommit(b *testing.B) {
	for _, group := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("group=%d", group), func(b *testing.B) {
			dir := b.TempDir()
			records := make([][]byte, group)
			size := 0
			for i := range records {
				records[i] = encodeChange(opPut, benchObject(i))
				size += len(records[i])
			}
			raw, err := os.Create(filepath.Join(dir, "raw"))
			if err != nil {
				b.Fatal(err)
			}
			defer raw.Close()
			buf := slices.Concat(records...)
			openBolt := func(name string, noFreelistSync bool) *bolt.DB {
				db, err := bolt.Open(filepath.Join(dir, name), 0o600, &bolt.Options{FreelistType: bolt.FreelistMapType, NoFreelistSync: noFreelistSync})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { db.Close() })
				db.Update(func(tx *bolt.Tx) error {
					for _, n := range []string{"meta", "log"} {
						if _, err := tx.CreateBucket([]byte(n)); err != nil {
							return err
						}
					}
					return nil
				})
				return db
			}
			boltCommit := func(db *bolt.DB) func(uint64) error {
				return func(first uint64) error {
					return db.Update(func(tx *bolt.Tx) error {
						log := tx.Bucket([]byte("log"))
						log.FillPercent = 1
						for i, r := range records {
							if err := log.Put(logKey(first+uint64(i)), r); err != nil {
								return err
							}
						}
						return tx.Bucket([]byte("meta")).Put(keyRevision, uvarint(first+uint64(group)-1))
					})
				}
			}
			d, err := openDisk(filepath.Join(dir, "store"))
			if err != nil {
				b.Fatal(err)
			}
			defer d.close()
			markDir := filepath.Join(dir, "marker")
			os.Mkdir(markDir, 0o700)
			if err := writeMarker(markDir, 0); err != nil {
				b.Fatal(err)
			}
			m, err := openMarker(markDir, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer m.f.Close()
			engines := []struct {
				name   string
				commit func(first uint64) error
			}{
				{"fdatasync", func(first uint64) error {
					if _, err := raw.WriteAt(buf, int64(first)*int64(size)); err != nil {
						return err
					}
					return syscall.Fdatasync(int(raw.Fd()))
				}},
				{"bbolt", boltCommit(openBolt("bolt.db", false))},
				{"pebble", func(first uint64) error { return d.commit(first, records, 0) }},
				{"bbolt-nofreelistsync", boltCommit(openBolt("bolt-nfs.db", true))},
				{"marker", func(first uint64) error {
					m.write(first + uint64(group) - 1)
					if m.wrote != first+uint64(group)-1 {
						return errors.New("the marker's write failed")
					}
					return nil
				}},
			}
			took := make([][]time.Duration, len(engines))
			b.ResetTimer()
			for i := range b.N {
				first := uint64(initialRevision + 1 + i*group)
				for k := range engines {
					k = (k + i) % len(engines) // each goes first in turn
					start := time.Now()
					if err := engines[k].commit(first); err != nil {
						b.Fatalf("%s: %v", engines[k].name, err)
					}
					took[k] = append(took[k], time.Since(start))
				}
			}
			b.StopTimer()
			for k, e := range engines {
				var sum time.Duration
				for _, t := range took[k] {
					sum += t
				}
				b.ReportMetric(float64(sum.Nanoseconds())/1e6/float64(b.N), e.name+"-ms")
			}
			ratios := make([]float64, b.N)
			for i := range ratios {
				ratios[i] = float64(took[1][i]) / float64(took[2][i])
			}
			slices.Sort(ratios)
			b.ReportMetric(ratios[len(ratios)/2], "bbolt/pebble")
		})
	}
}
