package compare

import (
	"context"
	"errors"
	"testing"
)

// TestKapiWriteSharesNothingWithTheCaller: the object a kapi write hands
// back is the caller's, at the new resourceVersion; changing it afterwards
// changes nothing readers see (the shared decoded form is a copy), and a
// failed update leaves the caller's resourceVersion as it was.
func TestKapiWriteSharesNothingWithTheCaller(t *testing.T) {
	ctx := context.Background()
	p, err := KapiMemory().Start(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	u := Widget(1)
	out, err := p.Create(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if out != u || out.GetResourceVersion() == "" {
		t.Fatalf("Create returned %p with resourceVersion %q; want the caller's object %p with the new one", out, out.GetResourceVersion(), u)
	}
	setSpecInt(out, "counter", 41)
	out.SetLabels(map[string]string{"changed": "yes"})
	ns, name := Name(1)
	got, err := p.Get(ctx, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	if specInt(got, "counter") != 0 || got.GetLabels()["changed"] != "" {
		t.Fatalf("a change to the created object reached readers: counter %d, labels %v", specInt(got, "counter"), got.GetLabels())
	}
	if got.GetResourceVersion() != u.GetResourceVersion() {
		t.Errorf("read resourceVersion %q; want the create's %q", got.GetResourceVersion(), u.GetResourceVersion())
	}

	next := got.DeepCopy()
	setSpecInt(next, "counter", 1)
	if _, err := p.Update(ctx, next); err != nil {
		t.Fatal(err)
	}
	setSpecInt(next, "counter", 99)
	if again, _ := p.Get(ctx, ns, name); specInt(again, "counter") != 1 {
		t.Errorf("a change to the updated object reached readers: counter %d; want 1", specInt(again, "counter"))
	}
	stale := got.DeepCopy() // at the create's resourceVersion, now old
	if _, err := p.Update(ctx, stale); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale update: err %v; want ErrConflict", err)
	}
	if stale.GetResourceVersion() != got.GetResourceVersion() {
		t.Errorf("a failed update left resourceVersion %q; want the caller's %q", stale.GetResourceVersion(), got.GetResourceVersion())
	}
}
