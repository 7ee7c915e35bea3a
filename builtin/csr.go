package builtin

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/request"
)

// certificates.k8s.io/v1 CertificateSigningRequests, as kube's
// pkg/registry/certificates/certificates strategies, its
// pkg/apis/certificates/validation and the CertificateApproval,
// CertificateSigning and CertificateSubjectRestriction admission plugins
// have them. Three endpoints write a CSR, each a part of it:
//
//	POST  csrs                   spec; spec.username, uid, groups and extra
//	                             are the requesting user's; status empty
//	PUT   csrs/NAME              metadata alone (spec and status kept)
//	PUT   csrs/NAME/approval     status.conditions (the rest of status kept);
//	                             needs "approve" on signers/<spec.signerName>
//	PUT   csrs/NAME/status       status, but its Approved and Denied
//	                             conditions are kept; needs "sign" when the
//	                             certificate or the conditions change
//
// (/approval and /status write metadata too: kube's CSR strategies do
// not reset it.)
//
// An approval stamps lastUpdateTime on conditions without one, and
// lastTransitionTime from the stored condition of the same type and
// status, or now:
//
//	stored  [{type: Approved, status: True, lastTransitionTime: T0}]
//	sent    [{type: Approved, status: True}, {type: Failed, status: True}]
//	stored  [{…, lastUpdateTime: now, lastTransitionTime: T0},
//	         {type: Failed, …, lastUpdateTime: now, lastTransitionTime: now}]

// csrPlural names the kind in messages (kube's group resource).
const csrPlural = "certificatesigningrequests"

// csrStrategy sets the CSR strategy on res; reg (nil: allow all) decides
// the approve and sign checks.
func csrStrategy(res *registry.Resource, reg *registry.Registry) {
	res.StatusSubresources = []string{"approval"}
	s := &res.Strategy
	// kube's GetResetFields of the three strategies.
	s.ResetFields = map[string][]string{
		"":         {"spec", "status"},
		"status":   {"spec", "status.conditions"},
		"approval": {"spec", "status.certificate"},
	}
	s.StatusWritesMetadata = true
	s.ValidateName = func(context.Context, string) []string { return nil } // "We don't care what you call your certificate requests."
	s.PrepareForCreate = prepareCSRCreate
	s.PrepareForUpdate = prepareCSRUpdate
	s.ValidateCreate = func(_ context.Context, o registry.Object) []registry.FieldError {
		return validateCSR(obj(o), nil, csrOptionsFor(obj(o), nil))
	}
	s.ValidateUpdate = func(ctx context.Context, o, old registry.Object) []registry.FieldError {
		return validateCSRUpdate(obj(o), obj(old), requestSubresource(ctx))
	}
	s.Admit = func(ctx context.Context, o, old registry.Object) error { return admitCSR(ctx, reg, obj(o), obj(old)) }
}

// requestSubresource is the subresource the request writes ("" the object).
func requestSubresource(ctx context.Context) string {
	if info, ok := request.InfoFrom(ctx); ok {
		return info.Subresource
	}
	return ""
}

// prepareCSRCreate writes who asks into the spec and clears the status:
// nobody creates an approved request.
func prepareCSRCreate(ctx context.Context, o registry.Object) error {
	spec := ensureMap(obj(o), "spec")
	for _, k := range []string{"username", "uid", "groups", "extra"} {
		delete(spec, k)
	}
	if u, ok := request.UserFrom(ctx); ok && u != nil {
		if u.Name != "" {
			spec["username"] = u.Name
		}
		if u.UID != "" {
			spec["uid"] = u.UID
		}
		if len(u.Groups) > 0 {
			groups := make([]any, len(u.Groups))
			for i, g := range u.Groups {
				groups[i] = g
			}
			spec["groups"] = groups
		}
		if len(u.Extra) > 0 {
			extra := make(map[string]any, len(u.Extra))
			for k, vs := range u.Extra {
				l := make([]any, len(vs))
				for i, v := range vs {
					l[i] = v
				}
				extra[k] = l
			}
			spec["extra"] = extra
		}
	}
	o["status"] = map[string]any{}
	return nil
}

