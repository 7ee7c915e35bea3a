package durable

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// benchValue is a 2 KiB JSON object, distinct for each i.
func benchValue(i int) []byte {
	b := fmt.Appendf(nil, `{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"w-%07d","namespace":"ns-%d","uid":"%08x-0000-4000-8000-000000000000"},"spec":{`, i, i%10, i)
	for j := 0; len(b) < 1900; j++ {
		b = fmt.Appendf(b, `"field%03d":"value-%07d",`, j, i)
	}
	b = append(b, `"pad":"`...)
	for len(b) < 2048-3 {
		b = append(b, 'x')
	}
	return append(b, `"}}`...)
}

func benchObject(i int) storage.Object {
	return storage.Object{
		Key:    fmt.Sprintf("/example.com/widgets/ns-%d/w-%07d", i%10, i),
		Value:  benchValue(i),
		UID:    fmt.Sprintf("%08x-0000-4000-8000-000000000000", i),
		Labels: map[string]string{"app": "bench", "shard": strconv.Itoa(i % 16)},
		Fields: map[string]string{"metadata.name": fmt.Sprintf("w-%07d", i), "metadata.namespace": fmt.Sprintf("ns-%d", i%10)},
	}
}

// benchDirs holds the data directories of BenchmarkOpen, built once per
// process: n creates, in the log or compacted into the state.
var (
	benchDirsMu sync.Mutex
	benchDirs   = map[string]string{}
)

// filledDir writes n creates to a new store's file, 1000 per
// transaction (what n writers' group commits leave), then compacts them
// all into the state bucket if compacted. It returns the directory and
// the encoded bytes of the objects.
func filledDir(b testing.TB, n int, compacted bool) (string, int64) {
	benchDirsMu.Lock()
	defer benchDirsMu.Unlock()
	name := fmt.Sprintf("%d-%v", n, compacted)
	var encoded int64
	for i := range n {
		encoded += int64(len(encodeChange(opPut, benchObject(i))) - 1)
	}
	if dir, ok := benchDirs[name]; ok {
		return dir, encoded
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("kapi-durable-bench-%d-%s", os.Getpid(), name))
	os.RemoveAll(dir)
	d, err := openDisk(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer d.close()
	const batch = 1000
	for first := 0; first < n; first += batch {
		var recs [][]byte
		for i := first; i < min(first+batch, n); i++ {
			recs = append(recs, encodeChange(opPut, benchObject(i)))
		}
		if err := d.commit(uint64(initialRevision+1+first), recs, 0); err != nil {
			b.Fatal(err)
		}
	}
	if compacted {
		if err := d.fold(uint64(initialRevision + n)); err != nil {
			b.Fatal(err)
		}
	}
	benchDirs[name] = dir
	return dir, encoded
}

func removeBenchDirs() {
	for _, dir := range benchDirs {
		os.RemoveAll(dir)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	removeBenchDirs()
	os.Exit(code)
}

// heapOf returns the live heap that build's result holds.
func heapOf(build func() any) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	v := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return after.HeapAlloc - before.HeapAlloc
}

// cpuTime is the CPU time the process has used (user and system, every
// thread): on a shared machine, start-up's wall time depends on what else
// runs; its CPU time much less.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sysAndFaults is the process's system CPU time and minor page faults
// so far (every thread): how much of start-up is the kernel's, mapping
// fresh memory for the heap it builds.
func sysAndFaults() (time.Duration, int64) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Stime.Nano()), ru.Minflt
}

var openObjects = flag.String("open.objects", "100000", "BenchmarkOpen's store sizes, comma-separated")

