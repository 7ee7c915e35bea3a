package builtin_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/builtin"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/registry/authn"
	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/request"
	"github.com/kapi-dev/kapi/storage/memory"
)

// csrRegistry serves the built-in kinds to users named by the X-User
// header; only "approver" may approve, on signers example.com/*, and
// only "signer" may sign.
func csrRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	r, err := registry.New(registry.Options{
		Storage: memory.New(memory.Options{}),
		Authenticator: authn.Func(func(req *http.Request) (*request.User, bool, error) {
			return &request.User{Name: req.Header.Get("X-User"), UID: "uid-" + req.Header.Get("X-User"), Groups: []string{"system:authenticated"}}, true, nil
		}),
		Authorizer: authz.Func(func(_ context.Context, a authz.Attributes) (authz.Decision, string, error) {
			switch {
			case a.Resource != "signers":
				return authz.Allow, "", nil
			case a.Verb == "approve" && a.User.Name == "approver" && a.Name == "example.com/*",
				a.Verb == "sign" && a.User.Name == "signer" && a.Name == "example.com/s":
				return authz.Allow, "", nil
			}
			return authz.NoOpinion, "", nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := builtin.Register(r, builtin.Options{}); err != nil {
		t.Fatal(err)
	}
	return r
}

func doAs(t *testing.T, r *registry.Registry, user, method, path, ct, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequestWithContext(context.Background(), method, path, strings.NewReader(body))
	if ct == "" {
		ct = "application/json"
	}
	req.Header.Set("Content-Type", ct)
	req.Header.Set("X-User", user)
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatalf("%s %s: %d %s: %v", method, path, w.Code, w.Body, err)
	}
	return w.Code, m
}

// A CSR's life through the HTTP API: created by alice (her name in the
// spec), approved through /approval by a user allowed to approve for
// the signer's domain, its certificate written through /status by the
// signer, each endpoint keeping what it may not change.
func TestCSRApprovalAndSigning(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	req := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "alice"}}
	cder, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cder}))

	r := csrRegistry(t)
	const path = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
	approve := `{"status":{"conditions":[{"type":"Approved","status":"True","reason":"Test"}]}}`
	for _, step := range []struct {
		name, user, method, path, ct, body string
		code                               int
		checks                             map[string]any // dotted path → value (nil: absent)
	}{
		{"alice creates", "alice", "POST", path, "", `{"metadata":{"name":"c"},"spec":{"request":"` + req + `","signerName":"example.com/s","usages":["client auth"],"username":"root"}}`, 201,
			map[string]any{"spec.username": "alice", "spec.uid": "uid-alice", "status.conditions": nil}},
		{"alice may not approve", "alice", "PATCH", path + "/c/approval", "application/merge-patch+json", approve, 403,
			map[string]any{"message": `certificatesigningrequests.certificates.k8s.io "c" is forbidden: user not permitted to approve requests with signerName "example.com/s"`}},
		{"main resource keeps status and spec", "approver", "PATCH", path + "/c", "application/merge-patch+json", `{"metadata":{"labels":{"a":"b"}},"spec":{"signerName":"example.com/x"},` + approve[1:], 200,
			map[string]any{"metadata.labels.a": "b", "spec.signerName": "example.com/s", "status.conditions": nil}},
		{"approver approves", "approver", "PATCH", path + "/c/approval", "application/merge-patch+json", `{"metadata":{"labels":{"a":"c"}},"spec":{"signerName":"example.com/x"},"status":{"certificate":"` + cert + `","conditions":[{"type":"Approved","status":"True","reason":"Test"}]}}`, 200,
			map[string]any{"metadata.labels.a": "c", "spec.signerName": "example.com/s", "status.certificate": nil}},
		{"get approval", "alice", "GET", path + "/c/approval", "", "", 200, map[string]any{"metadata.name": "c"}},
		{"approver may not sign", "approver", "PATCH", path + "/c/status", "application/merge-patch+json", `{"status":{"certificate":"` + cert + `"}}`, 403, nil},
		{"signer signs", "signer", "PATCH", path + "/c/status", "application/merge-patch+json", `{"status":{"certificate":"` + cert + `"}}`, 200,
			map[string]any{"status.certificate": cert}},
		{"status may not add a denial", "signer", "PATCH", path + "/c/status", "application/json-patch+json", `[{"op":"add","path":"/status/conditions/-","value":{"type":"Denied","status":"True"}}]`, 422, nil},
	} {
		code, body := doAs(t, r, step.user, step.method, step.path, step.ct, step.body)
		if code != step.code {
			t.Fatalf("%s: %d %v; want %d", step.name, code, body, step.code)
		}
		for p, want := range step.checks {
			if got := at(body, p); !equalJSON(got, want) {
				t.Errorf("%s: %s = %v; want %v", step.name, p, got, want)
			}
		}
	}
	_, body := doAs(t, r, "alice", "GET", path+"/c", "", "")
	conds, _ := at(body, "status").(map[string]any)["conditions"].([]any)
	if len(conds) != 1 || at(conds[0].(map[string]any), "type") != "Approved" || at(conds[0].(map[string]any), "lastUpdateTime") == nil {
		t.Errorf("conditions %v; want the Approved one, stamped", conds)
	}
}
