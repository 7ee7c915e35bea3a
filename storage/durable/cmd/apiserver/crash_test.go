package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// restartsEnv sets how many times TestCrash kills the server (make
// stress sets it high; go test runs a few).
const restartsEnv = "KAPI_CRASH_RESTARTS"

// TestCrash runs writers against the command's server (loopback only)
// and kills it with SIGKILL at random points, then starts it again on
// the same data directory, many times. After each start it reads every
// key and lists them all. The whole history, across every restart, must
// be linearizable on a model of the keys: every acknowledged write is
// there after a restart, revisions go on increasing, no object is there
// that was not written, and the requests cut by a kill (their outcome
// unknown) either happened or did not, as a whole.
func TestCrash(t *testing.T) {
	restarts := 3
	if v := os.Getenv(restartsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive count", restartsEnv, v)
		}
		restarts = n
	}
	bin := buildCommand(t)
	dir := t.TempDir()
	h := &crashHistory{start: time.Now()}
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	const writers = 4
	for round := range restarts + 1 {
		p := startProcess(t, bin, "--data-dir", dir, "--listen", "127.0.0.1:0")
		c := &crashClient{base: p.url, h: h, id: writers} // the checker's own client
		for k := range crashKeys {
			c.get(k)
		}
		c.list()
		if round == restarts {
			p.stop(t)
			break
		}
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		for w := range writers {
			wc := &crashClient{base: p.url, h: h, id: w, rand: rand.New(rand.NewPCG(r.Uint64(), uint64(w)))}
			wg.Go(func() { wc.loop(ctx) })
		}
		time.Sleep(time.Duration(50+r.IntN(400)) * time.Millisecond)
		p.cmd.Process.Signal(syscall.SIGKILL)
		cancel() // the requests under way are cut; no new ones
		wg.Wait()
		p.cmd.Wait()
	}
	ops := h.operations()
	if err := revisionsIncrease(ops); err != nil {
		t.Fatal(err)
	}
	res, info := porcupine.CheckOperationsVerbose(crashModel.ToModel(), ops, 5*time.Minute)
	t.Logf("%d restarts, %d operations (%d cut by a kill): %s", restarts, len(ops), h.cut, res)
	if res != porcupine.Ok {
		path := filepath.Join(t.TempDir(), "history.html")
		if f, err := os.Create(path); err == nil {
			porcupine.Visualize(crashModel.ToModel(), info, f)
			f.Close()
		}
		t.Fatalf("history not linearizable (%s); visualization in %s", res, path)
	}
}

// buildCommand builds this command into a temporary directory.
func buildCommand(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "apiserver")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// process is a running server.
type process struct {
	cmd    *exec.Cmd
	url    string
	stderr *syncBuffer
}

// syncBuffer is a bytes.Buffer the process writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func startProcess(t *testing.T, bin string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, stderr: &syncBuffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "serving the kapi example API at "); ok {
				urls <- rest
			}
		}
		close(urls)
	}()
	select {
	case u, ok := <-urls:
		if !ok {
			cmd.Wait()
			t.Fatalf("the server ended before serving: %s", p.stderr)
		}
		p.url = u
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("not serving within 30s: %s", p.stderr)
	}
	return p
}

func (p *process) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("server stopped with %v: %s", err, p.stderr)
	}
}

// The keys: configmaps in the default namespace.
const crashKeys = 4

type crashKind uint8

const (
	cGet crashKind = iota
	cCreate
	cUpdate // PUT with the resourceVersion the client last saw: compare-and-swap
	cDelete
	cList
)

type crashIn struct {
	kind  crashKind
	key   int
	value string
	rev   uint64 // cUpdate's precondition
}

type crashResult uint8

const (
	rOK crashResult = iota
	rNotFound
	rExists
	rConflict
	rUnknown // cut by a kill (or any other unexpected answer): happened or not
	rBad     // a list that failed, or held an object no client could write: never legal
)

type crashOut struct {
	res   crashResult
	value string
	rev   uint64
	items [crashKeys]crashSlot // cList
}

// crashSlot is a key's state in the model; rev 0 is "not known" (the
// write that made it was cut by a kill).
type crashSlot struct {
	live  bool
	value string
	rev   uint64
}

type crashState struct {
	keys   [crashKeys]crashSlot
	maxRev uint64 // the highest revision known to be written (in a partition: of its key)
}

// byKey splits a history into one per key; a list becomes a get of each
// key, answered by its item (or not found).
func byKey(ops []porcupine.Operation) [][]porcupine.Operation {
	parts := make([][]porcupine.Operation, crashKeys)
	for _, op := range ops {
		in, out := op.Input.(crashIn), op.Output.(crashOut)
		if in.kind != cList {
			parts[in.key] = append(parts[in.key], op)
			continue
		}
		for k := range crashKeys {
			get := op
			get.Input = crashIn{kind: cGet, key: k}
			switch it := out.items[k]; {
			case out.res != rOK:
				get.Output = out
			case it.live:
				get.Output = crashOut{res: rOK, value: it.value, rev: it.rev}
			default:
				get.Output = crashOut{res: rNotFound}
			}
			parts[k] = append(parts[k], get)
		}
	}
	return parts
}

