package registry

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/kapi-dev/kapi/registry/admission/webhook"
)

// Webhook conversion: a CRD with spec.conversion.strategy Webhook has its
// objects converted by an HTTPS endpoint that answers
// apiextensions.k8s.io/v1 ConversionReviews, as controller-runtime's
// conversion webhook does. One review carries every object of a read (a
// list's items in one request), as kube's converter sends them.
//
//	POST https://webhook.example/convert  (caBundle's CA trusted)
//	{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview",
//	 "request":{"uid":"…","desiredAPIVersion":"stable.example.com/v2","objects":[…]}}
//	→ {"response":{"uid":"…","convertedObjects":[…],"result":{"status":"Success"}}}

// errInvalidCABundle: a CRD's conversion webhook caBundle holds no PEM
// certificate (kube then leaves the CRD not Established, InvalidCABundle).
var errInvalidCABundle = errors.New("registry: the conversion webhook CABundle is invalid")

// conversionWebhookTimeout is kube's: a CRD cannot choose its own.
const conversionWebhookTimeout = 30 * time.Second

// conversionWebhook is a CRD's webhook client config, ready to call.
type conversionWebhook struct {
	url    string
	client *http.Client
}

// newConversionWebhook builds the converter of a CRD's webhook config.
func (r *Registry) newConversionWebhook(cc *webhookClientConfig) (ConvertFunc, error) {
	var u string
	switch {
	case cc == nil:
		return nil, errors.New("no webhook client config")
	case cc.URL != nil:
		u = *cc.URL
	case cc.Service != nil:
		port := int32(443)
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		var base *url.URL
		if resolve := r.opts.ResolveWebhookService; resolve != nil {
			var err error
			if base, err = resolve(context.Background(), webhook.ServiceReference{Namespace: cc.Service.Namespace, Name: cc.Service.Name, Path: cc.Service.Path, Port: &port}); err != nil {
				return nil, err
			}
			if c := *base; cc.Service.Path != nil && c.Path == "" { // as admission webhooks' (webhook/call.go)
				c.Path = *cc.Service.Path
				base = &c
			}
		} else {
			base = &url.URL{Scheme: "https", Host: cc.Service.Name + "." + cc.Service.Namespace + ".svc:" + strconv.Itoa(int(port))}
			if cc.Service.Path != nil {
				base = base.JoinPath(*cc.Service.Path)
			}
		}
		u = base.String()
	}
	client, err := webhook.NewClient(cc.CABundle)
	if err != nil {
		return nil, errInvalidCABundle
	}
	client.Timeout = conversionWebhookTimeout
	w := &conversionWebhook{url: u, client: client}
	return w.convert, nil
}

type conversionReview struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Request    *conversionRequest  `json:"request,omitempty"`
	Response   *conversionResponse `json:"response,omitempty"`
}

type conversionRequest struct {
	UID               string   `json:"uid"`
	DesiredAPIVersion string   `json:"desiredAPIVersion"`
	Objects           []Object `json:"objects"`
}

type conversionResponse struct {
	UID              string   `json:"uid"`
	ConvertedObjects []Object `json:"convertedObjects"`
	Result           struct {
		Status  string `json:"status"`
		Message string `json:"message"`
	} `json:"result"`
}

// convert sends one ConversionReview and reads its answer, with kube's
// errors.
func (w *conversionWebhook) convert(ctx context.Context, objs []Object, apiVersion string) ([]Object, error) {
	var id [16]byte
	rand.Read(id[:])
	uid := hex.EncodeToString(id[:4]) + "-" + hex.EncodeToString(id[4:6]) + "-" + hex.EncodeToString(id[6:8]) + "-" + hex.EncodeToString(id[8:10]) + "-" + hex.EncodeToString(id[10:])
	body, err := json.Marshal(conversionReview{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview",
		Request: &conversionRequest{UID: uid, DesiredAPIVersion: apiVersion, Objects: objs}})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("an error on the server (%q) has prevented the request from succeeding", string(bytes.TrimSpace(b)))
	}
	var review conversionReview
	if err := json.Unmarshal(b, &review); err != nil {
		return nil, err
	}
	switch {
	case review.APIVersion != "apiextensions.k8s.io/v1" || review.Kind != "ConversionReview":
		return nil, fmt.Errorf("expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got %s, Kind=%s", review.APIVersion, review.Kind)
	case review.Response == nil:
		return nil, errors.New("no response provided")
	case review.Response.UID != uid:
		return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, review.Response.UID)
	case review.Response.Result.Status != "Success":
		if review.Response.Result.Message != "" {
			return nil, errors.New(review.Response.Result.Message)
		}
		return nil, fmt.Errorf("response.result.status was '%s', not 'Success'", review.Response.Result.Status)
	}
	return review.Response.ConvertedObjects, nil
}
