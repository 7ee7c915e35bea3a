package rbac

import (
	"fmt"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/registry/authz"
)

// TestConcurrent runs writers and readers at once (run with -race): a
// binding that is never changed keeps allowing throughout, while others
// come and go.
func TestConcurrent(t *testing.T) {
	z := withBootstrap()
	z.SetClusterRole(&ClusterRole{Metadata: ObjectMeta{Name: "r"}, Rules: []PolicyRule{r(s(""), s("get"), s("pods"))}})
	z.SetRoleBinding(&RoleBinding{Metadata: ObjectMeta{Namespace: "a", Name: "stable"}, RoleRef: clusterRoleRef("r"), Subjects: []Subject{{Kind: GroupKind, Name: "g"}}})
	var wg sync.WaitGroup
	const n = 300
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n; i++ {
				name := fmt.Sprintf("b%d-%d", w, i%10)
				z.SetRoleBinding(&RoleBinding{Metadata: ObjectMeta{Namespace: "a", Name: name}, RoleRef: clusterRoleRef("r"),
					Subjects: []Subject{{Kind: UserKind, Name: name}, {Kind: GroupKind, Name: "g"}}})
				z.SetClusterRole(&ClusterRole{Metadata: ObjectMeta{Name: name}, Rules: []PolicyRule{r(s(""), s("list"), s("pods"))}})
				if i%3 == 0 {
					z.DeleteRoleBinding("a", name)
					z.DeleteClusterRole(name)
				}
			}
		}()
	}
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n; i++ {
				a := in("a", res("get", "", "pods", "", "x"))
				a.User = user(fmt.Sprintf("b0-%d", i%10), "g")
				if d, _, _ := z.Authorize(ctx, a); d != authz.Allow {
					errs <- fmt.Errorf("got %v; want Allow through the stable binding", d)
					return
				}
				_ = z.RulesFor(ctx, a.User, "a")
				_ = z.ConfirmNoEscalation(a.User, "a", []PolicyRule{r(s(""), s("get"), s("pods"))})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
