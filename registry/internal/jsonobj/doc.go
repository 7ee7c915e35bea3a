// Package jsonobj reads and writes API objects as JSON, exactly: Decode
// reads a request body (numbers as json.Number, with encoding/json's error
// texts, and with the duplicate fields kube's strict decoder reports);
// Encode writes kapi's stored form (apiVersion, kind and metadata first, no
// resourceVersion), into which AppendRV and WithRV splice the revision of
// a stored state without decoding it, and DecodeStored reads it back.
package jsonobj
