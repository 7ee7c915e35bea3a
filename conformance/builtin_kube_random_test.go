package conformance

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
)

// randomCorpus is a seeded corpus of valid objects with random shapes
// (pods, deployments, services, jobs, statefulsets, daemonsets, cronjobs,
// secrets) —
// containers, tags and digests, ports with and without protocols, probes,
// volumes, resources as strings and numbers, service types and ports, job
// parallelism — written through kapi and kube-apiserver like
// builtinCorpus, so that defaults and canonical forms are compared on
// more than the hand-written cases.
func randomCorpus(seed uint64, n int) []struct{ name, resource, body string } {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	pick := func(xs ...any) any { return xs[r.IntN(len(xs))] }
	quantity := func() any {
		return pick("100m", "0.5", 0.25, "1", 2, "1500m", "128Mi", "1Gi", "1.5Gi", "2000", "1e3", "512Ki")
	}
	container := func(i int) map[string]any {
		c := map[string]any{"name": fmt.Sprintf("c%d", i), "image": pick("nginx", "nginx:latest", "nginx:1.27", "registry:5000/app:v1", "busybox@sha256:"+fmt.Sprintf("%064d", i))}
		if r.IntN(2) == 0 {
			var ports []any
			for j := range r.IntN(3) + 1 {
				p := map[string]any{"containerPort": 80 + 10*j + i}
				if r.IntN(2) == 0 {
					p["protocol"] = pick("TCP", "UDP")
				}
				if r.IntN(2) == 0 {
					p["name"] = fmt.Sprintf("p%d-%d", i, j)
				}
				ports = append(ports, p)
			}
			c["ports"] = ports
		}
		if r.IntN(2) == 0 {
			res := map[string]any{}
			for _, kind := range []string{"requests", "limits"} {
				if r.IntN(2) == 0 {
					q := quantity()
					res[kind] = map[string]any{"memory": "1Gi", "cpu": q}
				}
			}
			if req, ok := res["requests"].(map[string]any); ok {
				if lim, ok := res["limits"].(map[string]any); ok {
					lim["cpu"] = req["cpu"] // requests within limits
				}
			}
			c["resources"] = res
		}
		if r.IntN(3) == 0 {
			c["readinessProbe"] = pick(map[string]any{"httpGet": map[string]any{"port": 80}}, map[string]any{"tcpSocket": map[string]any{"port": "http"}, "periodSeconds": 5},
				map[string]any{"exec": map[string]any{"command": []any{"true"}}})
		}
		if r.IntN(3) == 0 {
			c["env"] = []any{map[string]any{"name": "A", "value": "b"}, map[string]any{"name": "POD", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.name"}}}}
		}
		return c
	}
	podSpec := func(restart string) map[string]any {
		var cs []any
		for i := range r.IntN(3) + 1 {
			cs = append(cs, container(i))
		}
		spec := map[string]any{"containers": cs}
		if restart != "" {
			spec["restartPolicy"] = restart
		}
		if r.IntN(2) == 0 {
			spec["volumes"] = []any{pick(map[string]any{"name": "v", "emptyDir": map[string]any{}}, map[string]any{"name": "v", "configMap": map[string]any{"name": "cm"}},
				map[string]any{"name": "v", "secret": map[string]any{"secretName": "s", "defaultMode": 256}}, map[string]any{"name": "v", "hostPath": map[string]any{"path": "/tmp"}},
				map[string]any{"name": "v"})}
		}
		if r.IntN(3) == 0 {
			spec["terminationGracePeriodSeconds"] = r.IntN(60)
		}
		return spec
	}
	var out []struct{ name, resource, body string }
	add := func(kind, resource string, obj map[string]any) {
		b, _ := json.Marshal(obj)
		out = append(out, struct{ name, resource, body string }{fmt.Sprintf("random %s %d", kind, len(out)), resource, string(b)})
	}
	for i := range n {
		name := fmt.Sprintf("r%d", i)
		labels := map[string]any{"app": name}
		switch i % 8 {
		case 0:
			add("pod", "/v1/pods", map[string]any{"metadata": map[string]any{"name": name}, "spec": podSpec(pick("", "Always", "Never", "OnFailure").(string))})
		case 1:
			spec := map[string]any{"selector": map[string]any{"matchLabels": labels}, "template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": podSpec("")}}
			if r.IntN(2) == 0 {
				spec["replicas"] = r.IntN(5)
			}
			add("deployment", "apps/v1/deployments", map[string]any{"metadata": map[string]any{"name": name}, "spec": spec})
		case 2:
			var ports []any
			for j := range r.IntN(3) + 1 {
				p := map[string]any{"port": 80 + j, "name": fmt.Sprintf("p%d", j)}
				if r.IntN(2) == 0 {
					p["targetPort"] = pick(8080+j, fmt.Sprintf("http%d", j))
				}
				ports = append(ports, p)
			}
			add("service", "/v1/services", map[string]any{"metadata": map[string]any{"name": name}, "spec": map[string]any{"type": pick("ClusterIP", "NodePort", "LoadBalancer"), "selector": labels, "ports": ports}})
		case 3:
			spec := map[string]any{"template": map[string]any{"spec": podSpec(pick("Never", "OnFailure").(string))}}
			if r.IntN(2) == 0 {
				spec["parallelism"] = r.IntN(3) + 1
			}
			if r.IntN(2) == 0 {
				spec["completions"] = r.IntN(3) + 1
			}
			add("job", "batch/v1/jobs", map[string]any{"metadata": map[string]any{"name": name}, "spec": spec})
		case 4:
			spec := map[string]any{"selector": map[string]any{"matchLabels": labels}, "serviceName": pick("", "db").(string),
				"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": podSpec("")}}
			if r.IntN(2) == 0 {
				spec["podManagementPolicy"] = "Parallel"
			}
			if r.IntN(2) == 0 {
				spec["updateStrategy"] = pick(map[string]any{"type": "OnDelete"}, map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": 1}})
			}
			add("statefulset", "apps/v1/statefulsets", map[string]any{"metadata": map[string]any{"name": name}, "spec": spec})
		case 5:
			spec := map[string]any{"selector": map[string]any{"matchLabels": labels}, "template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": podSpec("")}}
			if r.IntN(2) == 0 {
				spec["updateStrategy"] = pick(map[string]any{"type": "OnDelete"}, map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxUnavailable": "10%"}})
			}
			add("daemonset", "apps/v1/daemonsets", map[string]any{"metadata": map[string]any{"name": name}, "spec": spec})
		case 6:
			spec := map[string]any{"schedule": pick("@hourly", "*/5 * * * *", "0 0 * * *"), "jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": podSpec("Never")}}}}
			if r.IntN(2) == 0 {
				spec["concurrencyPolicy"] = pick("Forbid", "Replace")
			}
			add("cronjob", "batch/v1/cronjobs", map[string]any{"metadata": map[string]any{"name": name}, "spec": spec})
		case 7:
			sec := map[string]any{"metadata": map[string]any{"name": name}}
			switch r.IntN(3) {
			case 0:
				sec["stringData"] = map[string]any{"user": "admin", "k": fmt.Sprint(r.IntN(1000))}
			case 1:
				sec["type"], sec["data"] = "kubernetes.io/basic-auth", map[string]any{"username": "YQ==", "password": "Yg=="}
			default:
				sec["data"], sec["stringData"] = map[string]any{"a": "Yg=="}, map[string]any{"a": "override"}
			}
			add("secret", "/v1/secrets", sec)
		}
	}
	return out
}

// The random corpus beside kube-apiserver (see TestBuiltinKindsAsKube).
func TestBuiltinRandomCorpusAsKube(t *testing.T) {
	cases := randomCorpus(21, 120)
	compareWithKube(t, "random-corpus", len(cases), func(i int) (name, resource, body, update string) {
		return cases[i].name, cases[i].resource, cases[i].body, ""
	})
}
