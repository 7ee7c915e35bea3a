package builtin

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
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/registry/request"
)

// testPEMs are a signed PKCS#10 request, the same with its signature
// altered, and a self-signed certificate, base64 as their JSON holds
// them.
func testPEMs(t testing.TB) (req, badSig, cert string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	enc := func(typ string, b []byte) string {
		return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}))
	}
	bad := append([]byte(nil), der...)
	bad[len(bad)-3] ^= 0xff // inside the signature's S
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "alice"}, NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<31, 0)}
	c, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return enc("CERTIFICATE REQUEST", der), enc("CERTIFICATE REQUEST", bad), enc("CERTIFICATE", c)
}

func decodeObj(t testing.TB, s string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return m
}

// causes writes errs as "field: message" lines, for comparison.
func causes(errs fieldErrors) string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return strings.Join(out, "\n")
}

// kube's ValidateCertificateSigningRequestCreate, case by case (the
// messages are kube's: the corpus compares them with kube-apiserver's).
func TestValidateCSRCreate(t *testing.T) {
	req, badSig, cert := testPEMs(t)
	spec := func(fields string) map[string]any {
		return decodeObj(t, `{"metadata":{"name":"c"},"spec":{`+fields+`}}`)
	}
	good := `"request":"` + req + `","signerName":"example.com/s","usages":["client auth"]`
	for _, tt := range []struct {
		name, spec string
		want       string // lines of "field: message"; "" valid
	}{
		{"valid", good, ""},
		{"valid with expiration", good + `,"expirationSeconds":600`, ""},
		{"no request", `"signerName":"example.com/s","usages":["client auth"]`, "spec.request: Invalid value: null: PEM block type must be CERTIFICATE REQUEST"},
		{"not pem", `"request":"aGVsbG8=","signerName":"example.com/s","usages":["client auth"]`, `spec.request: Invalid value: "aGVsbG8=": PEM block type must be CERTIFICATE REQUEST`},
		{"certificate as request", `"request":"` + cert + `","signerName":"example.com/s","usages":["client auth"]`, `spec.request: Invalid value: "` + cert + `": PEM block type must be CERTIFICATE REQUEST`},
		{"bad signature", `"request":"` + badSig + `","signerName":"example.com/s","usages":["client auth"]`, `spec.request: Invalid value: "` + badSig + `": x509: ECDSA verification failure`},
		{"no usages", `"request":"` + req + `","signerName":"example.com/s"`, "spec.usages: Required value"},
		{"unknown usage", `"request":"` + req + `","signerName":"example.com/s","usages":["nope"]`, `spec.usages[0]: Unsupported value: "nope": ` + supported(csrUsages)},
		{"duplicate usage", `"request":"` + req + `","signerName":"example.com/s","usages":["signing","signing"]`, `spec.usages[1]: Duplicate value: "signing"`},
		{"no signer", `"request":"` + req + `","usages":["client auth"]`, "spec.signerName: Required value"},
		{"signer without path", `"request":"` + req + `","signerName":"example.com","usages":["client auth"]`, `spec.signerName: Invalid value: "example.com": must be a fully qualified domain and path of the form 'example.com/signer-name'`},
		{"signer one label", `"request":"` + req + `","signerName":"example/s","usages":["client auth"]`, `spec.signerName: Invalid value: "example": should be a domain with at least two segments separated by dots`},
		{"legacy signer", `"request":"` + req + `","signerName":"kubernetes.io/legacy-unknown","usages":["client auth"]`, `spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version`},
		{"short expiration", good + `,"expirationSeconds":599`, "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := spec(tt.spec)
			if got := causes(validateCSR(o, nil, csrOptionsFor(o, nil))); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// What each endpoint's update may change (kube's
// validateCertificateSigningRequestUpdate with the endpoint's options).
func TestValidateCSRUpdate(t *testing.T) {
	req, _, cert := testPEMs(t)
	obj := func(status string) map[string]any {
		return decodeObj(t, `{"metadata":{"name":"c"},"spec":{"request":"`+req+`","signerName":"example.com/s","usages":["client auth"]},"status":`+status+`}`)
	}
	approved := `{"conditions":[{"type":"Approved","status":"True"}]}`
	for _, tt := range []struct {
		name, sub, old, new string
		want                string
	}{
		{"approval approves", "approval", `{}`, approved, ""},
		{"approval denies", "approval", `{}`, `{"conditions":[{"type":"Denied","status":"True"}]}`, ""},
		{"approval both", "approval", `{}`, `{"conditions":[{"type":"Approved","status":"True"},{"type":"Denied","status":"True"}]}`,
			"status.conditions: Invalid value: \"{conditions[{\\\"type\\\": \\\"Approved\\\"}], conditions[{\\\"type\\\": \\\"Denied\\\"}]}\": must specify at most one of: `conditions[{\"type\": \"Approved\"}]`, `conditions[{\"type\": \"Denied\"}]`"},
		{"both kept when stored so", "approval", `{"conditions":[{"type":"Approved","status":"True"},{"type":"Denied","status":"True"}]}`, `{"conditions":[{"type":"Approved","status":"True"},{"type":"Denied","status":"True"}]}`, ""},
		{"approval removes", "approval", approved, `{}`, `status.conditions: Forbidden: updates may not remove a condition of type "Approved"`},
		{"approved false", "approval", `{}`, `{"conditions":[{"type":"Approved","status":"False"}]}`, `status.conditions[0].status: Unsupported value: "False": supported values: "True"`},
		{"status adds approved", "status", `{}`, approved, `status.conditions: Forbidden: updates may not add a condition of type "Approved"`},
		{"status sets certificate", "status", approved, `{"conditions":[{"type":"Approved","status":"True"}],"certificate":"` + cert + `"}`, ""},
		{"status bad certificate", "status", approved, `{"conditions":[{"type":"Approved","status":"True"}],"certificate":"aGVsbG8="}`, "status.certificate: Invalid value: \"<certificate data>\": must contain at least one CERTIFICATE PEM block"},
		{"status changes certificate", "status", `{"certificate":"` + cert + `"}`, `{"certificate":"` + base64.StdEncoding.EncodeToString(append(decodeBytes(cert), decodeBytes(cert)...)) + `"}`, "status.certificate: Forbidden: updates may not modify existing certificate content"},
		{"approval sets certificate", "approval", `{}`, `{"certificate":"` + cert + `"}`, "status.certificate: Forbidden: updates may not set certificate content"},
		{"other condition", "status", `{}`, `{"conditions":[{"type":"Ready","status":"Maybe"}]}`, `status.conditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"`},
		{"duplicate type", "status", `{}`, `{"conditions":[{"type":"Ready","status":"True"},{"type":"Ready","status":"True"}]}`, `status.conditions[1].type: Duplicate value: "Ready"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := causes(validateCSRUpdate(obj(tt.new), obj(tt.old), tt.sub)); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// The strategy's hooks: the requestor written on create, and what each
// endpoint's update keeps of the stored object.
func TestCSRStrategy(t *testing.T) {
	user := &request.User{Name: "alice", UID: "u1", Groups: []string{"dev", "system:authenticated"}, Extra: map[string][]string{"scopes": {"a", "b"}}}
	ctx := request.WithUser(context.Background(), user)
	t.Run("create", func(t *testing.T) {
		o := decodeObj(t, `{"spec":{"username":"root","uid":"0","groups":["system:masters"],"signerName":"example.com/s"},"status":{"certificate":"eA=="}}`)
		if err := prepareCSRCreate(ctx, o); err != nil {
			t.Fatal(err)
		}
		want := `{"spec":{"extra":{"scopes":["a","b"]},"groups":["dev","system:authenticated"],"signerName":"example.com/s","uid":"u1","username":"alice"},"status":{}}`
		if got, _ := json.Marshal(o); string(got) != want {
			t.Errorf("got %s; want %s", got, want)
		}
	})
	const stored = `{"spec":{"signerName":"example.com/s"},"status":{"certificate":"eA==","conditions":[{"type":"Approved","status":"True","reason":"R","lastUpdateTime":"2020-01-01T00:00:00Z","lastTransitionTime":"2020-01-01T00:00:00Z"}]}}`
	for _, tt := range []struct {
		name, sub, sent, want string
	}{
		{"update keeps spec", "", `{"spec":{"signerName":"example.com/other"},"status":{}}`,
			`{"spec":{"signerName":"example.com/s"},"status":{}}`}, // the registry keeps the status
		{"approval keeps certificate, stamps new conditions", "approval",
			`{"spec":{"signerName":"example.com/s"},"status":{"conditions":[{"type":"Approved","status":"True","reason":"R"},{"type":"Failed","status":"True"}]}}`,
			`{"spec":{"signerName":"example.com/s"},"status":{"certificate":"eA==","conditions":[{"lastTransitionTime":"2020-01-01T00:00:00Z","lastUpdateTime":"NOW","reason":"R","status":"True","type":"Approved"},{"lastTransitionTime":"NOW","lastUpdateTime":"NOW","status":"True","type":"Failed"}]}}`},
		{"status keeps approval", "status",
			`{"spec":{"signerName":"example.com/s"},"status":{"certificate":"eQ==","conditions":[{"type":"Approved","status":"True","reason":"Changed"}]}}`,
			`{"spec":{"signerName":"example.com/s"},"status":{"certificate":"eQ==","conditions":[{"lastTransitionTime":"2020-01-01T00:00:00Z","lastUpdateTime":"2020-01-01T00:00:00Z","reason":"R","status":"True","type":"Approved"}]}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := request.WithInfo(ctx, &request.Info{Subresource: tt.sub})
			o := decodeObj(t, tt.sent)
			if err := prepareCSRUpdate(ctx, o, decodeObj(t, stored)); err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(o)
			if want := strings.ReplaceAll(tt.want, "NOW", now(ctx)); string(got) != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

// kubectl get csr's CONDITION and REQUESTEDDURATION.
func TestCSRColumns(t *testing.T) {
	for _, tt := range []struct {
		obj, condition, duration string
	}{
		{`{}`, "Pending", "<none>"},
		{`{"spec":{"expirationSeconds":3600},"status":{"conditions":[{"type":"Approved"}]}}`, "Approved", "60m"},
		{`{"status":{"conditions":[{"type":"Approved"},{"type":"Denied"},{"type":"Failed"}]}}`, "Denied,Failed", "<none>"},
		{`{"spec":{"expirationSeconds":86400},"status":{"conditions":[{"type":"Approved"}],"certificate":"eA=="}}`, "Approved,Issued", "24h"},
	} {
		o := decodeObj(t, tt.obj)
		if got := csrCondition(o); got != tt.condition {
			t.Errorf("%s: condition %q; want %q", tt.obj, got, tt.condition)
		}
		if got := csrRequestedDuration(o); got != tt.duration {
			t.Errorf("%s: requested duration %q; want %q", tt.obj, got, tt.duration)
		}
	}
}

// The PEM and signer-name checks take any input without panicking; a
// request they accept parses.
func FuzzCSRChecks(f *testing.F) {
	req, badSig, cert := testPEMs(f)
	for _, s := range []string{req, badSig, cert, "aGVsbG8=", ""} {
		f.Add(string(decodeBytes(s)), "example.com/s")
	}
	f.Add("", "a.b/c.d")
	f.Add("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n", "x/y/z")
	f.Fuzz(func(t *testing.T, data, signer string) {
		b64 := base64.StdEncoding.EncodeToString([]byte(data))
		if checkCSRRequest(b64) == nil {
			if _, err := parseCSR(b64); err != nil {
				t.Errorf("accepted a request that does not parse: %v", err)
			}
		}
		_ = checkCertificate(b64)
		for _, e := range validateSignerName("spec.signerName", signer) {
			if e.Field != "spec.signerName" {
				t.Errorf("error on %s; want spec.signerName", e.Field)
			}
		}
	})
}
