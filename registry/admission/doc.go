// Package admission is the admission stage of the registry's write
// pipeline: the hooks that see, change (mutating) and accept or deny
// (validating) every write before it is stored, with the semantics of
// kube-apiserver's admission chain (k8s.io/apiserver/pkg/admission).
//
// The registry calls a Chain for every write it makes, the ones it makes
// on its own behalf included (the garbage collector, namespace
// finalization): mutating hooks first, with the decoded request object,
// then — after the resource's strategy and validation — validating hooks,
// with the object as it is about to be stored. A hook's plain error
// denies the write with kube's 403 ("<resource> \"<name>\" is forbidden:
// <message>"); an *Error chooses its own code and reason. A dry-run
// request runs every hook that handles it, except that a hook with side
// effects makes it fail (400), as kube answers for webhooks.
//
// Hooks are called concurrently, from the goroutines of concurrent
// writes, and must be safe for that. An update's hooks run once per
// storage attempt (a conflict retries with the newly stored object, as
// kube's admission inside GuaranteedUpdate), so they should not count on
// being called once per request.
//
// Webhooks are one more implementation of Mutator and Validator.
package admission
