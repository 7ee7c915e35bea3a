package authz

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kapi-dev/kapi/registry/internal/review"
)

// SubjectAccessReviewOptions configure SubjectAccessReview: kube's
// delegating authorizer (an aggregated API server's
// --authorization-kubeconfig).
type SubjectAccessReviewOptions struct {
	// URL is the main API server's, such as "https://10.0.0.1:6443".
	// Required.
	URL string
	// Client sends the reviews: its transport trusts the main server and
	// presents credentials allowed to create subjectaccessreviews (kube's
	// system:auth-delegator ClusterRole). Required.
	Client *http.Client
	// AllowTTL and DenyTTL are how long an allowed and a denied answer
	// are reused (default 10 s each, as kube's delegating authorizer);
	// negative caches nothing.
	AllowTTL, DenyTTL time.Duration
	// Timeout bounds one review (default 10 s).
	Timeout time.Duration
}

// ErrSubjectAccessReview is the error of a review that could not decide.
var ErrSubjectAccessReview = errors.New("authz: subject access review")

// SubjectAccessReview is an Authorizer that asks the main API server: it
// POSTs an authorization.k8s.io/v1 SubjectAccessReview of the request's
// attributes and user, as kube's delegating authorizer does:
//
//	alice lists configmaps in a  →  {"spec":{"user":"alice","groups":[…],
//	  "resourceAttributes":{"namespace":"a","verb":"list","version":"v1","resource":"configmaps"}}}
//	status.allowed → Allow; status.denied → Deny; else NoOpinion (with status.reason)
//
// Answers are cached by the review's spec for AllowTTL or DenyTTL; a
// review that fails returns the error (the request is refused) and is not
// cached.
func SubjectAccessReview(opts SubjectAccessReviewOptions) (Authorizer, error) {
	if opts.URL == "" || opts.Client == nil {
		return nil, errors.New("authz: SubjectAccessReviewOptions.URL and Client are required")
	}
	if opts.AllowTTL == 0 {
		opts.AllowTTL = 10 * time.Second
	}
	if opts.DenyTTL == 0 {
		opts.DenyTTL = 10 * time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	return &sar{opts: opts, url: strings.TrimSuffix(opts.URL, "/") + "/apis/authorization.k8s.io/v1/subjectaccessreviews"}, nil
}

type sar struct {
	opts  SubjectAccessReviewOptions
	url   string
	cache review.Cache[sarAnswer]
}

type sarAnswer struct {
	d      Decision
	reason string
}

type sarResource struct {
	Namespace   string `json:"namespace,omitempty"`
	Verb        string `json:"verb,omitempty"`
	Group       string `json:"group,omitempty"`
	Version     string `json:"version,omitempty"`
	Resource    string `json:"resource,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	Name        string `json:"name,omitempty"`
}

type sarNonResource struct {
	Path string `json:"path,omitempty"`
	Verb string `json:"verb,omitempty"`
}

type sarSpec struct {
	ResourceAttributes    *sarResource        `json:"resourceAttributes,omitempty"`
	NonResourceAttributes *sarNonResource     `json:"nonResourceAttributes,omitempty"`
	User                  string              `json:"user,omitempty"`
	Groups                []string            `json:"groups,omitempty"`
	Extra                 map[string][]string `json:"extra,omitempty"`
	UID                   string              `json:"uid,omitempty"`
}

func (s *sar) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	spec := sarSpec{}
	if a.User != nil {
		spec.User, spec.Groups, spec.Extra, spec.UID = a.User.Name, a.User.Groups, a.User.Extra, a.User.UID
	}
	if a.ResourceRequest {
		spec.ResourceAttributes = &sarResource{Namespace: a.Namespace, Verb: a.Verb, Group: a.APIGroup, Version: a.APIVersion,
			Resource: a.Resource, Subresource: a.Subresource, Name: a.Name}
	} else {
		spec.NonResourceAttributes = &sarNonResource{Path: a.Path, Verb: a.Verb}
	}
	kb, err := json.Marshal(spec)
	if err != nil {
		return NoOpinion, "", err
	}
	key := string(kb)
	if c, ok := s.cache.Get(key); ok {
		return c.d, c.reason, nil
	}
	var out struct {
		Status struct {
			Allowed, Denied bool
			Reason          string
			EvaluationError string
		}
	}
	body := map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}
	if err := review.Post(ctx, s.opts.Client, s.opts.Timeout, s.url, body, &out); err != nil {
		return NoOpinion, "", fmt.Errorf("%w: %w", ErrSubjectAccessReview, err)
	}
	ans := sarAnswer{d: NoOpinion, reason: out.Status.Reason}
	ttl := s.opts.DenyTTL
	switch {
	case out.Status.Allowed:
		ans.d, ttl = Allow, s.opts.AllowTTL
	case out.Status.Denied:
		ans.d = Deny
	}
	s.cache.Put(key, ans, ttl)
	return ans.d, ans.reason, nil
}