// revisionsIncrease checks that the revisions of acknowledged creates
// and updates follow real time across keys and restarts: a write that
// started after another returned has a higher revision.
func revisionsIncrease(ops []porcupine.Operation) error {
	var writes []porcupine.Operation
	for _, op := range ops {
		if k := op.Input.(crashIn).kind; (k == cCreate || k == cUpdate) && op.Output.(crashOut).res == rOK {
			writes = append(writes, op)
		}
	}
	byReturn := slices.Clone(writes)
	slices.SortFunc(byReturn, func(a, b porcupine.Operation) int { return cmp.Compare(a.Return, b.Return) })
	slices.SortFunc(writes, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	var done int
	var highest porcupine.Operation // the highest revision among the writes returned so far
	for _, w := range writes {
		for ; done < len(byReturn) && byReturn[done].Return < w.Call; done++ {
			if r := byReturn[done]; highest.Output == nil || r.Output.(crashOut).rev > highest.Output.(crashOut).rev {
				highest = r
			}
		}
		if highest.Output != nil && w.Output.(crashOut).rev <= highest.Output.(crashOut).rev {
			return fmt.Errorf("a write at revision %d started after one at revision %d returned", w.Output.(crashOut).rev, highest.Output.(crashOut).rev)
		}
	}
	return nil
}

// crashModel: every answered operation must agree with the state; an
// operation cut by a kill leads to two states, as if it happened and as
// if it did not.
//
// Keys are independent in the model, so the history is checked key by
// key (a list is a read of every key); revisionsIncrease checks the
// order of revisions across keys.
var crashModel = porcupine.NondeterministicModel{
	Partition: byKey,
	Init:      func() []any { return []any{crashState{}} },
	Step: func(s, in, out any) []any {
		return crashStep(s.(crashState), in.(crashIn), out.(crashOut))
	},
	DescribeOperation: func(in, out any) string {
		i, o := in.(crashIn), out.(crashOut)
		return fmt.Sprintf("%d k%d %q rv%d → %d %q rv%d", i.kind, i.key, i.value, i.rev, o.res, o.value, o.rev)
	},
}

func crashStep(st crashState, in crashIn, out crashOut) []any {
	if out.res == rBad {
		return nil
	}
	one := func(ok bool, s crashState) []any {
		if ok {
			return []any{s}
		}
		return nil
	}
	if in.kind == cList {
		if out.res != rOK {
			return nil
		}
		for k, got := range out.items {
			cur := st.keys[k]
			if got.live != cur.live || cur.live && (got.value != cur.value || cur.rev != 0 && got.rev != cur.rev) {
				return nil
			}
			if cur.live && cur.rev == 0 {
				st.keys[k].rev = got.rev
			}
		}
		return []any{st}
	}
	cur := st.keys[in.key]
	written := func(rev uint64) crashState {
		st.keys[in.key] = crashSlot{true, in.value, rev}
		st.maxRev = max(st.maxRev, rev)
		return st
	}
	if out.res == rUnknown {
		var happened crashState
		switch {
		case in.kind == cCreate && !cur.live,
			in.kind == cUpdate && cur.live && (cur.rev == 0 || cur.rev == in.rev):
			happened = written(0)
		case in.kind == cDelete && cur.live:
			happened = st
			happened.keys[in.key] = crashSlot{}
		default:
			return []any{st} // it could not have happened
		}
		return []any{st, happened}
	}
	if out.res == rNotFound {
		return one(!cur.live, st)
	}
	switch in.kind {
	case cGet:
		if out.res != rOK || !cur.live || out.value != cur.value || cur.rev != 0 && out.rev != cur.rev {
			return nil
		}
		st.keys[in.key].rev = out.rev
		return []any{st}
	case cCreate:
		if out.res == rExists {
			return one(cur.live, st)
		}
		return one(out.res == rOK && !cur.live && out.rev > st.maxRev, written(out.rev))
	case cUpdate:
		if out.res == rConflict {
			return one(cur.live && cur.rev != in.rev, st)
		}
		return one(out.res == rOK && cur.live && (cur.rev == 0 || cur.rev == in.rev) && out.rev > st.maxRev, written(out.rev))
	case cDelete:
		if out.res != rOK || !cur.live {
			return nil
		}
		st.keys[in.key] = crashSlot{}
		return []any{st}
	}
	return nil
}

// crashHistory records operations with their call and return times.
type crashHistory struct {
	start time.Time
	mu    sync.Mutex
	ops   []porcupine.Operation
	cut   int
}

func (h *crashHistory) now() int64 { return int64(time.Since(h.start)) }

func (h *crashHistory) add(client int, in crashIn, call int64, out crashOut) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ret := h.now()
	if out.res == rUnknown {
		ret = 1 << 62 // never returned: may take effect any time after its call
		h.cut++
	}
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
}

