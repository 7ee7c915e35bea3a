// Package review sends the reviews kube's delegating authenticator and
// authorizer send — a TokenReview or SubjectAccessReview POSTed to the
// main API server — and caches their answers for a while.
//
// Cache bounds its memory, not its hit rate: past MaxEntries the expired
// entries go, and if none had expired, all of them. With MaxEntries 4096
// and a burst of 10,000 distinct tokens, the map never holds more than
// 4096 answers; the burst costs reviews, never memory.
package review
