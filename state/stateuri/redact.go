package stateuri

import (
	"net/url"
	"strings"
)

// secretWords mark URI parameters whose values are never shown.
var secretWords = []string{"key", "secret", "token", "password", "passwd", "credential", "signature", "auth"}

// Redact hides credentials in a state URI for display (EXPLAIN, errors,
// logs, the TUI): user info and the values of parameters whose names
// mention a key, secret, token, password, passwd, credential, signature or auth
// become REDACTED. An unparsable URI is hidden whole.
func Redact(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return "(unparsable state URI hidden)"
	}
	changed := u.User != nil
	if changed {
		u.User = url.User("REDACTED")
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "(unparsable state URI hidden)"
	}
	for k := range q {
		lk := strings.ToLower(k)
		for _, w := range secretWords {
			if strings.Contains(lk, w) {
				q[k] = []string{"REDACTED"}
				changed = true
			}
		}
	}
	if !changed {
		return uri
	}
	u.RawQuery = strings.NewReplacer("%28", "(", "%29", ")", "%2C", ",", "%3A", ":", "%2F", "/").Replace(q.Encode())
	return u.String()
}
