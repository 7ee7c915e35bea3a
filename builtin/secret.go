package builtin

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	stdmaps "maps"
	"slices"

	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry"
)

// Secrets: type defaults to Opaque; stringData is merged into data
// (base64) and dropped, as kube's conversion does; the keys a typed
// secret must hold; and immutable (a secret or configmap marked immutable
// keeps its data, and the mark).

func defaultSecret(_ context.Context, o registry.Object) error {
	m := obj(o)
	if t, _ := m["type"].(string); t == "" {
		m["type"] = "Opaque"
	}
	if sd := getMap(m, "stringData"); sd != nil {
		data := ensureMap(m, "data")
		for k, v := range sd {
			s, _ := v.(string)
			data[k] = base64.StdEncoding.EncodeToString([]byte(s))
		}
	}
	delete(m, "stringData")
	return nil
}

// secretKeys are the data keys each secret type requires.
var secretKeys = map[string][]string{
	"kubernetes.io/tls":              {"tls.crt", "tls.key"},
	"kubernetes.io/dockerconfigjson": {".dockerconfigjson"},
	"kubernetes.io/dockercfg":        {".dockercfg"},
	"kubernetes.io/basic-auth":       nil,
	"kubernetes.io/ssh-auth":         {"ssh-privatekey"},
}

func validateSecret(_ context.Context, o registry.Object) []registry.FieldError {
	data := getMap(obj(o), "data")
	errs := validateSecretContents(o)
	for _, k := range secretKeys[getString(obj(o), "type")] {
		if _, ok := data[k]; !ok {
			errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "data[" + k + "]"})
		}
	}
	return errs
}

// secretWarnings is kube's warningsForSecret: a TLS secret whose
// certificate and key do not make a key pair is stored, with a warning
// saying why.
func secretWarnings(_ context.Context, o registry.Object) []string {
	if getString(obj(o), "type") != "kubernetes.io/tls" {
		return nil
	}
	data := getMap(obj(o), "data")
	crt, _ := base64.StdEncoding.DecodeString(getString(data, "tls.crt"))
	key, _ := base64.StdEncoding.DecodeString(getString(data, "tls.key"))
	if _, err := tls.X509KeyPair(crt, key); err != nil {
		return []string{err.Error()}
	}
	return nil
}

func validateSecretUpdate(ctx context.Context, o, old registry.Object) []registry.FieldError {
	errs := validateSecret(ctx, o)
	if t, oldT := getString(obj(o), "type"), getString(obj(old), "type"); t != oldT {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "type", Value: t, Detail: "field is immutable"})
	}
	return append(errs, immutableData(o, old, "data")...)
}

// immutableData refuses changes to the data fields, and to the mark, of
// an object marked immutable (Secrets, ConfigMaps).
func immutableData(o, old registry.Object, fields ...string) []registry.FieldError {
	if was, _ := obj(old)["immutable"].(bool); !was {
		return nil
	}
	var errs []registry.FieldError
	if is, _ := obj(o)["immutable"].(bool); !is {
		errs = append(errs, registry.FieldError{Type: validation.TypeForbidden, Field: "immutable", Detail: "field is immutable when `immutable` is set"})
	}
	for _, f := range fields {
		if !equal(obj(o)[f], obj(old)[f]) {
			errs = append(errs, registry.FieldError{Type: validation.TypeForbidden, Field: f, Detail: "field is immutable when `immutable` is set"})
		}
	}
	return errs
}

// ConfigMapStrategy is kube's ConfigMap validation, for the registry's
// configmaps: data and binaryData keys are config keys, a key is in one of
// them only, and an immutable ConfigMap keeps its data, binaryData and
// immutable.
func ConfigMapStrategy() registry.Strategy {
	return registry.Strategy{
		ValidateCreate: func(_ context.Context, o registry.Object) []registry.FieldError { return configMapKeys(o) },
		ValidateUpdate: func(_ context.Context, o, old registry.Object) []registry.FieldError {
			return append(configMapKeys(o), immutableData(o, old, "data", "binaryData")...)
		},
	}
}

// ConfigMapColumns are kube's ConfigMap Table columns after NAME (its
// printer's): DATA, the number of data and binaryData entries, and AGE.
func ConfigMapColumns() []registry.Column {
	return []registry.Column{
		{Name: "Data", Type: "string", Description: "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
			Value: func(obj registry.Object) any {
				data, _ := obj["data"].(map[string]any)
				binary, _ := obj["binaryData"].(map[string]any)
				return int64(len(data) + len(binary))
			}},
		age,
	}
}

// configMapKeys checks a ConfigMap's data and binaryData keys.
func configMapKeys(o registry.Object) []registry.FieldError {
	var errs []registry.FieldError
	data, _ := o["data"].(map[string]any)
	binary, _ := o["binaryData"].(map[string]any)
	for _, k := range slices.Sorted(stdmaps.Keys(data)) {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "data[" + k + "]", Value: k, Detail: msg})
		}
		if _, ok := binary[k]; ok {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "data[" + k + "]", Value: k, Detail: "duplicate of key present in binaryData"})
		}
	}
	for _, k := range slices.Sorted(stdmaps.Keys(binary)) {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "binaryData[" + k + "]", Value: k, Detail: msg})
		}
	}
	return errs
}
