package webhook_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/kapi-dev/kapi/registry/admission"
	"github.com/kapi-dev/kapi/registry/admission/webhook"
)

// A validating webhook that refuses ConfigMaps labelled color=blue, and
// the Dispatcher calling it.
func Example() {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review struct {
			Request struct {
				UID    string `json:"uid"`
				Object struct {
					Metadata struct {
						Labels map[string]string `json:"labels"`
					} `json:"metadata"`
				} `json:"object"`
			} `json:"request"`
		}
		_ = json.NewDecoder(r.Body).Decode(&review)
		resp := map[string]any{"uid": review.Request.UID, "allowed": review.Request.Object.Metadata.Labels["color"] != "blue"}
		if resp["allowed"] == false {
			resp["status"] = map[string]any{"code": 403, "message": "blue is not allowed"}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp})
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	d := webhook.New(webhook.Options{})
	defer d.Close()
	cfg, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"name": "no-blue"},
		"webhooks": []any{map[string]any{
			"name":                    "no-blue.example.com",
			"clientConfig":            map[string]any{"url": srv.URL + "/validate", "caBundle": ca},
			"rules":                   []any{map[string]any{"operations": []string{"CREATE"}, "apiGroups": []string{""}, "apiVersions": []string{"v1"}, "resources": []string{"configmaps"}}},
			"sideEffects":             "None",
			"admissionReviewVersions": []string{"v1"},
		}},
	})
	c, err := webhook.ParseConfiguration(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = d.Set(webhook.ValidatingKind, c)

	for _, color := range []string{"green", "blue"} {
		a := &admission.Attributes{Operation: admission.Create, Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "default", Name: "cm",
			Object: map[string]any{"metadata": map[string]any{"name": "cm", "labels": map[string]any{"color": color}}}}
		err := d.Validate(context.Background(), a)
		var denial *admission.Error
		if errors.As(err, &denial) {
			fmt.Println(color+":", denial.Code, denial.Message)
		} else {
			fmt.Println(color + ": admitted")
		}
	}
	// Output:
	// green: admitted
	// blue: 403 admission webhook "no-blue.example.com" denied the request: blue is not allowed
}
