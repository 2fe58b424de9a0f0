package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
)

// authenticate requires HTTP Basic credentials from Options.Users on
// every endpoint but /healthcheck, which load balancers probe without
// credentials. Without users it lets everything through.
func (s *Server) authenticate(next http.Handler) http.Handler {
	if len(s.opts.Users) == 0 {
		return next
	}
	// Hashing both sides gives equal-length inputs, so the comparison
	// takes the same time whatever the lengths; every user is compared,
	// so the time does not tell which user names exist.
	type cred struct{ user, pass [32]byte }
	creds := make([]cred, 0, len(s.opts.Users))
	for u, p := range s.opts.Users {
		creds = append(creds, cred{sha256.Sum256([]byte(u)), sha256.Sum256([]byte(p))})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthcheck" {
			next.ServeHTTP(w, r)
			return
		}
		user, pass, ok := r.BasicAuth()
		if ok {
			u, p := sha256.Sum256([]byte(user)), sha256.Sum256([]byte(pass))
			match := 0
			for _, c := range creds {
				match |= subtle.ConstantTimeCompare(u[:], c.user[:]) & subtle.ConstantTimeCompare(p[:], c.pass[:])
			}
			if match == 1 {
				next.ServeHTTP(w, r)
				return
			}
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="sluice", charset="UTF-8"`)
		genericError(w, http.StatusUnauthorized, codeUnauthorized, "Unauthorized")
	})
}