// prepareCSRUpdate keeps what each endpoint may not write. The registry
// has kept the stored status on the main resource, and the stored spec
// and metadata on /status and /approval.
func prepareCSRUpdate(ctx context.Context, o, old registry.Object) error {
	m, prev := obj(o), obj(old)
	switch requestSubresource(ctx) {
	case "":
		setOrDelete(m, "spec", clone(prev["spec"]))
	case "status":
		st := ensureMap(m, "status")
		for _, t := range []string{"Approved", "Denied"} {
			preserveConditions(st, getMap(prev, "status"), t)
		}
		stampConditions(ctx, st, getMap(prev, "status"))
	case "approval":
		st := ensureMap(m, "status")
		stampConditions(ctx, st, getMap(prev, "status"))
		next, _ := clone(prev["status"]).(map[string]any)
		if next == nil {
			next = map[string]any{}
		}
		setOrDelete(next, "conditions", st["conditions"])
		m["status"] = next
	}
	return nil
}

// conditionIndices are the indices of st's conditions of type t.
func conditionIndices(st map[string]any, t string) []int {
	var out []int
	for i, c := range getList(st, "conditions") {
		if getString(c, "type") == t {
			out = append(out, i)
		}
	}
	return out
}

// preserveConditions puts old's conditions of type t in place of st's
// when both have as many (a status write may not change them; adding
// or removing one is refused by validation).
func preserveConditions(st, old map[string]any, t string) {
	oldIdx, newIdx := conditionIndices(old, t), conditionIndices(st, t)
	if len(oldIdx) != len(newIdx) {
		return
	}
	conds, oldConds := getList(st, "conditions"), getList(old, "conditions")
	for i, j := range oldIdx {
		conds[newIdx[i]] = clone(oldConds[j])
	}
}

// stampConditions is kube's populateConditionTimestamps.
func stampConditions(ctx context.Context, st, old map[string]any) {
	t := now(ctx)
	for _, c := range maps(st, "conditions") {
		if getString(c, "lastUpdateTime") == "" {
			c["lastUpdateTime"] = t
		}
		if getString(c, "lastTransitionTime") != "" {
			continue
		}
		c["lastTransitionTime"] = t
		for _, oc := range maps(old, "conditions") {
			if getString(oc, "type") == getString(c, "type") && getString(oc, "status") == getString(c, "status") && getString(oc, "lastTransitionTime") != "" {
				c["lastTransitionTime"] = oc["lastTransitionTime"]
				break
			}
		}
	}
}

// csrOptions are kube's certificateValidationOptions: what an endpoint
// may set, and what is tolerated because the stored object has it.
type csrOptions struct {
	setApproval, setCertificate                          bool
	legacySigner, duplicateTypes, emptyType              bool
	arbitraryCertificate, unknownUsages, duplicateUsages bool
}

const legacyUnknownSigner = "kubernetes.io/legacy-unknown"

// csrOptionsFor is kube's getValidationOptions (old nil on create).
func csrOptionsFor(o, old map[string]any) csrOptions {
	var opts csrOptions
	if old == nil {
		return opts
	}
	st := getMap(old, "status")
	opts.legacySigner = getString(old, "spec", "signerName") == legacyUnknownSigner
	seen := map[string]bool{}
	for _, c := range maps(st, "conditions") {
		t := getString(c, "type")
		opts.duplicateTypes = opts.duplicateTypes || seen[t]
		opts.emptyType = opts.emptyType || t == ""
		seen[t] = true
	}
	oldCert := getString(st, "certificate")
	opts.arbitraryCertificate = getString(o, "status", "certificate") == oldCert || checkCertificate(oldCert) != nil
	usages := map[string]bool{}
	for _, u := range getList(old, "spec", "usages") {
		s, _ := u.(string)
		opts.unknownUsages = opts.unknownUsages || !slices.Contains(csrUsages, s)
		opts.duplicateUsages = opts.duplicateUsages || usages[s]
		usages[s] = true
	}
	return opts
}

// csrUsages are the key usages kube knows, sorted (its NotSupported list).
var csrUsages = []string{
	"any", "cert sign", "client auth", "code signing", "content commitment", "crl sign",
	"data encipherment", "decipher only", "digital signature", "email protection", "encipher only",
	"ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", "key encipherment",
	"microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", "timestamping",
}

