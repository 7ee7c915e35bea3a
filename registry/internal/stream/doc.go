// Package stream frames and batches the events of a watch stream: Frame
// writes one event in a format's framing (newline-separated JSON
// documents, length-prefixed protobuf frames, a CBOR sequence), and Queue
// holds a stream's frames, shared or its own, until they go out in one
// Write and one Flush. Which events a stream carries, and their objects'
// encodings, are the registry's.
package stream
