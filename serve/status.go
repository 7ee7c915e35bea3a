package serve

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// status is a metav1.Status, the body of the responses the server makes
// itself (429, 504, a bad timeout), as the registry makes its own.
type status struct {
	Kind       string         `json:"kind"`
	APIVersion string         `json:"apiVersion"`
	Metadata   struct{}       `json:"metadata"`
	Status     string         `json:"status"`
	Message    string         `json:"message"`
	Reason     string         `json:"reason"`
	Details    *statusDetails `json:"details,omitempty"`
	Code       int            `json:"code"`
}

type statusDetails struct {
	RetryAfterSeconds int `json:"retryAfterSeconds,omitempty"`
}

// writeStatus answers with a failure Status; retryAfter > 0 sets
// Retry-After too.
func writeStatus(w http.ResponseWriter, code int, reason, message string, retryAfter int) {
	s := status{Kind: "Status", APIVersion: "v1", Status: "Failure", Message: message, Reason: reason, Code: code}
	if retryAfter > 0 {
		s.Details = &statusDetails{RetryAfterSeconds: retryAfter}
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	b, _ := json.Marshal(s)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	w.Write(b)
}