// validateCSR is kube's validateCertificateSigningRequest beyond
// metadata (the registry's).
func validateCSR(o, old map[string]any, opts csrOptions) fieldErrors {
	var errs fieldErrors
	spec := getMap(o, "spec")
	req := getString(spec, "request")
	if err := checkCSRRequest(req); err != nil {
		var v any // kube prints a nil []byte as null
		if get(spec, "request") != nil {
			v = req
		}
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec.request", Value: v, Detail: err.Error()})
	}
	usages := getList(spec, "usages")
	if len(usages) == 0 {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "spec.usages"})
	}
	if !opts.unknownUsages {
		for i, u := range usages {
			if s, _ := u.(string); !slices.Contains(csrUsages, s) {
				errs = append(errs, registry.FieldError{Type: validation.TypeNotSupported, Field: fmt.Sprintf("spec.usages[%d]", i), Value: u, Detail: supported(csrUsages)})
			}
		}
	}
	if !opts.duplicateUsages {
		seen := map[any]bool{}
		for i, u := range usages {
			if seen[u] {
				errs = append(errs, registry.FieldError{Type: validation.TypeDuplicate, Field: fmt.Sprintf("spec.usages[%d]", i), Value: u})
			}
			seen[u] = true
		}
	}
	signer := getString(spec, "signerName")
	if !opts.legacySigner && signer == legacyUnknownSigner {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec.signerName", Value: signer, Detail: "the legacy signerName is not allowed via this API version"})
	} else {
		errs = append(errs, validateSignerName("spec.signerName", signer)...)
	}
	if v := get(spec, "expirationSeconds"); v != nil && intAt(spec, "expirationSeconds") < 600 {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec.expirationSeconds", Value: intAt(spec, "expirationSeconds"), Detail: "may not specify a duration less than 600 seconds (10 minutes)"})
	}
	errs = append(errs, validateCSRConditions(getMap(o, "status"), opts)...)
	errs = append(errs, approvedOrDenied(getMap(o, "status"), old)...)
	if !opts.arbitraryCertificate {
		if err := checkCertificate(getString(o, "status", "certificate")); err != nil {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status.certificate", Value: "<certificate data>", Detail: err.Error()})
		}
	}
	return errs
}

// approvedOrDenied is kube's declarative zeroOrOneOf rule of a CSR's
// conditions (which replaces its hand-written "Approved and Denied
// conditions are mutually exclusive"): not both an Approved and a Denied
// condition, checked when the status changed which of them it has
// (always on create).
func approvedOrDenied(st, old map[string]any) fieldErrors {
	approved, denied := len(conditionIndices(st, "Approved")) > 0, len(conditionIndices(st, "Denied")) > 0
	if !approved || !denied {
		return nil
	}
	if old != nil {
		oldSt := getMap(old, "status")
		if equal(st, oldSt) || len(conditionIndices(oldSt, "Approved")) > 0 && len(conditionIndices(oldSt, "Denied")) > 0 {
			return nil
		}
	}
	return fieldErrors{{Type: validation.TypeInvalid, Field: "status.conditions",
		Value:  `{conditions[{"type": "Approved"}], conditions[{"type": "Denied"}]}`,
		Detail: "must specify at most one of: `conditions[{\"type\": \"Approved\"}]`, `conditions[{\"type\": \"Denied\"}]`"}}
}

func supported(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = fmt.Sprintf("%q", v)
	}
	return "supported values: " + strings.Join(q, ", ")
}

// validateCSRConditions is kube's validateConditions.
func validateCSRConditions(st map[string]any, opts csrOptions) fieldErrors {
	var errs fieldErrors
	seen := map[string]bool{}
	for i, c := range maps(st, "conditions") {
		path := fmt.Sprintf("status.conditions[%d]", i)
		t, s := getString(c, "type"), getString(c, "status")
		if !opts.emptyType && t == "" {
			errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path + ".type"})
		}
		allowed := []string{"False", "True", "Unknown"}
		if t == "Approved" || t == "Denied" || t == "Failed" {
			allowed = []string{"True"}
		}
		switch {
		case s == "":
			errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path + ".status"})
		case !slices.Contains(allowed, s):
			errs = append(errs, registry.FieldError{Type: validation.TypeNotSupported, Field: path + ".status", Value: s, Detail: supported(allowed)})
		}
		if !opts.duplicateTypes {
			if seen[t] {
				errs = append(errs, registry.FieldError{Type: validation.TypeDuplicate, Field: path + ".type", Value: t})
			}
			seen[t] = true
		}
	}
	return errs
}

