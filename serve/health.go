package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Check is a named health check, as kube-apiserver's /livez and /readyz
// list them ("ping", "etcd", "informer-sync", …).
type Check struct {
	Name string
	// Check reports why the server is not healthy, or nil.
	Check func(ctx context.Context) error
}

// Ping is kube's "ping" check: healthy whenever the server answers.
var Ping = Check{Name: "ping", Check: func(context.Context) error { return nil }}

// errShuttingDown is the readyz "shutdown" check's failure.
var errShuttingDown = errors.New("serve: the server is shutting down")

// health serves kube's health endpoints for one name ("livez"): /NAME
// runs every check and answers "ok", or with ?verbose each check's line
// and "NAME check passed"; a failing check answers 500 with every line
// ("[-]etcd failed: reason withheld") and "NAME check failed", the reason
// going to the log only, as kube (the endpoint is public). ?exclude=CHECK
// skips a check. /NAME/CHECK runs one check: "ok", or 500 with its error.
type health struct {
	name   string
	checks []Check
	s      *Server
}

func (h *health) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	path := strings.Trim(req.URL.Path, "/")
	if one, ok := strings.CutPrefix(path, h.name+"/"); ok {
		for _, c := range h.checks {
			if c.Name == one {
				if err := c.Check(req.Context()); err != nil {
					http.Error(w, fmt.Sprintf("internal server error: %v", err), http.StatusInternalServerError)
					return
				}
				fmt.Fprint(w, "ok")
				return
			}
		}
		http.NotFound(w, req)
		return
	}
	excluded := map[string]bool{}
	for _, v := range req.URL.Query()["exclude"] {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				excluded[name] = true
			}
		}
	}
	var out strings.Builder
	var failed []string
	for _, c := range h.checks {
		if excluded[c.Name] {
			delete(excluded, c.Name)
			fmt.Fprintf(&out, "[+]%s excluded: ok\n", c.Name)
			continue
		}
		if err := c.Check(req.Context()); err != nil {
			fmt.Fprintf(&out, "[-]%s failed: reason withheld\n", c.Name)
			failed = append(failed, c.Name)
			h.s.log.Info(h.name+" check failed", "check", c.Name, "err", err)
			continue
		}
		fmt.Fprintf(&out, "[+]%s ok\n", c.Name)
	}
	if len(excluded) > 0 {
		var unknown []string
		for n := range excluded {
			unknown = append(unknown, fmt.Sprintf("%q", n))
		}
		fmt.Fprintf(&out, "warn: some health checks cannot be excluded: no matches for %s\n", strings.Join(unknown, ","))
	}
	if len(failed) > 0 {
		http.Error(w, fmt.Sprintf("%s%s check failed", out.String(), h.name), http.StatusInternalServerError)
		return
	}
	if _, ok := req.URL.Query()["verbose"]; !ok {
		fmt.Fprint(w, "ok")
		return
	}
	fmt.Fprintf(w, "%s%s check passed\n", out.String(), h.name)
}
