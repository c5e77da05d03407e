package models

import "strings"

// maxKeyLength bounds what is hashed and looked up; real keys are 64 characters.
const maxKeyLength = 256

// maxTokenLength bounds a session token; real ones are under 400 characters.
const maxTokenLength = 4096

// Credential is what an Authorization value holds: "ApiKey <key>" (a backend) or
// "Bearer <session token>" (a browser). It comes from the HTTP header, or from a
// WebSocket's connection_init payload, which browsers send instead of headers.
type Credential struct {
	APIKey, Token string
}

// ParseCredential reads an Authorization value. Scheme words match case-insensitively,
// as HTTP auth schemes do.
func ParseCredential(h string) (Credential, error) {
	if h == "" {
		return Credential{}, Errorf(EUNAUTHORIZED, "API key or session token required: send Authorization: ApiKey <key> or Bearer <token>")
	}
	scheme, value, ok := strings.Cut(h, " ")
	value = strings.TrimSpace(value)
	valid := ok && value != "" && !strings.ContainsAny(value, " \t")
	switch {
	case strings.EqualFold(scheme, "ApiKey") && valid && len(value) <= maxKeyLength:
		return Credential{APIKey: value}, nil
	case strings.EqualFold(scheme, "Bearer") && valid && len(value) <= maxTokenLength:
		return Credential{Token: value}, nil
	case strings.EqualFold(scheme, "Bearer"):
		return Credential{}, Errorf(EUNAUTHORIZED, "session token is malformed: send Authorization: Bearer <token>")
	}
	return Credential{}, Errorf(EUNAUTHORIZED, "Authorization header must be: ApiKey <key> or Bearer <token>")
}