// validateCSRUpdate is kube's validateCertificateSigningRequestUpdate
// for the endpoint sub ("", "status" or "approval").
func validateCSRUpdate(o, old map[string]any, sub string) fieldErrors {
	opts := csrOptionsFor(o, old)
	opts.setCertificate = sub == "status"
	opts.setApproval = sub == "approval"
	errs := validateCSR(o, old, opts)
	st, oldSt := getMap(o, "status"), getMap(old, "status")
	for _, t := range []string{"Approved", "Denied", "Failed"} {
		if len(conditionIndices(st, t)) < len(conditionIndices(oldSt, t)) {
			errs = append(errs, registry.FieldError{Type: validation.TypeForbidden, Field: "status.conditions", Detail: fmt.Sprintf("updates may not remove a condition of type %q", t)})
		}
	}
	if !opts.setApproval {
		for _, t := range []string{"Approved", "Denied"} {
			n, on := len(conditionIndices(st, t)), len(conditionIndices(oldSt, t))
			switch {
			case n > on:
				errs = append(errs, registry.FieldError{Type: validation.TypeForbidden, Field: "status.conditions", Detail: fmt.Sprintf("updates may not add a condition of type %q", t)})
			case n == on && !sameConditions(st, oldSt, t):
				// Unreachable through kube's endpoints (the status
				// strategy keeps these conditions, the main one the
				// whole status); kube's message ends with a diff.
				errs = append(errs, registry.FieldError{Type: validation.TypeForbidden, Field: "status.conditions", Detail: fmt.Sprintf("updates may not modify a condition of type %q", t)})
			}
		}
	}
	if cert, oldCert := getString(st, "certificate"), getString(oldSt, "certificate"); cert != oldCert {
		switch {
		case !opts.setCertificate:
			errs = append(errs, registry.FieldError{Type: validation.TypeForbidden, Field: "status.certificate", Detail: "updates may not set certificate content"})
		case oldCert != "":
			errs = append(errs, registry.FieldError{Type: validation.TypeForbidden, Field: "status.certificate", Detail: "updates may not modify existing certificate content"})
		}
	}
	return errs
}

func sameConditions(st, old map[string]any, t string) bool {
	a, b := conditionIndices(st, t), conditionIndices(old, t)
	for i := range a {
		if !equal(getList(st, "conditions")[a[i]], getList(old, "conditions")[b[i]]) {
			return false
		}
	}
	return true
}

// decodeBytes is a []byte field's JSON (base64) as bytes.
func decodeBytes(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil // the registry's decoding refused it already
	}
	return b
}

// parseCSR is kube's certificates.ParseCSR of spec.request.
func parseCSR(req string) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(decodeBytes(req))
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}

// checkCSRRequest is kube's validateCSR: a PEM PKCS#10 request whose
// signature holds.
func checkCSRRequest(req string) error {
	csr, err := parseCSR(req)
	if err != nil {
		return err
	}
	return csr.CheckSignature()
}

// checkCertificate is kube's validateCertificate of status.certificate:
// empty, or CERTIFICATE PEM blocks without headers, each of certificates.
func checkCertificate(cert string) error {
	data := decodeBytes(cert)
	if len(data) == 0 {
		return nil
	}
	blocks := 0
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", block.Type)
		}
		if len(block.Headers) != 0 {
			return errors.New("no PEM block headers are permitted")
		}
		blocks++
		certs, err := x509.ParseCertificates(block.Bytes)
		if err != nil {
			return err
		}
		if len(certs) == 0 {
			return errors.New("found CERTIFICATE PEM block containing 0 certificates")
		}
		data = rest
	}
	if blocks == 0 {
		return errors.New("must contain at least one CERTIFICATE PEM block")
	}
	return nil
}

// validateSignerName is kube's ValidateSignerName: DOMAIN/PATH, the
// domain of DNS labels with at least one dot, the path of DNS
// subdomains separated by dots, 571 characters at most.
func validateSignerName(path, name string) fieldErrors {
	if name == "" {
		return fieldErrors{{Type: validation.TypeRequired, Field: path}}
	}
	segments := strings.Split(name, "/")
	if len(segments) != 2 {
		return fieldErrors{{Type: validation.TypeInvalid, Field: path, Value: name, Detail: "must be a fully qualified domain and path of the form 'example.com/signer-name'"}}
	}
	var errs fieldErrors
	tooLong := func(n int) registry.FieldError {
		return registry.FieldError{Type: validation.TypeTooLong, Field: path, Detail: fmt.Sprintf("may not be more than %d bytes", n)}
	}
	if len(segments[0]) > validation.DNS1123SubdomainMaxLength {
		errs = append(errs, tooLong(validation.DNS1123SubdomainMaxLength))
	}
	labels := strings.Split(segments[0], ".")
	for _, l := range labels {
		if msgs := validation.IsDNS1123Label(l); len(msgs) > 0 {
			for _, msg := range msgs {
				errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path, Value: segments[0], Detail: fmt.Sprintf("validating label %q: %s", l, msg)})
			}
			break
		}
	}
	if len(labels) < 2 {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path, Value: segments[0], Detail: "should be a domain with at least two segments separated by dots"})
	}
	for _, l := range strings.Split(segments[1], ".") {
		if msgs := validation.IsDNS1123Subdomain(l); len(msgs) > 0 {
			for _, msg := range msgs {
				errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path, Value: segments[1], Detail: fmt.Sprintf("validating label %q: %s", l, msg)})
			}
			break
		}
	}
	if maxLen := validation.DNS1123SubdomainMaxLength*2 + validation.DNS1123LabelMaxLength + 2; len(name) > maxLen {
		errs = append(errs, tooLong(maxLen))
	}
	return errs
}

