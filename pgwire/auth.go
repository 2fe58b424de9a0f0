package pgwire

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/xdg-go/scram"
)

// scramIterations is the PBKDF2 cost of the SCRAM credentials the server
// derives at start (Postgres's default).
const scramIterations = 4096

// authenticator checks a client's password by the server's method.
type authenticator struct {
	method string
	// hashed are the users' names and passwords hashed, for cleartext
	// comparisons whose time does not depend on lengths or on which
	// user names exist (as server/auth.go compares HTTP credentials).
	hashed map[string][32]byte
	// creds are the users' SCRAM credentials; unknown is the
	// credentials a user who does not exist gets, so SCRAM fails for them
	// at the same step and in the same time as for a wrong password.
	creds   map[string]scram.StoredCredentials
	unknown scram.StoredCredentials
}

func newAuthenticator(users map[string]string, method string) (*authenticator, error) {
	a := &authenticator{method: method, hashed: map[string][32]byte{}, creds: map[string]scram.StoredCredentials{}}
	if len(users) == 0 {
		return a, nil
	}
	derive := func(user, pass string) (scram.StoredCredentials, error) {
		salt := make([]byte, 16)
		if _, err := rand.Read(salt); err != nil {
			return scram.StoredCredentials{}, fmt.Errorf("scram salt: %w", err)
		}
		c, err := scram.SHA256.NewClient(user, pass, "")
		if err != nil {
			return scram.StoredCredentials{}, fmt.Errorf("scram credentials of %q: %w", user, err)
		}
		return c.GetStoredCredentialsWithError(scram.KeyFactors{Salt: string(salt), Iters: scramIterations})
	}
	for u, p := range users {
		a.hashed[u] = sha256.Sum256([]byte(p))
		if method == AuthSCRAM {
			c, err := derive(u, p)
			if err != nil {
				return nil, err
			}
			a.creds[u] = c
		}
	}
	if method == AuthSCRAM {
		rnd := make([]byte, 32)
		if _, err := rand.Read(rnd); err != nil {
			return nil, fmt.Errorf("scram: %w", err)
		}
		c, err := derive("unknown", fmt.Sprintf("%x", rnd))
		if err != nil {
			return nil, err
		}
		a.unknown = c
	}
	return a, nil
}

// trusts reports whether the server has no users: every client is let in.
func (a *authenticator) trusts() bool { return len(a.hashed) == 0 }

// authenticate runs the password exchange with the client of be for
// user. A wrong password (or unknown user) is FATAL 28P01.
func (a *authenticator) authenticate(be *pgproto3.Backend, user string) error {
	failed := fatal(codeInvalidPassword, fmt.Sprintf("password authentication failed for user %q", user))
	if a.method == AuthPassword {
		be.Send(&pgproto3.AuthenticationCleartextPassword{})
		if err := be.Flush(); err != nil {
			return err
		}
		if err := be.SetAuthType(pgproto3.AuthTypeCleartextPassword); err != nil {
			return err
		}
		msg, err := be.Receive()
		if err != nil {
			return err
		}
		pm, ok := msg.(*pgproto3.PasswordMessage)
		if !ok {
			return protocolErrorf("expected password response, got %T", msg)
		}
		if !a.passwordMatches(user, pm.Password) {
			return failed
		}
		return nil
	}
	creds, known := a.creds[user]
	if !known {
		creds = a.unknown
	}
	// Postgres clients leave SCRAM's user name empty (the startup
	// message named the user), so the lookup answers for that user.
	srv, err := scram.SHA256.NewServer(func(string) (scram.StoredCredentials, error) { return creds, nil })
	if err != nil {
		return fmt.Errorf("scram server: %w", err)
	}
	conv := srv.NewConversation()
	be.Send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{"SCRAM-SHA-256"}})
	if err := be.Flush(); err != nil {
		return err
	}
	if err := be.SetAuthType(pgproto3.AuthTypeSASL); err != nil {
		return err
	}
	msg, err := be.Receive()
	if err != nil {
		return err
	}
	first, ok := msg.(*pgproto3.SASLInitialResponse)
	if !ok {
		return protocolErrorf("expected SASL response, got %T", msg)
	}
	if first.AuthMechanism != "SCRAM-SHA-256" {
		return protocolErrorf("SASL authentication mechanism %q not supported: use SCRAM-SHA-256", first.AuthMechanism)
	}
	serverFirst, err := conv.Step(string(first.Data))
	if err != nil {
		return failed
	}
	be.Send(&pgproto3.AuthenticationSASLContinue{Data: []byte(serverFirst)})
	if err := be.Flush(); err != nil {
		return err
	}
	if err := be.SetAuthType(pgproto3.AuthTypeSASLContinue); err != nil {
		return err
	}
	if msg, err = be.Receive(); err != nil {
		return err
	}
	final, ok := msg.(*pgproto3.SASLResponse)
	if !ok {
		return protocolErrorf("expected SASL response, got %T", msg)
	}
	serverFinal, err := conv.Step(string(final.Data))
	if err != nil || !conv.Valid() || !known {
		return failed
	}
	be.Send(&pgproto3.AuthenticationSASLFinal{Data: []byte(serverFinal)})
	return nil
}

// passwordMatches compares a cleartext password with every user's, in
// constant time.
func (a *authenticator) passwordMatches(user, pass string) bool {
	p := sha256.Sum256([]byte(pass))
	u := sha256.Sum256([]byte(user))
	match := 0
	for name, h := range a.hashed {
		n := sha256.Sum256([]byte(name))
		match |= subtle.ConstantTimeCompare(u[:], n[:]) & subtle.ConstantTimeCompare(p[:], h[:])
	}
	return match == 1
}
