package durable

// The marker's reading and writing, for the tests of package durable_test.
var (
	ReadMarker  = readMarker
	WriteMarker = writeMarker
)