// admitCSR is what kube's certificate admission plugins check of a valid
// write: CertificateSubjectRestriction on create, CertificateApproval on
// /approval, CertificateSigning on /status.
func admitCSR(ctx context.Context, reg *registry.Registry, o, old map[string]any) error {
	name := getString(o, "metadata", "name")
	switch sub := requestSubresource(ctx); {
	case old == nil:
		if getString(o, "spec", "signerName") != "kubernetes.io/kube-apiserver-client" {
			return nil
		}
		csr, err := parseCSR(getString(o, "spec", "request"))
		if err != nil {
			return csrForbidden(name, "failed to parse CSR: "+err.Error())
		}
		if slices.Contains(csr.Subject.Organization, "system:masters") {
			return csrForbidden(name, "use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed")
		}
	case sub == "approval":
		signer := getString(old, "spec", "signerName")
		if !authorizedForSigner(ctx, reg, "approve", signer) {
			return csrForbidden(name, fmt.Sprintf("user not permitted to approve requests with signerName %q", signer))
		}
	case sub == "status":
		if equal(get(o, "status", "certificate"), get(old, "status", "certificate")) && equal(get(o, "status", "conditions"), get(old, "status", "conditions")) {
			return nil
		}
		signer := getString(old, "spec", "signerName")
		if !authorizedForSigner(ctx, reg, "sign", signer) {
			return csrForbidden(name, fmt.Sprintf("user not permitted to sign requests with signerName %q", signer))
		}
	}
	return nil
}

// authorizedForSigner is kube's IsAuthorizedForSignerName: verb on
// certificates.k8s.io signers named signer, or DOMAIN/* of it.
func authorizedForSigner(ctx context.Context, reg *registry.Registry, verb, signer string) bool {
	if reg == nil {
		return true
	}
	u, _ := request.UserFrom(ctx)
	domain, _, _ := strings.Cut(signer, "/")
	for _, name := range []string{signer, domain + "/*"} {
		a := authz.Attributes{User: u, ResourceRequest: true, Verb: verb, APIGroup: "certificates.k8s.io", APIVersion: "*", Resource: "signers", Name: name}
		if d, _, err := reg.Authorize(ctx, a); err == nil && d == authz.Allow {
			return true
		}
	}
	return false
}

// csrForbidden is kube's admission.NewForbidden of a CSR.
func csrForbidden(name, msg string) error {
	se := statusError(403, "Forbidden", fmt.Sprintf("%s.certificates.k8s.io %q is forbidden: %s", csrPlural, name, msg))
	se.Status.Details = &registry.StatusDetails{Name: name, Group: "certificates.k8s.io", Kind: csrPlural}
	return se
}

// csrCondition is kubectl get csr's CONDITION: Denied, Approved or
// Pending, then ",Failed" and ",Issued" as they apply.
func csrCondition(o map[string]any) any {
	st := getMap(o, "status")
	has := func(t string) bool { return len(conditionIndices(st, t)) > 0 }
	out := "Pending"
	switch {
	case has("Denied"):
		out = "Denied"
	case has("Approved"):
		out = "Approved"
	}
	if has("Failed") {
		out += ",Failed"
	}
	if getString(st, "certificate") != "" {
		out += ",Issued"
	}
	return out
}

// csrRequestedDuration is REQUESTEDDURATION: spec.expirationSeconds as a
// human duration, or <none>.
func csrRequestedDuration(o map[string]any) any {
	if get(o, "spec", "expirationSeconds") == nil {
		return "<none>"
	}
	return humanDuration(time.Duration(intAt(o, "spec", "expirationSeconds")) * time.Second)
}
