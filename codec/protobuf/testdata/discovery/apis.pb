
Z
apiregistration.k8s.io
apiregistration.k8s.io/v1v1
apiregistration.k8s.io/v1v1
$
apps
apps/v1v1
apps/v1v1
?
events.k8s.io
events.k8s.io/v1v1
events.k8s.io/v1v1
W
authentication.k8s.io
authentication.k8s.io/v1v1
authentication.k8s.io/v1v1
T
authorization.k8s.io
authorization.k8s.io/v1v1
authorization.k8s.io/v1v1
O
autoscaling
autoscaling/v2v2
autoscaling/v1v1
autoscaling/v2v2
'
batch
batch/v1v1
batch/v1v1
y
certificates.k8s.io
certificates.k8s.io/v1v1&
certificates.k8s.io/v1beta1v1beta1
certificates.k8s.io/v1v1
K
networking.k8s.io
networking.k8s.io/v1v1
networking.k8s.io/v1v1
*
policy
	policy/v1v1
	policy/v1v1
c
rbac.authorization.k8s.io"
rbac.authorization.k8s.io/v1v1"
rbac.authorization.k8s.io/v1v1
B
storage.k8s.io
storage.k8s.io/v1v1
storage.k8s.io/v1v1
Ð
admissionregistration.k8s.io%
admissionregistration.k8s.io/v1v1/
$admissionregistration.k8s.io/v1beta1v1beta11
%admissionregistration.k8s.io/v1alpha1v1alpha1%
admissionregistration.k8s.io/v1v1
T
apiextensions.k8s.io
apiextensions.k8s.io/v1v1
apiextensions.k8s.io/v1v1
™
scheduling.k8s.io
scheduling.k8s.io/v1v1$
scheduling.k8s.io/v1beta1v1beta1&
scheduling.k8s.io/v1alpha3v1alpha3
scheduling.k8s.io/v1v1
£
coordination.k8s.io
coordination.k8s.io/v1v1&
coordination.k8s.io/v1beta1v1beta1(
coordination.k8s.io/v1alpha2v1alpha2
coordination.k8s.io/v1v1
9
node.k8s.io
node.k8s.io/v1v1
node.k8s.io/v1v1
H
discovery.k8s.io
discovery.k8s.io/v1v1
discovery.k8s.io/v1v1
³
resource.k8s.io
resource.k8s.io/v1v1"
resource.k8s.io/v1beta2v1beta2"
resource.k8s.io/v1beta1v1beta1$
resource.k8s.io/v1alpha3v1alpha3
resource.k8s.io/v1v1
l
flowcontrol.apiserver.k8s.io%
flowcontrol.apiserver.k8s.io/v1v1%
flowcontrol.apiserver.k8s.io/v1v1
{
internal.apiserver.k8s.io.
"internal.apiserver.k8s.io/v1alpha1v1alpha1.
"internal.apiserver.k8s.io/v1alpha1v1alpha1
‰
storagemigration.k8s.io 
storagemigration.k8s.io/v1v1*
storagemigration.k8s.io/v1beta1v1beta1 
storagemigration.k8s.io/v1v1
`
lifecycle.k8s.io%
lifecycle.k8s.io/v1alpha1v1alpha1%
lifecycle.k8s.io/v1alpha1v1alpha1