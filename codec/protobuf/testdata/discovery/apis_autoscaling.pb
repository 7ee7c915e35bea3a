
autoscaling
autoscaling/v2v2
autoscaling/v1v1
autoscaling/v2v2