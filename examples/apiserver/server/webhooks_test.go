package server

import (
	"context"
	"testing"

	"github.com/kapi-dev/kapi/registry/admission/webhook"
)

func TestLoopbackServices(t *testing.T) {
	port, path := int32(9443), "/validate-v1-configmap"
	for _, tt := range []struct {
		ref  webhook.ServiceReference
		want string
	}{
		{webhook.ServiceReference{Namespace: "system", Name: "webhooks"}, "https://127.0.0.1:443"},
		{webhook.ServiceReference{Namespace: "system", Name: "webhooks", Port: &port, Path: &path}, "https://127.0.0.1:9443/validate-v1-configmap"},
	} {
		u, err := LoopbackServices(context.Background(), tt.ref)
		if err != nil || u.String() != tt.want {
			t.Errorf("%+v: got %v, %v; want %s", tt.ref, u, err, tt.want)
		}
	}
}
