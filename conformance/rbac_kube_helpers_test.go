package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubectl/pkg/cmd/auth"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// rbacAnswer is a response, normalised for comparison: the status code,
// the Status of an error (its metadata left out), the names of a list's
// items or of a created object, and a review's status (a rules review's
// rules sorted).
type rbacAnswer struct {
	Code   int
	Status *metav1.Status
	Names  []string
	Review any
	// Managed are the answer's managedFields, their times left out;
	// Created tells whether it has a creationTimestamp.
	Managed []metav1.ManagedFieldsEntry
	Created bool
	// Spec is a review's spec as answered (some echo the request's,
	// some answer with an empty one).
	Spec any
}

// rbacDo sends one request to s as the holder of token ("" for none) and
// normalises the answer.
func rbacDo(t *testing.T, s rbacSide, token, method, path, body string, header http.Header) rbacAnswer {
	t.Helper()
	cfg := s.config(token)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(testContext(t), method, s.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s: %s %s: %v", s.name, method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := rbacAnswer{Code: resp.StatusCode}
	var obj struct {
		Kind     string            `json:"kind"`
		Metadata metav1.ObjectMeta `json:"metadata"`
		Items    []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
		Status json.RawMessage `json:"status"`
		Spec   any             `json:"spec"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		t.Fatalf("%s: %s %s: %d %q: %v", s.name, method, path, resp.StatusCode, b, err)
	}
	for _, m := range obj.Metadata.ManagedFields {
		m.Time = nil
		a.Managed = append(a.Managed, m)
	}
	a.Created = !obj.Metadata.CreationTimestamp.IsZero()
	if strings.HasSuffix(obj.Kind, "Review") {
		a.Spec = obj.Spec
	}
	switch {
	case obj.Kind == "Status":
		var st metav1.Status
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatal(err)
		}
		st.ListMeta = metav1.ListMeta{}
		a.Status = &st
	case obj.Kind == "SelfSubjectRulesReview":
		var st authzv1.SubjectRulesReviewStatus
		if err := json.Unmarshal(obj.Status, &st); err != nil {
			t.Fatal(err)
		}
		// The order of the rules is the order kube-apiserver's RBAC
		// authorizer visits the bindings in, its informer's list's, a Go
		// map's: sorted, as kubectl sorts them.
		sort.Slice(st.ResourceRules, func(i, j int) bool {
			return fmt.Sprint(st.ResourceRules[i]) < fmt.Sprint(st.ResourceRules[j])
		})
		sort.Slice(st.NonResourceRules, func(i, j int) bool {
			return fmt.Sprint(st.NonResourceRules[i]) < fmt.Sprint(st.NonResourceRules[j])
		})
		a.Review = st
	case obj.Kind == "TokenReview":
		var st authnv1.TokenReviewStatus
		if err := json.Unmarshal(obj.Status, &st); err != nil {
			t.Fatal(err)
		}
		a.Review = st
	case strings.HasSuffix(obj.Kind, "AccessReview"):
		var st authzv1.SubjectAccessReviewStatus
		if err := json.Unmarshal(obj.Status, &st); err != nil {
			t.Fatal(err)
		}
		a.Review = st
	case strings.HasSuffix(obj.Kind, "List"):
		a.Names = []string{}
		for _, it := range obj.Items {
			a.Names = append(a.Names, it.Metadata.Namespace+"/"+it.Metadata.Name)
		}
		sort.Strings(a.Names)
	default:
		a.Names = []string{obj.Kind + " " + obj.Metadata.Namespace + "/" + obj.Metadata.Name}
	}
	return a
}

// waitAllowed waits until s's authorizer allows token's holder spec (a
// SelfSubjectAccessReviewSpec): kube-apiserver's RBAC authorizer reads
// roles and bindings through informers, so a binding just made takes a
// moment to count.
func waitAllowed(t *testing.T, s rbacSide, token string, spec authzv1.SelfSubjectAccessReviewSpec) {
	t.Helper()
	c := kubernetes.NewForConfigOrDie(s.config(token))
	ctx := testContext(t)
	for {
		r, err := c.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authzv1.SelfSubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
		if err == nil && r.Status.Allowed {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %+v not allowed for %s after %s: %v", s.name, spec, token, waitTimeout, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// allowedBy is the binding an RBAC "allowed" reason names.
var allowedBy = regexp.MustCompile(`^RBAC: allowed by (ClusterRoleBinding|RoleBinding) "[^"]*" of (ClusterRole|Role) "[^"]*" to `)

// anyBinding leaves out which binding a review's reason names. When
// several bindings allow a request (the default system:discovery and
// system:public-info-viewer both grant get /healthz), kube-apiserver's
// RBAC authorizer names the first it meets in its informer's list, whose
// order is a Go map's: it changes from one kube-apiserver to the next.
func anyBinding(review any) any {
	st, ok := review.(authzv1.SubjectAccessReviewStatus)
	if !ok {
		return review
	}
	st.Reason = allowedBy.ReplaceAllString(st.Reason, `RBAC: allowed by ${1} (one of several) of ${2} (one of several) to `)
	return st
}

// kubectlResult is what a kubectl run printed, and its error.
type kubectlResult struct {
	Stdout, Stderr, Err string
	Code                int
}

// canI runs `kubectl auth can-i args` as kubectl's command does
// (k8s.io/kubectl/pkg/cmd/auth's NewCmdCanI: Complete, Validate,
// RunAccessCheck), but returns the exit code where kubectl calls os.Exit(1)
// for "no", which would end the test process.
func canI(t *testing.T, k *kubectl, args ...string) kubectlResult {
	t.Helper()
	var ns, as string
	var rest []string
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "-n":
			ns = args[i+1]
			i++
		case strings.HasPrefix(args[i], "--as="):
			as = strings.TrimPrefix(args[i], "--as=")
		default:
			rest = append(rest, args[i])
		}
	}
	kubectlMu.Lock()
	defer kubectlMu.Unlock()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &k.kubeconfig
	cache := filepath.Join(k.cacheDir, "can-i")
	flags.CacheDir = &cache
	if ns != "" {
		flags.Namespace = &ns
	}
	if as != "" {
		flags.Impersonate = &as
	}
	o := &auth.CanIOptions{IOStreams: streams}
	var r kubectlResult
	err := o.Complete(cmdutil.NewFactory(flags), rest)
	if err == nil {
		err = o.Validate()
	}
	if err == nil {
		var allowed bool
		allowed, err = o.RunAccessCheck()
		if err == nil && !allowed {
			r.Code = 1
		}
	}
	if err != nil {
		r.Err, r.Code = err.Error(), 1
	}
	r.Stdout, r.Stderr = out.String(), errOut.String()
	return r
}

// normaliseWhoami keeps the user of `kubectl auth whoami -o json`'s
// SelfSubjectReview.
func normaliseWhoami(t *testing.T, out string) string {
	t.Helper()
	var r authnv1.SelfSubjectReview
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("kubectl auth whoami -o json: %v\n%s", err, out)
	}
	b, err := json.Marshal(r.Status)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
