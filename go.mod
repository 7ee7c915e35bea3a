module github.com/kapi-dev/kapi

go 1.25

require (
	github.com/evanphx/json-patch/v5 v5.9.11
	github.com/google/btree v1.1.3
)