func (h *crashHistory) operations() []porcupine.Operation {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ops
}

// crashClient sends the requests of one client.
type crashClient struct {
	base string
	h    *crashHistory
	id   int
	rand *rand.Rand
	n    int
	seen [crashKeys]uint64 // the last resourceVersion seen of each key
}

var httpClient = &http.Client{Timeout: 30 * time.Second}

func keyName(k int) string { return fmt.Sprintf("c%d", k) }

func (c *crashClient) loop(ctx context.Context) {
	for ctx.Err() == nil {
		k := c.rand.IntN(crashKeys)
		switch c.rand.IntN(8) {
		case 0, 1:
			c.get(k)
		case 2, 3:
			c.create(k)
		case 4, 5, 6:
			c.update(k)
		default:
			c.del(k)
		}
	}
}

type cmJSON struct {
	Kind     string `json:"kind"`
	Reason   string `json:"reason"`
	Metadata struct {
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Data  map[string]string `json:"data"`
	Items []cmJSON          `json:"items"`
}

// do sends a request and classifies the answer: known outcomes, or
// rUnknown for anything else (a connection cut by the kill).
func (c *crashClient) do(method, path string, body any) (crashOut, cmJSON) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return crashOut{res: rUnknown}, cmJSON{}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	var obj cmJSON
	if err != nil || json.Unmarshal(b, &obj) != nil {
		return crashOut{res: rUnknown}, cmJSON{}
	}
	rev, _ := strconv.ParseUint(obj.Metadata.ResourceVersion, 10, 64)
	switch {
	case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusCreated:
		return crashOut{res: rOK, value: obj.Data["v"], rev: rev}, obj
	case resp.StatusCode == http.StatusNotFound:
		return crashOut{res: rNotFound}, obj
	case resp.StatusCode == http.StatusConflict && obj.Reason == "AlreadyExists":
		return crashOut{res: rExists}, obj
	case resp.StatusCode == http.StatusConflict && obj.Reason == "Conflict":
		return crashOut{res: rConflict}, obj
	}
	return crashOut{res: rUnknown}, obj
}

const cmPath = "/api/v1/namespaces/default/configmaps"

func configMap(k int, value string, rev uint64) map[string]any {
	md := map[string]any{"name": keyName(k)}
	if rev != 0 {
		md["resourceVersion"] = strconv.FormatUint(rev, 10)
	}
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": map[string]string{"v": value}}
}

func (c *crashClient) value() string {
	c.n++
	return fmt.Sprintf("w%d-%d", c.id, c.n)
}

func (c *crashClient) record(in crashIn, call int64, out crashOut) {
	if out.res == rOK && in.kind != cDelete && in.kind != cList {
		c.seen[in.key] = out.rev
	}
	c.h.add(c.id, in, call, out)
}

func (c *crashClient) get(k int) {
	call := c.h.now()
	out, _ := c.do("GET", cmPath+"/"+keyName(k), nil)
	c.record(crashIn{kind: cGet, key: k}, call, out)
}

func (c *crashClient) create(k int) {
	in := crashIn{kind: cCreate, key: k, value: c.value()}
	call := c.h.now()
	out, _ := c.do("POST", cmPath, configMap(k, in.value, 0))
	c.record(in, call, out)
}

func (c *crashClient) update(k int) {
	in := crashIn{kind: cUpdate, key: k, value: c.value(), rev: max(c.seen[k], 1)}
	call := c.h.now()
	out, _ := c.do("PUT", cmPath+"/"+keyName(k), configMap(k, in.value, in.rev))
	c.record(in, call, out)
}

func (c *crashClient) del(k int) {
	call := c.h.now()
	out, _ := c.do("DELETE", cmPath+"/"+keyName(k), nil)
	c.record(crashIn{kind: cDelete, key: k}, call, out)
}

func (c *crashClient) list() {
	call := c.h.now()
	out, obj := c.do("GET", cmPath, nil)
	if out.res == rOK {
		for _, it := range obj.Items {
			k, err := strconv.Atoi(strings.TrimPrefix(it.Metadata.Name, "c"))
			if err != nil || k < 0 || k >= crashKeys || out.items[k].live {
				out = crashOut{res: rBad} // an object no client wrote
				break
			}
			rev, _ := strconv.ParseUint(it.Metadata.ResourceVersion, 10, 64)
			out.items[k] = crashSlot{live: true, value: it.Data["v"], rev: rev}
		}
	}
	if out.res != rOK {
		out = crashOut{res: rBad} // a list after a start must succeed
	}
	c.h.add(c.id, crashIn{kind: cList}, call, out)
}
