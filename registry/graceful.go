package registry

import (
	"context"
	"time"
)

// Graceful deletion is kube's rest.BeforeDelete for a kind with a
// graceful delete strategy (pods): the kind's Strategy.GracePeriod
// turns the grace period a DELETE asks for into the object's, and the
// delete first writes deletionTimestamp (now + period) and
// deletionGracePeriodSeconds (period), bumping metadata.generation. With
// a period of 0 the object is then removed at once, and the DELETE
// answers that marked state at the delete's revision; with more, the
// object stays until a delete with a shorter period (the kubelet's, with
// 0) removes it. A delete of an object already being deleted may only
// shorten its period.
//
// Worked example: a pod bound to a node, terminationGracePeriodSeconds
// 30, deleted at 12:00:00 with no options: stored with deletionTimestamp
// 12:00:30 and deletionGracePeriodSeconds 30, answered 200 with that
// state. Deleted again at 12:00:10 with gracePeriodSeconds=5: the
// timestamp moves to 12:00:05, before now, so to 12:00:10 with a period
// of 1 (still graceful). Deleted again with gracePeriodSeconds=0: gone.
// An unscheduled pod's period is 0: marked, then removed in one DELETE.

// grace is what a delete does to an object of a graceful kind.
type grace struct {
	// graceful: the delete stores deletionTimestamp and
	// deletionGracePeriodSeconds set to timestamp and period.
	graceful  bool
	period    int64
	timestamp string
	// pending: the object is being deleted with a period no longer than
	// the one asked: the delete changes nothing and answers it.
	pending bool
}

// deletionGrace is kube's BeforeDelete for obj, the stored object. The
// namespace finalizer's deletes (o.emptying) are not graceful: kapi runs
// no kubelet that would end a graceful one.
func (r *Registry) deletionGrace(ctx context.Context, res *Resource, obj Object, o deleteOptions) grace {
	if res.Strategy.GracePeriod == nil || o.emptying {
		return grace{}
	}
	requested := o.gracePeriod
	if requested != nil && *requested < 0 {
		one := int64(1) // negative periods count as 1s on the delete path
		requested = &one
	}
	now := r.opts.Now().UTC().Truncate(time.Second)
	if obj.deleting() {
		cur := intAt(obj, "metadata.deletionGracePeriodSeconds")
		if cur < 0 {
			cur = 1
		}
		if cur == 0 {
			return grace{} // a graceful delete that did not finish: remove it now
		}
		if requested == nil || *requested >= cur {
			return grace{pending: true}
		}
		ts, err := time.Parse(time.RFC3339, obj.metaString("deletionTimestamp"))
		if err != nil {
			ts = now
		}
		period := *requested
		next := ts.Add(time.Duration(period-cur) * time.Second)
		if next.Before(now) {
			next = now
			if period != 0 {
				period = 1
			}
		}
		return grace{graceful: true, period: period, timestamp: next.Format(time.RFC3339)}
	}
	period := res.Strategy.GracePeriod(ctx, obj, requested)
	return grace{graceful: true, period: period, timestamp: now.Add(time.Duration(period) * time.Second).Format(time.RFC3339)}
}
