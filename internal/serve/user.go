package serve

import "github.com/triage-dev/triage/model"

// User is a person the server let in: their name (what triaged_by records), their role and the fingerprint of the key they used.
type User struct {
	// Name is the person's name from the config ([serve.users.NAME]).
	Name string
	// Access is their role.
	Access model.Access
	// Key is the SHA256 fingerprint of the public key they authenticated with.
	Key string
}
