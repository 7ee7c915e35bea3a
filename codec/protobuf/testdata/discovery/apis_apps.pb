
apps
apps/v1v1
apps/v1v1