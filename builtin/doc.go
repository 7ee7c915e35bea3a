// Package builtin serves Kubernetes' built-in kinds — pods, services,
// endpoints, secrets, serviceaccounts, events, persistentvolumeclaims,
// persistentvolumes, nodes, limitranges, resourcequotas,
// replicationcontrollers, podtemplates; apps/v1 deployments,
// statefulsets, replicasets, daemonsets, controllerrevisions; batch/v1
// jobs, cronjobs; autoscaling/v1 and v2 horizontalpodautoscalers;
// coordination.k8s.io/v1 leases; events.k8s.io/v1 events;
// discovery.k8s.io/v1 endpointslices; networking.k8s.io/v1 ingresses,
// ingressclasses, networkpolicies; policy/v1 poddisruptionbudgets;
// storage.k8s.io/v1 storageclasses, csidrivers, csinodes,
// csistoragecapacities, volumeattachments, volumeattributesclasses;
// node.k8s.io/v1 runtimeclasses; scheduling.k8s.io/v1 priorityclasses;
// certificates.k8s.io/v1 certificatesigningrequests —
// as kube-apiserver v1.37 serves them: one job, the kinds' definitions and
// strategies, registered on a registry.Registry with [Register] (or
// [Resources] for the definitions alone).
//
// # Where the kinds come from
//
// kapi's core module must not import k8s.io/*, and hand-copying several
// hundred Go types would drift. So the kinds are generated data, written
// by the generator module gen/builtin (its own go.mod, which imports
// k8s.io/api and k8s.io/kubernetes) and embedded here:
//
//	zz_generated_kinds.go   each kind's group, version, plural, singular,
//	                        scope, short names, categories, verbs and
//	                        subresources, from kube's committed discovery
//	                        documents (k8s.io/kubernetes api/discovery)
//	schemas.json.gz         every kind's schema and the ~330 definitions
//	                        they reach, from kube's committed OpenAPI v3
//	                        documents (api/openapi-spec/v3): descriptions
//	                        (kubectl explain prints kube's text), required
//	                        fields, patch strategies and merge keys
//	                        (strategic merge), list types and map keys
//	                        (server-side apply), map types, defaults
//	zz_generated_gostruct.go
//	                        the fields of kube's internal Go types
//	                        (k8s.io/kubernetes/pkg/apis/core, …) that
//	                        its validation messages print, in their
//	                        order, with the versioned field each is
//	                        converted from (gostruct.go renders stored
//	                        values as kube prints them; the test table
//	                        zz_generated_gostruct_test.go is kube's own
//	                        output for the same values)
//	codec/protobuf/proto/k8s.io/api/...
//	                        proto3 files of every message the kinds reach,
//	                        from k8s.io/api's Go types and their protobuf
//	                        tags (k8s.io/api's field numbers), compiled
//	                        into codec/protobuf's descriptor set by
//	                        `make proto`
//
// `make generate` rewrites them; gen/builtin's test fails when the
// committed files are stale. The schemas load on first use (a few
// milliseconds): definitions are shared *schema.Schema values, so PodSpec
// is one tree however many workloads hold it.
//
// # Behaviour
//
// Each kind's strategy does what kube's does on write, where controllers
// and users meet it (pod.go, workloads.go, service.go, secret.go; kube's
// validation messages in podspec.go, servicevalidation.go and
// validation.go; what kube's default admission plugins Priority and
// DefaultTolerationSeconds set, in the Prepare hooks, which run after
// managedFields as kube's admission does): the
// defaults of kube's SetDefaults_* functions and +default markers (the
// schemas' defaults), Pod status Pending with its QoS class, the Job's
// generated selector and controller-uid labels, Service clusterIP and
// nodePort allocation from [Options.ServiceCIDR], Secret stringData
// merged into data, quantities in kube's canonical form ("0.5" is stored
// "500m"; quantity.go), the immutable fields (Pod spec but images, workload
// selectors, Job selector and template, StatefulSet serviceName and
// claims, Service clusterIP, immutable Secrets), metadata.generation for
// the kinds kube keeps it, status written only through /status, a pod's
// graceful deletion (one bound to a node stays, with deletionTimestamp
// and its grace period, until a delete with gracePeriodSeconds=0, the
// kubelet's; an unscheduled or finished one goes at once), pods/binding
// as kube's direct storage write (registry.DirectWrite), a batch/v1
// Job's pods orphaned by a delete that names no propagation policy (with
// kube's Warning), a Job status write checked as kube 1.37's job status
// strategy checks it (a Complete job needs startTime, completionTime and
// SuccessCriteriaMet; the rules that read a changed field apply only
// when it changed: validateJobStatusUpdate). HorizontalPodAutoscalers are stored at autoscaling/v2
// and converted to v1 as kube converts them, what v1 cannot say kept in
// its annotations (hpaconvert.go); events.k8s.io Events are stored as
// core v1 Events, with them, and each group reads the other's
// (eventconvert.go). The storage and node kinds (storage.go) have kube
// 1.37's CSIDriver defaults and generation (none on create, one more per
// spec change), VolumeAttachment and CSINode status through /status
// alone, PUTs that must name a resourceVersion (kube's
// AllowUnconditionalUpdate false), and the errors kube 1.37 validates
// declaratively after its hand-written ones. CertificateSigningRequests
// (csr.go) record who asks, keep their spec, take approval conditions through /approval
// alone and the certificate through /status, with kube's PEM, signer and
// condition checks and the approve and sign authorization its admission
// plugins ask for (registry.Registry.Authorize). The
// conformance module compares the stored objects and 422 causes with the
// real kube-apiserver's on a corpus of objects; README lists what is not
// modelled.
package builtin