// dirSize is the bytes of the files under dir.
func dirSize(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		fi, err := e.Info()
		n += fi.Size()
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkOpen opens a store of n 2 KiB objects: the start-up time
// (ns/op), the file's bytes and the heap per object, beside the encoded
// size of an object. "log": the n creates are all in the history (the
// first 5 minutes after writing them); "compacted": all folded into the
// state. memory: the memory store holding the same objects, for its heap.
// cpu-ms/op is the process's CPU time (all threads) during Open, and the
// background work of the store it opened until its Close (close-cpu-ms/op
// is Close's, apart: it flushes, and waits for pebble's compactions, of
// which compactions/op counts those begun before it); sys-cpu-ms/op is
// the kernel's part of Open's CPU time and faults/op its minor page
// faults (the heap's fresh memory mapped); fastest-ms the fastest Open
// of the b.N (on a shared machine, the one least delayed by other
// processes).
func BenchmarkOpen(b *testing.B) {
	var sizes []int
	for _, f := range strings.Split(*openObjects, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			b.Fatalf("-open.objects: %v", err)
		}
		sizes = append(sizes, n)
	}
	for _, n := range sizes {
		for _, compacted := range []bool{false, true} {
			b.Run(fmt.Sprintf("objects=%d/%s", n, map[bool]string{false: "log", true: "compacted"}[compacted]), func(b *testing.B) {
				dir, encoded := filledDir(b, n, compacted)
				size := dirSize(b, dir)
				var opened *Store
				heap := heapOf(func() any {
					var err error
					if opened, err = Open(dir, Options{}); err != nil {
						b.Fatal(err)
					}
					return opened
				})
				opened.Close()
				b.ResetTimer()
				cpu := cpuTime()
				var closing time.Duration // CPU time in Close: pebble waits there for its compactions
				var compactions int64     // pebble's compactions begun before Close
				fastest := time.Duration(1<<63 - 1)
				var sys time.Duration // system CPU time in Open
				var faults int64      // minor page faults in Open
				for range b.N {
					sys0, faults0 := sysAndFaults()
					start := time.Now()
					s, err := Open(dir, Options{})
					fastest = min(fastest, time.Since(start))
					sys1, faults1 := sysAndFaults()
					sys, faults = sys+sys1-sys0, faults+faults1-faults0
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					if r, _ := s.Revision(context.Background()); r != uint64(initialRevision+n) {
						b.Fatalf("revision %d after open; want %d", r, initialRevision+n)
					}
					m := s.disk.db.Metrics()
					compactions += m.Compact.Count + m.Compact.NumInProgress
					t := cpuTime()
					s.Close()
					closing += cpuTime() - t
					b.StartTimer()
				}
				b.ReportMetric(float64((cpuTime()-cpu-closing).Milliseconds())/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(closing.Milliseconds())/float64(b.N), "close-cpu-ms/op")
				b.ReportMetric(float64(sys.Milliseconds())/float64(b.N), "sys-cpu-ms/op")
				b.ReportMetric(float64(faults)/float64(b.N), "faults/op")
				b.ReportMetric(float64(compactions)/float64(b.N), "compactions/op")
				b.ReportMetric(float64(fastest.Milliseconds()), "fastest-ms")
				b.ReportMetric(float64(encoded)/float64(n), "encoded-B/obj")
				b.ReportMetric(float64(size)/float64(n), "disk-B/obj")
				b.ReportMetric(float64(heap)/float64(n), "heap-B/obj")
			})
		}
		b.Run(fmt.Sprintf("objects=%d/memory", n), func(b *testing.B) {
			var heap uint64
			for range b.N {
				heap = heapOf(func() any {
					s := memory.New(memory.Options{})
					for i := range n {
						if _, err := s.Create(context.Background(), benchObject(i)); err != nil {
							b.Fatal(err)
						}
					}
					return s
				})
			}
			b.ReportMetric(float64(heap)/float64(n), "heap-B/obj")
		})
	}
}

// BenchmarkWrite: one writer's creates and updates, each synced.
func BenchmarkWrite(b *testing.B) {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	next := 0
	b.Run("create", func(b *testing.B) {
		start := time.Now()
		for range b.N {
			if _, err := s.Create(ctx, benchObject(next)); err != nil {
				b.Fatal(err)
			}
			next++
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
	})
}

// BenchmarkWriters: creates by 1, 16 and 64 concurrent writers, each
// synced: writes per second, writes per commit and where a commit's
// time goes (waiting for writers, the disk, the memory store).
func BenchmarkWriters(b *testing.B) {
	for _, writers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s, err := Open(b.TempDir(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for w := range writers {
				n := b.N / writers
				if w < b.N%writers {
					n++
				}
				wg.Go(func() {
					for range n {
						if _, err := s.Create(ctx, benchObject(int(next.Add(1)))); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			el := time.Since(start)
			b.ReportMetric(float64(b.N)/el.Seconds(), "writes/s")
			s.Close() // the committer has ended: its counts are final
			st := s.Stats()
			if st.Commits > 0 {
				c := float64(st.Commits)
				b.ReportMetric(float64(st.Writes)/c, "writes/commit")
				b.ReportMetric(float64(st.Disk.Microseconds())/c, "disk-µs/commit")
				b.ReportMetric(float64(st.Gather.Microseconds())/c, "gather-µs/commit")
				b.ReportMetric(float64(st.Memory.Microseconds())/c, "mem-µs/commit")
			}
		})
	}
}
