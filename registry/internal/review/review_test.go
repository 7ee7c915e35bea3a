package review

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestPost(t *testing.T) {
	for _, tc := range []struct {
		name    string
		code    int
		answer  string
		want    string
		wantErr string
	}{
		{name: "created", code: http.StatusCreated, answer: `{"status":"yes"}`, want: "yes"},
		{name: "ok", code: http.StatusOK, answer: `{"status":"fine"}`, want: "fine"},
		{name: "forbidden", code: http.StatusForbidden, answer: "no\n", wantErr: "answered 403 Forbidden: no"},
		{name: "garbage", code: http.StatusCreated, answer: "<html>", wantErr: "invalid character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
					t.Errorf("got %s with Content-Type %q", r.Method, r.Header.Get("Content-Type"))
				}
				w.WriteHeader(tc.code)
				fmt.Fprint(w, tc.answer)
			}))
			defer srv.Close()
			var out struct{ Status string }
			err := Post(context.Background(), srv.Client(), time.Second, srv.URL, map[string]string{"a": "b"}, &out)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || out.Status != tc.want {
				t.Fatalf("got %q, %v; want %q", out.Status, err, tc.want)
			}
		})
	}
}

func TestCacheExpiresAndStaysBounded(t *testing.T) {
	var c Cache[int]
	c.Put("gone", 1, time.Nanosecond)
	c.Put("kept", 2, time.Hour)
	c.Put("never", 3, 0)
	time.Sleep(time.Millisecond)
	for _, tc := range []struct {
		key  string
		want int
		ok   bool
	}{{"gone", 0, false}, {"kept", 2, true}, {"never", 0, false}} {
		if v, ok := c.Get(tc.key); v != tc.want || ok != tc.ok {
			t.Errorf("Get(%q) = %d, %v; want %d, %v", tc.key, v, ok, tc.want, tc.ok)
		}
	}
	for i := range 3 * MaxEntries {
		c.Put(fmt.Sprint(i), i, time.Hour)
		if len(c.m) > MaxEntries {
			t.Fatalf("after %d puts the cache holds %d entries, more than %d", i+1, len(c.m), MaxEntries)
		}
	}
}

func ExampleCache() {
	var c Cache[string]
	c.Put("token-sha", "alice", 10*time.Second)
	fmt.Println(c.Get("token-sha"))
	fmt.Println(c.Get("other"))
	// Output:
	// alice true
	//  false
}
